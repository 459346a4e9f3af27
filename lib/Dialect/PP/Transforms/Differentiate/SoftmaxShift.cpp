//===- SoftmaxShift.cpp - the max a softmax subtracts ---------------------===//
//
// The pattern, op by op, as PyTorch's softmax and linalg.softmax decompose:
//   s = x - m              (m broadcast along the row; or e = exp(x - m))
//   e = exp(s)
//   r = sum_row e          (from zero, over exactly the loops m omits)
//   p = e / r              (r broadcast as m is)
// with no other use of s, e or r; or, as PyTorch's log_softmax (and so its
// cross-entropy) decomposes:
//   m = max_row x          (x read as is, over exactly the loops m omits)
//   s = x - m              (x read as is, m broadcast along the row)
//   e = exp(s)             (the only exp of s, whose only use is r)
//   r = sum_row e          (from zero, over the same loops; only use l)
//   l = log(r)
//   y = s - l              (l broadcast as m is)
// with no other use of s or l.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Differentiate/SoftmaxShift.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// Whether `user` is `UnaryOp(in)` elementwise, its only input `in` read as
/// is.
template <typename UnaryOp>
static bool isElementwise(Operation *user, Value in) {
  auto op = dyn_cast<linalg::LinalgOp>(user);
  if (!op)
    return false;
  auto unary = dyn_cast_or_null<UnaryOp>(elementwiseBody(op));
  return unary && op.getNumDpsInputs() == 1 &&
         readsAs(op, 0, in,
                 op.getIndexingMapMatchingResult(op->getResult(0))) &&
         unary.getOperand() == op.getBlock()->getArgument(0);
}

/// Whether `op` folds its only input `in`, read as is, by `CombineOp` into
/// a filled output indexed by `rowMap`, over exactly the loops `rowMap`
/// omits: the filled value is returned (null if not).
template <typename... CombineOp>
static Value rowReductionStart(linalg::LinalgOp op, Value in,
                               AffineMap rowMap) {
  if (op->getNumResults() != 1 || op.getNumDpsInputs() != 1 ||
      !op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity() ||
      op.getDpsInputs()[0] != in ||
      op.getIndexingMapMatchingResult(op->getResult(0)) != rowMap)
    return Value();
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if ((type == utils::IteratorType::reduction) ==
        rowMap.isFunctionOfDim(loop))
      return Value();
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  Operation *combine =
      op.getBlock()->getTerminator()->getOperand(0).getDefiningOp();
  if (!fill || !isa_and_nonnull<CombineOp...>(combine))
    return Value();
  Block *body = op.getBlock();
  Value lhs = combine->getOperand(0), rhs = combine->getOperand(1);
  bool combinesArgs =
      (lhs == body->getArgument(0) && rhs == body->getArgument(1)) ||
      (lhs == body->getArgument(1) && rhs == body->getArgument(0));
  return combinesArgs ? fill.value() : Value();
}

/// Whether `op` sums its only input `e` from zero over the loops `rowMap`
/// omits, into an output indexed by `rowMap`.
static bool isRowSum(linalg::LinalgOp op, Value e, AffineMap rowMap) {
  Value start = rowReductionStart<arith::AddFOp>(op, e, rowMap);
  return start && matchPattern(start, m_AnyZeroFloat());
}

/// Whether `m` is the max of `x` over the loops `rowMap` omits, into an
/// output indexed by `rowMap`: the row the sum of a log-softmax runs over.
/// The max may have its unit dimensions (PyTorch's `keepdim`) inserted
/// where `rowMap` reads constant zeros.
static bool isRowMax(Value m, Value x, AffineMap rowMap) {
  if (auto expand = m.getDefiningOp<tensor::ExpandShapeOp>()) {
    llvm::SmallBitVector zeros(rowMap.getNumResults());
    SmallVector<int64_t> kept;
    for (auto [i, expr] : llvm::enumerate(rowMap.getResults())) {
      auto constant = dyn_cast<AffineConstantExpr>(expr);
      zeros[i] = constant && constant.getValue() == 0 &&
                 expand.getResultType().getDimSize(i) == 1;
      if (!zeros[i])
        kept.push_back(expand.getResultType().getDimSize(i));
    }
    if (ArrayRef(kept) != expand.getSrcType().getShape())
      return false;
    m = expand.getSrc();
    rowMap = rowMap.dropResults(zeros);
  }
  auto op = m.getDefiningOp<linalg::LinalgOp>();
  return op &&
         rowReductionStart<arith::MaximumFOp, arith::MaxNumFOp>(op, x, rowMap);
}

