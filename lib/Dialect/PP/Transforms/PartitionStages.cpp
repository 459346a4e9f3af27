//===- PartitionStages.cpp - cut a training step into pipeline stages -----===//
//
// Assigns the ops of a training step to consecutive stages, at user markers
// or by balancing estimated FLOPs, and wraps each stage in a pp.stage op.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/Dialect/PP/Transforms/TrainingStep.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPPARTITIONSTAGES
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// Ops re-created in every stage that uses them instead of being sent
/// between stages: cheap producers, and linalg ops computed only from those
/// and from weights (a broadcast bias). Keeping the latter next to their
/// consumers keeps every weight in a single stage.
static bool isRematerializable(Operation *op) {
  if (isCheapToRecreate(op))
    return true;
  if (!isa<linalg::LinalgOp>(op))
    return false;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return captured.empty() && llvm::all_of(op->getOperands(), [](Value v) {
           if (auto arg = dyn_cast<BlockArgument>(v)) {
             auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
             return func && isParameter(func, arg.getArgNumber());
           }
           return v.getDefiningOp() && isRematerializable(v.getDefiningOp());
         });
}

/// Whether `op` belongs to a stage: it does real work, or computes a value
/// the step returns (which the last stage must then produce).
static bool isStageWork(Operation &op) {
  return !isRematerializable(&op) ||
         llvm::any_of(op.getUsers(), [](Operation *user) {
           return user->hasTrait<OpTrait::IsTerminator>();
         });
}

/// Estimated floating-point work of an op: iterations times payload ops.
static double estimateFlops(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return 1.0;
  double iterations = 1.0;
  for (int64_t range : linalgOp.getStaticLoopRanges())
    iterations *= ShapedType::isDynamic(range) ? 1.0 : double(range);
  double payload =
      std::max<size_t>(linalgOp.getBlock()->getOperations().size() - 1, 1);
  return iterations * payload;
}

