//===- SplitSliceStages.cpp - one pp.stage per sequence slice -------------===//
//
// Cuts each pp.stage of a sequence-sliced training step (pp-split-sequence)
// into one pp.stage per slice, so that every slice of a stage becomes its
// own forward and backward: values a slice reads from the stage's earlier
// slices (the keys and values causal attention caches) become results of
// the earlier slice's stage and inputs of the later one.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSPLITSLICESTAGES
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// Marks no slice: an op every slice may recompute (constants, weights).
static constexpr int64_t kShared = -1;

/// The values of the enclosing blocks that `op` reads, in its regions too.
static SmallVector<Value> getValuesRead(Operation *op) {
  SmallVector<Value> values;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (!op->isAncestor(operand.getParentBlock()->getParentOp()) ||
          operand.getParentBlock() == op->getBlock())
        values.push_back(operand);
  });
  return values;
}

static int64_t getSliceMark(Operation *op) {
  auto mark = op->getAttrOfType<IntegerAttr>(kSliceAttr);
  return mark ? mark.getInt() : kShared;
}

namespace {

/// Cuts one stage into its slices.
class StageSlicer {
public:
  StageSlicer(StageOp stage, int64_t numSlices,
              DenseMap<Value, int64_t> &sliceOf)
      : stage(stage), numSlices(numSlices), sliceOf(sliceOf) {}

  LogicalResult run();

private:
  LogicalResult assignSlices();
  /// The stage of slice `j`, built before the original stage.
  StageOp buildSlice(int64_t j, ArrayRef<StageOp> earlier);

  StageOp stage;
  int64_t numSlices;
  /// The slice of each step value (stage results) and body value.
  DenseMap<Value, int64_t> &sliceOf;
  /// Body values each slice's stage returns, in order.
  SmallVector<llvm::SetVector<Value>> exported;
};

} // namespace

/// An op computes the slice it is marked with, else the latest slice it
/// reads (slice j reads slices 0 .. j only), else none (shared).
LogicalResult StageSlicer::assignSlices() {
  Block &body = stage.getBody().front();
  for (auto [arg, input] : llvm::zip(body.getArguments(), stage.getInputs()))
    sliceOf[arg] = sliceOf.lookup_or(input, kShared);
  for (Operation &op : body.without_terminator()) {
    int64_t slice = getSliceMark(&op);
    for (Value value : getValuesRead(&op))
      slice = std::max(slice, sliceOf.lookup_or(value, kShared));
    if (getSliceMark(&op) != kShared && slice != getSliceMark(&op))
      return op.emitOpError("is marked as slice ")
             << getSliceMark(&op) << " but reads slice " << slice;
    for (Value result : op.getResults())
      sliceOf[result] = slice;
  }
  exported.assign(numSlices, {});
  // A slice returns what later slices read and its part of the stage's
  // results.
  for (Operation &op : body) {
    int64_t reader = sliceOf.lookup_or(
        op.getNumResults() ? op.getResult(0) : Value(), kShared);
    for (Value value : getValuesRead(&op)) {
      int64_t slice = sliceOf.lookup_or(value, kShared);
      if (slice == kShared || (isa<BlockArgument>(value) && !isa<YieldOp>(op)))
        continue;
      if (isa<YieldOp>(op) || slice < reader)
        exported[slice].insert(value);
    }
  }
  for (auto [i, value] : llvm::enumerate(body.getTerminator()->getOperands())) {
    if (sliceOf.lookup_or(value, kShared) == kShared)
      return stage.emitOpError("result #")
             << i << " is computed by none of the " << numSlices
             << " sequence slices; a sliced stage passes on only what its "
                "slices compute";
  }
  return success();
}

