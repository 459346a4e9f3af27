//===- SplitMicrobatches.cpp - run a training step on one micro-batch -----===//
//
// Divides the batch dimension of a training step by the number of
// micro-batches and propagates the new shape through its linalg ops.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/Dialect/PP/Transforms/TrainingStep.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSPLITMICROBATCHES
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {

/// Tracks which dimension of each tensor value is the batch dimension.
class BatchShapeRewriter {
public:
  explicit BatchShapeRewriter(int64_t numMicrobatches)
      : numMicrobatches(numMicrobatches) {}

  LogicalResult run(func::FuncOp func);

private:
  LogicalResult splitValue(Value value, unsigned dim);
  LogicalResult visitLinalgOp(linalg::LinalgOp op);
  Value freshInit(OpBuilder &builder, Value init, RankedTensorType type);

  int64_t numMicrobatches;
  DenseMap<Value, unsigned> batchDim;
};

} // namespace

/// Gives `value` the micro-batch shape, its batch dimension being `dim`.
LogicalResult BatchShapeRewriter::splitValue(Value value, unsigned dim) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() <= dim || type.isDynamicDim(dim))
    return emitError(value.getLoc(), "batch data must be a ranked tensor with "
                                     "a static batch dimension, got ")
           << value.getType();
  if (type.getDimSize(dim) % numMicrobatches != 0)
    return emitError(value.getLoc(), "batch dimension of size ")
           << type.getDimSize(dim) << " is not divisible into "
           << numMicrobatches << " micro-batches";
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= numMicrobatches;
  value.setType(type.clone(shape));
  batchDim[value] = dim;
  return success();
}

/// Re-creates, at micro-batch shape, a value computed without batch data: a
/// tensor.empty, or a single-result linalg op (a fill or a broadcast of a
/// weight) whose destination can itself be re-created.
Value BatchShapeRewriter::freshInit(OpBuilder &builder, Value init,
                                    RankedTensorType type) {
  Operation *def = init.getDefiningOp();
  if (isa_and_nonnull<tensor::EmptyOp>(def))
    return tensor::EmptyOp::create(builder, init.getLoc(), type.getShape(),
                                   type.getElementType());
  auto producer = dyn_cast_or_null<linalg::LinalgOp>(def);
  if (!producer || producer->getNumResults() != 1 ||
      llvm::any_of(producer->getOperands(),
                   [&](Value v) { return batchDim.count(v); }))
    return nullptr;
  Value dest = freshInit(builder, producer.getDpsInits()[0], type);
  if (!dest)
    return nullptr;
  Operation *clone = builder.clone(*producer);
  clone->setOperand(producer.getDpsInitOperand(0)->getOperandNumber(), dest);
  clone->getResult(0).setType(type);
  return clone->getResult(0);
}

LogicalResult BatchShapeRewriter::visitLinalgOp(linalg::LinalgOp op) {
  // Find the loop that iterates over the batch, from any batched operand.
  std::optional<unsigned> loop;
  for (OpOperand &operand : op->getOpOperands()) {
    auto it = batchDim.find(operand.get());
    if (it == batchDim.end())
      continue;
    AffineExpr expr = op.getMatchingIndexingMap(&operand).getResult(it->second);
    auto dimExpr = dyn_cast<AffineDimExpr>(expr);
    if (!dimExpr)
      return op->emitOpError("indexes the batch dimension with a non-trivial "
                             "affine expression");
    loop = dimExpr.getPosition();
    break;
  }
  if (!loop)
    return success();
  OpBuilder builder(op);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(*loop, op->getContext()));
    auto it = batchDim.find(operand.get());
    if (!pos) {
      if (it != batchDim.end())
        return op->emitOpError("mixes batch dimensions of its operands");
      continue;
    }
    if (it != batchDim.end()) {
      if (it->second != *pos)
        return op->emitOpError("reads the batch dimension at position ")
               << *pos << " of operand #" << operand.getOperandNumber()
               << ", which is batched along " << it->second;
      continue;
    }
    auto type = cast<RankedTensorType>(operand.get().getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[*pos] /= numMicrobatches;
    Value init = freshInit(builder, operand.get(), type.clone(shape));
    if (!init)
      return op->emitOpError("operand #")
             << operand.getOperandNumber()
             << " is indexed by the batch dimension but is neither batch "
                "data nor built from a tensor.empty";
    operand.set(init);
    batchDim[init] = *pos;
  }
  for (OpResult result : op->getResults()) {
    Value init = op.getDpsInitOperand(result.getResultNumber())->get();
    auto it = batchDim.find(init);
    if (it == batchDim.end())
      continue;
    result.setType(init.getType());
    batchDim[result] = it->second;
  }
  return success();
}

LogicalResult BatchShapeRewriter::run(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments())
    if (!isParameter(func, arg.getArgNumber()) && failed(splitValue(arg, 0)))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return WalkResult(visitLinalgOp(linalgOp));
    if (auto boundary = dyn_cast<BoundaryOp>(op)) {
      auto it = batchDim.find(boundary.getInput());
      if (it != batchDim.end()) {
        boundary.getOutput().setType(boundary.getInput().getType());
        batchDim[boundary.getOutput()] = it->second;
      }
      return WalkResult::advance();
    }
    for (Value operand : op->getOperands())
      if (batchDim.count(operand) && !isa<func::ReturnOp>(op))
        return WalkResult(op->emitOpError(
            "uses batch data but is not supported by pp-split-microbatches"));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // The whole-batch producers that were re-created are now dead.
  SmallVector<Operation *> ops = llvm::map_to_vector(
      func.front().without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  func.setType(
      FunctionType::get(func.getContext(), func.front().getArgumentTypes(),
                        func.front().getTerminator()->getOperandTypes()));
  return success();
}

namespace {
struct SplitMicrobatchesPass
    : pp::impl::PPSplitMicrobatchesBase<SplitMicrobatchesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (numMicrobatches < 1) {
      getOperation().emitError("num-microbatches must be at least 1, got ")
          << numMicrobatches.getValue();
      return signalPassFailure();
    }
    func::FuncOp func = lookupTrainingStep(getOperation(), function);
    if (!func)
      return signalPassFailure();
    if (func->hasAttr(kMicrobatchesAttr)) {
      func.emitError("the training step is already split into micro-batches");
      return signalPassFailure();
    }
    if (numMicrobatches > 1 &&
        failed(BatchShapeRewriter(numMicrobatches).run(func)))
      return signalPassFailure();
    func->setAttr(kMicrobatchesAttr,
                  IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                   numMicrobatches.getValue()));
  }
};
} // namespace
