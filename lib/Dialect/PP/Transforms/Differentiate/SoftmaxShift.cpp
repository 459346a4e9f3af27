//===- SoftmaxShift.cpp - the max a softmax subtracts ---------------------===//
//
// The pattern, op by op, as PyTorch's softmax and linalg.softmax decompose:
//   s = x - m              (m broadcast along the row; or e = exp(x - m))
//   e = exp(s)
//   r = sum_row e          (from zero, over exactly the loops m omits)
//   p = e / r              (r broadcast as m is)
// with no other use of s, e or r.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Differentiate/SoftmaxShift.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

/// The op that `op`'s only result yields, when `op` is elementwise over an
/// output indexed by the identity; null otherwise.
static Operation *elementwiseBody(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || op.getNumReductionLoops() != 0 ||
      !op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity())
    return nullptr;
  return op.getBlock()->getTerminator()->getOperand(0).getDefiningOp();
}

/// Whether operand `index` of `op` is `value` indexed by `map`.
static bool readsAs(linalg::LinalgOp op, unsigned index, Value value,
                    AffineMap map) {
  OpOperand *operand = op.getDpsInputOperand(index);
  return operand->get() == value && op.getMatchingIndexingMap(operand) == map;
}

/// Whether `op` is `exp(s)` elementwise, its only input `s` read as is.
static bool isExpOf(linalg::LinalgOp op, Value s) {
  auto exp = dyn_cast_or_null<math::ExpOp>(elementwiseBody(op));
  return exp && op.getNumDpsInputs() == 1 &&
         readsAs(op, 0, s, op.getIndexingMapMatchingResult(op->getResult(0))) &&
         exp.getOperand() == op.getBlock()->getArgument(0);
}

/// Whether `op` sums its only input `e` from zero over the loops `rowMap`
/// omits, into an output indexed by `rowMap`.
static bool isRowSum(linalg::LinalgOp op, Value e, AffineMap rowMap) {
  if (op->getNumResults() != 1 || op.getNumDpsInputs() != 1 ||
      !op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity() ||
      op.getDpsInputs()[0] != e ||
      op.getIndexingMapMatchingResult(op->getResult(0)) != rowMap)
    return false;
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if ((type == utils::IteratorType::reduction) ==
        rowMap.isFunctionOfDim(loop))
      return false;
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
    return false;
  auto add = dyn_cast_or_null<arith::AddFOp>(
      op.getBlock()->getTerminator()->getOperand(0).getDefiningOp());
  Block *body = op.getBlock();
  return add && ((add.getLhs() == body->getArgument(0) &&
                  add.getRhs() == body->getArgument(1)) ||
                 (add.getLhs() == body->getArgument(1) &&
                  add.getRhs() == body->getArgument(0)));
}

/// Whether `op` is `e / r` elementwise, `r` broadcast by `rowMap`.
static bool isRowDivision(Operation *user, Value e, Value r, AffineMap rowMap) {
  auto op = dyn_cast<linalg::LinalgOp>(user);
  if (!op)
    return false;
  auto div = dyn_cast_or_null<arith::DivFOp>(elementwiseBody(op));
  AffineMap identity = op.getIndexingMapMatchingResult(op->getResult(0));
  Block *body = op.getBlock();
  return div && op.getNumDpsInputs() == 2 && readsAs(op, 0, e, identity) &&
         readsAs(op, 1, r, rowMap) && div.getLhs() == body->getArgument(0) &&
         div.getRhs() == body->getArgument(1);
}

/// Whether the exps `e` reach the loss only through `e / sum_row e`.
static bool normalisedByRow(Value e, AffineMap rowMap,
                            function_ref<bool(Value)> escapes) {
  Value r;
  for (Operation *user : e.getUsers()) {
    auto sum = dyn_cast<linalg::LinalgOp>(user);
    if (!sum || !isRowSum(sum, e, rowMap))
      continue;
    if (r)
      return false;
    r = sum->getResult(0);
  }
  if (!r || r.use_empty() || escapes(e) || escapes(r))
    return false;
  auto isQuotient = [&](Operation *user) {
    return isRowDivision(user, e, r, rowMap);
  };
  return llvm::all_of(r.getUsers(), isQuotient) &&
         llvm::all_of(e.getUsers(), [&](Operation *user) {
           return user == r.getDefiningOp() || isQuotient(user);
         });
}

bool mlir::pp::isSoftmaxShift(linalg::LinalgOp op, OpOperand &shift,
                              function_ref<bool(Value)> escapes) {
  Operation *yielded = elementwiseBody(op);
  if (!yielded || !op.isDpsInput(&shift) ||
      llvm::count(op->getOperands(), shift.get()) != 1)
    return false;
  // m is constant along the row: its map omits the row's loops.
  AffineMap rowMap = op.getMatchingIndexingMap(&shift);
  if (!rowMap.isProjectedPermutation(/*allowZeroInResults=*/true) ||
      llvm::all_of(llvm::seq(op.getNumLoops()),
                   [&](unsigned loop) { return rowMap.isFunctionOfDim(loop); }))
    return false;
  auto exp = dyn_cast<math::ExpOp>(yielded);
  auto sub = dyn_cast_or_null<arith::SubFOp>(
      exp ? exp.getOperand().getDefiningOp() : yielded);
  BlockArgument m = op.getMatchingBlockArgument(&shift);
  if (!sub || sub.getRhs() != m || !m.hasOneUse() || (exp && !sub->hasOneUse()))
    return false;
  Value e = op->getResult(0);
  if (!exp) {
    if (!e.hasOneUse() || escapes(e))
      return false;
    auto next = dyn_cast<linalg::LinalgOp>(*e.getUsers().begin());
    if (!next || !isExpOf(next, e))
      return false;
    e = next->getResult(0);
  }
  return normalisedByRow(e, rowMap, escapes);
}