/// Splits `costs` into `numStages` contiguous, non-empty parts minimising the
/// largest part (linear partition by dynamic programming). Returns the index
/// of the first op of every stage.
static SmallVector<size_t> balanceStages(ArrayRef<double> costs,
                                         size_t numStages) {
  size_t n = costs.size();
  SmallVector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + costs[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[k][i]: the smallest bottleneck for the first i ops in k stages.
  std::vector<std::vector<double>> best(numStages + 1,
                                        std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> cut(numStages + 1,
                                       std::vector<size_t>(n + 1, 0));
  best[0][0] = 0.0;
  for (size_t k = 1; k <= numStages; ++k)
    for (size_t i = k; i <= n; ++i)
      for (size_t j = k - 1; j < i; ++j) {
        double value = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (value < best[k][i]) {
          best[k][i] = value;
          cut[k][i] = j;
        }
      }
  SmallVector<size_t> starts(numStages);
  for (size_t k = numStages, i = n; k > 0; --k) {
    starts[k - 1] = cut[k][i];
    i = cut[k][i];
  }
  return starts;
}

namespace {

/// Builds the pp.stage ops of one training step.
class StagePartitioner {
public:
  StagePartitioner(func::FuncOp func) : func(func) {}

  LogicalResult run(int64_t numStages);

private:
  LogicalResult assignStages(int64_t numStages);
  void buildStages(int64_t numStages);
  Value materialize(Value value, IRMapping &mapping, OpBuilder &builder);
  LogicalResult checkWeightsUnshared();

  func::FuncOp func;
  SmallVector<Operation *> work;          // ops that belong to a stage
  DenseMap<Operation *, int64_t> stageOf; // stage of each op in `work`
};

} // namespace

LogicalResult StagePartitioner::assignStages(int64_t numStages) {
  SmallVector<BoundaryOp> markers;
  for (Operation &op : func.front().without_terminator()) {
    if (auto marker = dyn_cast<BoundaryOp>(op))
      markers.push_back(marker);
    else if (isStageWork(op))
      work.push_back(&op);
  }
  if (work.empty())
    return func.emitError("the training step has no ops to partition");
  if (!func.front().getOps<StageOp>().empty())
    return func.emitError("the training step is already partitioned");
  if (!markers.empty()) {
    if (numStages != 0 && numStages != int64_t(markers.size()) + 1)
      return markers.front().emitError("the model has ")
             << markers.size() << " stage markers, which make "
             << markers.size() + 1 << " stages, but " << numStages
             << " stages were requested";
    int64_t stage = 0;
    for (Operation &op : func.front().without_terminator()) {
      if (isa<BoundaryOp>(op))
        ++stage;
      else if (isStageWork(op))
        stageOf[&op] = stage;
    }
    for (BoundaryOp marker : markers) {
      marker.getOutput().replaceAllUsesWith(marker.getInput());
      marker.erase();
    }
    return success();
  }
  if (numStages < 1)
    return func.emitError("num-stages must be at least 1 without stage "
                          "markers, got ")
           << numStages;
  if (int64_t(work.size()) < numStages)
    return func.emitError("cannot cut ")
           << work.size() << " ops into " << numStages << " stages";
  SmallVector<double> costs = llvm::map_to_vector(work, estimateFlops);
  SmallVector<size_t> starts = balanceStages(costs, numStages);
  for (auto [index, op] : llvm::enumerate(work))
    stageOf[op] = llvm::upper_bound(starts, index) - starts.begin() - 1;
  return success();
}

/// Returns the stage-local value of `value`, re-creating cheap producers.
Value StagePartitioner::materialize(Value value, IRMapping &mapping,
                                    OpBuilder &builder) {
  if (Value local = mapping.lookupOrNull(value))
    return local;
  Operation *def = value.getDefiningOp();
  assert(def && isRematerializable(def) && "value must be cheap to re-create");
  for (Value operand : def->getOperands())
    materialize(operand, mapping, builder);
  builder.clone(*def, mapping);
  return mapping.lookup(value);
}

void StagePartitioner::buildStages(int64_t numStages) {
  // The last stage that reads each value defined by a stage op.
  DenseMap<Value, int64_t> lastUse;
  Operation *terminator = func.front().getTerminator();
  for (Operation *op : work)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        // A use inside a region counts for the op that holds the region.
        Operation *owner = func.front().findAncestorOpInBlock(*user);
        lastUse[result] =
            std::max(lastUse.lookup(result),
                     owner == terminator ? numStages : stageOf.lookup(owner));
      }

  OpBuilder builder(terminator);
  SmallVector<Value> carried;   // values flowing from the previous stage
  DenseMap<Value, Value> outer; // original value -> value outside the stages
  for (int64_t stage = 0; stage < numStages; ++stage) {
    SmallVector<Operation *> ops = llvm::filter_to_vector(
        work, [&](Operation *op) { return stageOf.lookup(op) == stage; });
    llvm::SetVector<Value> inputs(carried.begin(), carried.end());
    // Function arguments read by the stage or by what it re-creates.
    std::function<void(Value)> collect = [&](Value value) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner() == &func.front())
          inputs.insert(arg);
        return;
      }
      Operation *def = value.getDefiningOp();
      if (!stageOf.count(def) && isRematerializable(def))
        llvm::for_each(def->getOperands(), collect);
    };
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        llvm::for_each(nested->getOperands(), collect);
      });
    // Outputs: values still needed after this stage, in definition order.
    SmallVector<Value> outputs;
    for (Value value : carried)
      if (lastUse.lookup(value) > stage)
        outputs.push_back(value);
    for (Operation *op : ops)
      for (Value result : op->getResults())
        if (lastUse.lookup(result) > stage)
          outputs.push_back(result);

    SmallVector<Value> operands = llvm::map_to_vector(
        inputs, [&](Value v) { return outer.lookup(v) ? outer.lookup(v) : v; });
    Location loc = ops.empty() ? func.getLoc() : ops.front()->getLoc();
    auto stageOp = StageOp::create(builder, loc, ValueRange(outputs).getTypes(),
                                   stage, operands);
    Block *body = builder.createBlock(&stageOp.getBody());
    IRMapping mapping;
    for (Value input : inputs)
      mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
    for (Operation *op : ops) {
      // Operands, including values the op's regions capture from the step.
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (operand.getParentBlock() == &func.front() &&
              !mapping.contains(operand))
            materialize(operand, mapping, builder);
      });
      builder.clone(*op, mapping);
    }
    YieldOp::create(builder, loc, llvm::map_to_vector(outputs, [&](Value v) {
                      return mapping.lookup(v);
                    }));
    builder.setInsertionPoint(terminator);
    for (auto [value, result] : llvm::zip(outputs, stageOp.getResults()))
      outer[value] = result;
    carried = outputs;
  }
  for (OpOperand &operand : terminator->getOpOperands())
    if (Value replacement = outer.lookup(operand.get()))
      operand.set(replacement);
}

/// Each weight must live in one stage: its gradient is accumulated there.
LogicalResult StagePartitioner::checkWeightsUnshared() {
  for (BlockArgument arg : func.getArguments()) {
    if (!isParameter(func, arg.getArgNumber()))
      continue;
    SmallVector<StageOp> users;
    for (Operation *user : arg.getUsers())
      if (auto stage = dyn_cast<StageOp>(user))
        users.push_back(stage);
    llvm::sort(users, [](StageOp a, StageOp b) {
      return a.getStage() < b.getStage();
    });
    if (users.size() > 1)
      return users[1].emitError("weight argument #")
             << arg.getArgNumber() << " is used by stages "
             << users[0].getStage() << " and " << users[1].getStage()
             << "; sharing a weight between stages is not supported";
  }
  return success();
}

LogicalResult StagePartitioner::run(int64_t numStages) {
  if (failed(assignStages(numStages)))
    return failure();
  numStages = 1 + llvm::max_element(stageOf, [](auto a, auto b) {
                    return a.second < b.second;
                  })->second;
  buildStages(numStages);
  if (failed(checkWeightsUnshared()))
    return failure();
  // Erase the original ops, users first.
  SmallVector<Operation *> originals;
  for (Operation &op : func.front().without_terminator())
    if (!isa<StageOp>(op))
      originals.push_back(&op);
  for (Operation *op : llvm::reverse(originals))
    op->erase();
  return success();
}

namespace {
struct PartitionStagesPass
    : pp::impl::PPPartitionStagesBase<PartitionStagesPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = lookupTrainingStep(getOperation(), function);
    if (!func || failed(StagePartitioner(func).run(numStages)))
      signalPassFailure();
  }
};
} // namespace