StageOp StageSlicer::buildSlice(int64_t j, ArrayRef<StageOp> earlier) {
  Block &body = stage.getBody().front();
  // The ops of slice j and the shared ops they need, in program order.
  DenseSet<Operation *> needed;
  SmallVector<Value> worklist;
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() ? sliceOf.lookup(op.getResult(0)) == j
                           : getSliceMark(&op) == j)
      worklist.push_back(op.getNumResults() ? op.getResult(0) : Value());
  llvm::append_range(worklist, exported[j]);
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *op = value ? value.getDefiningOp() : nullptr;
    if (!op || op->getBlock() != &body || !needed.insert(op).second)
      continue;
    for (Value read : getValuesRead(op))
      if (sliceOf.lookup_or(read, kShared) == kShared ||
          sliceOf.lookup(read) == j)
        worklist.push_back(read);
  }
  // Inputs: the stage's own (by their step values) and earlier slices'.
  llvm::SetVector<Value> inputs; // body values
  for (Operation &op : body.without_terminator()) {
    if (!needed.contains(&op))
      continue;
    for (Value read : getValuesRead(&op))
      if (isa<BlockArgument>(read) ||
          (sliceOf.lookup(read) != kShared && sliceOf.lookup(read) < j))
        inputs.insert(read);
  }
  // A previous stage's value this stage passes on.
  for (Value value : exported[j])
    if (isa<BlockArgument>(value))
      inputs.insert(value);
  SmallVector<Value> operands;
  for (Value input : inputs) {
    if (auto arg = dyn_cast<BlockArgument>(input)) {
      operands.push_back(stage.getInputs()[arg.getArgNumber()]);
      continue;
    }
    int64_t from = sliceOf.lookup(input);
    StageOp producer = earlier[from];
    operands.push_back(producer.getResult(llvm::find(exported[from], input) -
                                          exported[from].begin()));
  }
  OpBuilder b(stage);
  auto slice = StageOp::create(
      b, stage.getLoc(), ValueRange(exported[j].getArrayRef()).getTypes(),
      stage.getStageAttr(), stage.getRecomputeAttr(), operands);
  slice->setAttr(kSliceAttr, b.getI64IntegerAttr(j));
  Block *entry = b.createBlock(&slice.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, entry->addArgument(input.getType(), input.getLoc()));
  b.setInsertionPointToStart(entry);
  for (Operation &op : body.without_terminator())
    if (needed.contains(&op))
      b.clone(op, mapping);
  YieldOp::create(b, stage.getLoc(),
                  llvm::map_to_vector(
                      exported[j], [&](Value v) { return mapping.lookup(v); }));
  for (auto [i, value] : llvm::enumerate(exported[j]))
    sliceOf[slice.getResult(i)] = j;
  return slice;
}

LogicalResult StageSlicer::run() {
  if (failed(assignSlices()))
    return failure();
  // Another stage's values cross to the same slice only: a slice's
  // transfers carry its own activations.
  for (auto [i, input] : llvm::enumerate(stage.getInputs())) {
    int64_t from = sliceOf.lookup_or(input, kShared);
    if (from == kShared)
      continue;
    for (OpOperand &use : stage.getBody().getArgument(i).getUses()) {
      Operation *user =
          stage.getBody().front().findAncestorOpInBlock(*use.getOwner());
      int64_t reader =
          user->getNumResults() ? sliceOf.lookup(user->getResult(0)) : from;
      if (reader != from && !isa<YieldOp>(user))
        return user->emitOpError("computes sequence slice ")
               << reader << " of stage " << stage.getStage() << " from slice "
               << from << " of the stage before; only a "
               << "slice's own activations cross stages (cut the stages "
                  "elsewhere)";
    }
  }
  Block &body = stage.getBody().front();
  for (int64_t j = 0; j < numSlices; ++j)
    if (llvm::none_of(body.without_terminator(), [&](Operation &op) {
          return op.getNumResults() && sliceOf.lookup(op.getResult(0)) == j;
        }))
      return stage.emitOpError("computes nothing of sequence slice ") << j;
  SmallVector<StageOp> slices;
  for (int64_t j = 0; j < numSlices; ++j)
    slices.push_back(buildSlice(j, slices));
  for (auto [i, value] : llvm::enumerate(body.getTerminator()->getOperands())) {
    int64_t j = sliceOf.lookup(value);
    stage.getResult(i).replaceAllUsesWith(slices[j].getResult(
        llvm::find(exported[j], value) - exported[j].begin()));
  }
  stage.erase();
  return success();
}

namespace {
struct SplitSliceStagesPass
    : pp::impl::PPSplitSliceStagesBase<SplitSliceStagesPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp step = lookupTrainingStep(getOperation(), function);
    if (!step)
      return signalPassFailure();
    int64_t numSlices = 0;
    step.walk([&](Operation *op) {
      numSlices = std::max(numSlices, getSliceMark(op) + 1);
    });
    if (numSlices <= 1)
      return;
    SmallVector<StageOp> stages(step.front().getOps<StageOp>());
    if (stages.empty()) {
      step.emitError("the training step has no pp.stage ops; run "
                     "pp-partition-stages first");
      return signalPassFailure();
    }
    DenseMap<Value, int64_t> sliceOf;
    for (StageOp stage : stages)
      if (failed(StageSlicer(stage, numSlices, sliceOf).run()))
        return signalPassFailure();
    // The marks inside the stages are spent; the stages keep theirs.
    step.walk([&](Operation *op) {
      if (!isa<StageOp>(op))
        op->removeAttr(kSliceAttr);
    });
  }
};
} // namespace