/// Whether `user` is `a BinaryOp r` elementwise, `r` broadcast by `rowMap`.
template <typename BinaryOp>
static bool isRowwise(Operation *user, Value a, Value r, AffineMap rowMap) {
  auto op = dyn_cast<linalg::LinalgOp>(user);
  if (!op)
    return false;
  auto binary = dyn_cast_or_null<BinaryOp>(elementwiseBody(op));
  AffineMap identity = op.getIndexingMapMatchingResult(op->getResult(0));
  Block *body = op.getBlock();
  return binary && op.getNumDpsInputs() == 2 && readsAs(op, 0, a, identity) &&
         readsAs(op, 1, r, rowMap) && binary.getLhs() == body->getArgument(0) &&
         binary.getRhs() == body->getArgument(1);
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
    return isRowwise<arith::DivFOp>(user, e, r, rowMap);
  };
  return llvm::all_of(r.getUsers(), isQuotient) &&
         llvm::all_of(e.getUsers(), [&](Operation *user) {
           return user == r.getDefiningOp() || isQuotient(user);
         });
}

/// Whether the shifted scores `s` reach the loss only through
/// `s - log(sum_row exp(s))`: one exp of `s` feeding one sum from zero over
/// the row, whose log only the differences use, and nothing else.
static bool logNormalisedByRow(Value s, AffineMap rowMap,
                               function_ref<bool(Value)> escapes) {
  auto isExp = [&](Operation *user) {
    return isElementwise<math::ExpOp>(user, s);
  };
  if (llvm::count_if(s.getUsers(), isExp) != 1)
    return false;
  Operation *exp = *llvm::find_if(s.getUsers(), isExp);
  Value e = exp->getResult(0);
  if (!e.hasOneUse())
    return false;
  auto sum = dyn_cast<linalg::LinalgOp>(*e.getUsers().begin());
  if (!sum || !isRowSum(sum, e, rowMap) || !sum->getResult(0).hasOneUse())
    return false;
  Value r = sum->getResult(0);
  Operation *log = *r.getUsers().begin();
  if (!isElementwise<math::LogOp>(log, r))
    return false;
  Value l = log->getResult(0);
  if (l.use_empty() || escapes(e) || escapes(r) || escapes(l))
    return false;
  auto isDifference = [&](Operation *user) {
    return isRowwise<arith::SubFOp>(user, s, l, rowMap);
  };
  return llvm::all_of(l.getUsers(), isDifference) &&
         llvm::all_of(s.getUsers(), [&](Operation *user) {
           return user == exp || isDifference(user);
         });
}

/// Whether `op` computes `x - m` with `x` read as is and `m` its row max
/// (so the difference's row is the max's).
static bool subtractsRowMax(linalg::LinalgOp op, OpOperand &shift,
                            AffineMap rowMap) {
  if (op.getNumDpsInputs() != 2)
    return false;
  OpOperand *x = op.getDpsInputOperand(op.getDpsInputOperand(0) == &shift);
  auto sub = cast<arith::SubFOp>(elementwiseBody(op));
  return op.getMatchingIndexingMap(x).isIdentity() &&
         sub.getLhs() == op.getMatchingBlockArgument(x) &&
         isRowMax(shift.get(), x->get(), rowMap);
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
    if (escapes(e))
      return false;
    if (subtractsRowMax(op, shift, rowMap) &&
        logNormalisedByRow(e, rowMap, escapes))
      return true;
    if (!e.hasOneUse() || !isElementwise<math::ExpOp>(*e.getUsers().begin(), e))
      return false;
    e = e.getUsers().begin()->getResult(0);
  }
  return normalisedByRow(e, rowMap, escapes);
}
