//===- PlanParallelism.cpp - tensor, pipeline and data parallel layout ----===//
//
// pp-plan-parallelism: reads what Megatron's plan splits in the training
// step and asks the parallelism planner (ParallelismPlanner.h) how to lay
// the devices out; records and reports its choice.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/CostModel.h"
#include "pp/Dialect/PP/Analysis/DeviceDescription.h"
#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h"
#include "pp/Dialect/PP/Transforms/Parallelize/TensorParallelPlan.h"
#include "pp/Scheduling/ParallelismPlanner.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPPLANPARALLELISM
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// The dimension a `pp.split` splits, or -1.
static int64_t getSplitDim(ArrayAttr split) {
  for (auto [dim, axes] : llvm::enumerate(split.getAsRange<ArrayAttr>()))
    if (!axes.empty())
      return dim;
  return -1;
}

/// The split dimension of each weight: the user's `pp.split` or Megatron's
/// plan. A plan that cannot split (a split read by linalg.index) leaves
/// its error in `work.unsplittable`.
static DenseMap<unsigned, int64_t> getSplitWeights(func::FuncOp step,
                                                   TensorParallelWork &work) {
  DenseMap<unsigned, int64_t> dims;
  for (unsigned arg = 0; arg < step.getNumArguments(); ++arg)
    if (auto split = step.getArgAttrOfType<ArrayAttr>(arg, kSplitAttr))
      dims[arg] = getSplitDim(split);
  FailureOr<TensorParallelPlan> plan = failure();
  {
    ScopedDiagnosticHandler capture(step.getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error &&
          work.unsplittable.empty())
        work.unsplittable = diag.str();
      return success();
    });
    plan = planMegatron(step, /*tensorParallel=*/1);
  }
  if (succeeded(plan))
    for (auto [arg, split] : *plan)
      dims[arg] = getSplitDim(split);
  return dims;
}

/// Whether `op` sums over dimension `dim` of its operand `operand`: a
/// row-parallel product when that dimension is split.
static bool reducesOver(linalg::LinalgOp op, OpOperand &operand, int64_t dim) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  auto expr = dyn_cast<AffineDimExpr>(map.getResult(dim));
  return expr && op.getIteratorTypesArray()[expr.getPosition()] ==
                     utils::IteratorType::reduction;
}

/// What tensor parallelism splits in the chain `model` of `step`.
static TensorParallelWork getTensorParallelWork(func::FuncOp step,
                                                const StageCostModel &model) {
  TensorParallelWork work;
  DenseMap<unsigned, int64_t> dims = getSplitWeights(step, work);
  work.splitWeights.assign(model.getWeightBytes().size(), false);
  for (auto [arg, dim] : dims) {
    if (dim < 0)
      continue;
    work.splitWeights[arg] = true;
    auto type = cast<ShapedType>(step.getArgument(arg).getType());
    work.splitDims.push_back(
        {llvm::formatv("dimension {0} of argument {1}", dim, arg).str(),
         type.getDimSize(dim)});
  }
  for (const StageCostModel::Op &op : model.getOps()) {
    work.splitOps.push_back(llvm::any_of(
        op.weights, [&](int64_t weight) { return work.splitWeights[weight]; }));
    double bytes = 0.0;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op.op))
      for (OpOperand *operand : linalgOp.getDpsInputOperands()) {
        auto arg = dyn_cast<BlockArgument>(operand->get());
        if (!arg || arg.getOwner() != &step.front())
          continue;
        auto dim = dims.find(arg.getArgNumber());
        if (dim != dims.end() && dim->second >= 0 &&
            reducesOver(linalgOp, *operand, dim->second)) {
          for (Value result : op.op->getResults())
            bytes += getStorageBytes(result.getType());
          break;
        }
      }
    work.allReduceBytes.push_back(bytes);
  }
  return work;
}

/// The chain of `model` on `device`, as the layout planner reads it.
static LayoutChain getLayoutChain(const StageCostModel &model,
                                  const DeviceDescription &device) {
  LayoutChain chain;
  for (auto [index, op] : llvm::enumerate(model.getOps())) {
    chain.forward.push_back(model.getForwardTime(index, device));
    chain.compute.push_back(model.getComputeTime(index, device));
    chain.weights.push_back(op.weights);
  }
  chain.weightBytes = llvm::to_vector(model.getWeightBytes());
  for (int64_t cut = 0; cut <= model.size(); ++cut) {
    chain.mayCut.push_back(!model.splitsWeight(cut));
    chain.transferTime.push_back(model.getTransferTime(cut, device, device));
  }
  return chain;
}

/// The stages' ZeRO levels: `1` for every stage, or `0,3` per stage, each
/// 3 as `3/param` when gathered per param; `-` when not planned.
static std::string describeZero(const ParallelismCandidate &candidate) {
  if (candidate.zero.empty())
    return candidate.gatherPerParam ? "-/param" : "-";
  ArrayRef<int64_t> levels = candidate.zero;
  if (llvm::all_equal(levels))
    levels = levels.take_front();
  std::string text;
  for (auto [stage, level] : llvm::enumerate(levels)) {
    text += (stage ? "," : "") + std::to_string(level);
    if (level == 3 && candidate.gatherPerParam)
      text += "/param";
  }
  return text;
}

/// `T = 1, P = 2, R = 2, ZeRO-1`, per stage `T = 1, P = 2, R = 2, ZeRO
/// 1,0`, or `T = 1, P = 2, R = 2` without ZeRO.
static std::string describe(const ParallelismCandidate &candidate) {
  std::string layout =
      llvm::formatv("T = {0}, P = {1}, R = {2}", candidate.tensorParallel,
                    candidate.stages, candidate.replicas);
  if (candidate.zero.empty())
    return layout + (candidate.gatherPerParam ? ", ZeRO-3/param" : "");
  if (getZeroSum(candidate) == 0)
    return layout;
  bool uniform = llvm::all_equal(candidate.zero);
  return layout + (uniform ? ", ZeRO-" : ", ZeRO per stage ") +
         describeZero(candidate);
}

/// Prints every layout and why it lost.
static void printLayouts(raw_ostream &os, const ParallelismPlan &plan) {
  os << llvm::format("%-3s %-3s %-3s %-11s %-12s %-12s %-12s %s\n", "T", "P",
                     "R", "ZeRO", "step(s)", "batch(s)", "memory(B)", "result");
  for (auto [index, candidate] : llvm::enumerate(plan.candidates)) {
    auto number = [](double value) {
      return value > 0.0 ? formatQuantity(value) : std::string("-");
    };
    std::string result =
        plan.chosen == index ? "chosen" : "rejected: " + candidate.reason;
    std::string zero = describeZero(candidate);
    os << llvm::format("%-3d %-3d %-3d %-11s %-12s %-12s %-12s %s\n",
                       int(candidate.tensorParallel), int(candidate.stages),
                       int(candidate.replicas), zero.c_str(),
                       number(candidate.stepTime).c_str(),
                       number(candidate.batchTime).c_str(),
                       number(candidate.memory).c_str(), result.c_str());
  }
}

namespace {
struct PlanParallelismPass
    : pp::impl::PPPlanParallelismBase<PlanParallelismPass> {
  using Base::Base;

  LogicalResult checkOptions(func::FuncOp step) {
    if (devices < 1)
      return step.emitError("devices must be at least 1, got ")
             << devices.getValue();
    if (!(memoryPerDevice >= 0.0))
      return step.emitError("memory-per-device must be 0 or more bytes");
    if (optimizer != "sgd" && optimizer != "adam")
      return step.emitError("optimizer must be sgd or adam, got '")
             << optimizer << "'";
    for (ArrayRef<int64_t> levels :
         {ArrayRef<int64_t>(zero), ArrayRef<int64_t>(fixedZero)})
      for (int64_t level : levels)
        if (level != 0 && level != 1 && level != 3)
          return step.emitError("zero must be 0, 1 or 3, got ") << level;
    if (slices < 1)
      return step.emitError("slices must be at least 1, got ")
             << slices.getValue();
    if (tensorParallel < 0 || numStages < 0 || numReplicas < 0)
      return step.emitError("tensor-parallel, num-stages and num-replicas "
                            "must be 0 (free) or more");
    return success();
  }

  FailureOr<ParallelismRequest> getRequest(func::FuncOp step) {
    ParallelismRequest request;
    request.devices = devices;
    request.memoryPerDevice = memoryPerDevice;
    request.numMicrobatches = numMicrobatches;
    if (auto split = step->getAttrOfType<IntegerAttr>(kMicrobatchesAttr);
        split && numMicrobatches == 0)
      request.numMicrobatches = split.getInt();
    request.numMicrobatches = std::max<int64_t>(request.numMicrobatches, 1);
    request.numSlices = slices;
    request.schedule = schedule;
    llvm::Expected<SmallVector<DeviceDescription>> described =
        resolveDevices(device, deviceFile, 1);
    if (!described)
      return step.emitError(llvm::toString(described.takeError()));
    request.device = described->front();
    // Adam keeps two moments per weight.
    request.optimizerStateCopies = optimizer == "adam" ? 2.0 : 0.0;
    if (!zero.empty())
      request.zeroLevels.assign(zero.begin(), zero.end());
    request.fixedZero.assign(fixedZero.begin(), fixedZero.end());
    request.planParamGathers = paramGathers;
    request.maxStages = kMaxPlannedStages;
    request.fixedTensorParallel = tensorParallel;
    request.fixedStages = numStages;
    request.fixedReplicas = numReplicas;
    return request;
  }

  void runOnOperation() override {
    func::FuncOp step = lookupTrainingStep(getOperation(), function);
    if (!step || failed(checkOptions(step)))
      return signalPassFailure();
    FailureOr<ParallelismRequest> request = getRequest(step);
    if (failed(request))
      return signalPassFailure();
    SmallVector<Operation *> work;
    for (Operation &op : step.front().without_terminator()) {
      if (isa<BoundaryOp>(op))
        request->markerCuts.push_back(work.size());
      else if (isStageWork(op))
        work.push_back(&op);
    }
    if (work.empty()) {
      step.emitError("the training step has no ops to plan");
      return signalPassFailure();
    }
    StageCostModel model(step, work);
    LayoutChain chain = getLayoutChain(model, request->device);
    auto activationBytes = [&](int64_t begin, int64_t end) {
      return model.getActivationBytes(begin, end);
    };
    chain.activationBytes = activationBytes;
    ParallelismPlan plan =
        planParallelism(chain, getTensorParallelWork(step, model), *request);
    if (printTable)
      printLayouts(llvm::outs(), plan);
    if (!plan.chosen)
      return reportNoLayout(step, plan);
    const ParallelismCandidate &best = plan.candidates[*plan.chosen];
    Builder b(step.getContext());
    step->setAttr(
        "pp.parallelism",
        b.getDictionaryAttr(
            {b.getNamedAttr("tensor_parallel",
                            b.getI64IntegerAttr(best.tensorParallel)),
             b.getNamedAttr("stages", b.getI64IntegerAttr(best.stages)),
             b.getNamedAttr("replicas", b.getI64IntegerAttr(best.replicas)),
             b.getNamedAttr("zero", b.getDenseI64ArrayAttr(best.zero)),
             b.getNamedAttr("zero_gather_param",
                            b.getI64IntegerAttr(best.gatherPerParam))}));
    step.emitRemark() << llvm::formatv(
        "{0} devices: {1}: {2} s per step, {3} s per batch, {4} bytes on the "
        "fullest device",
        devices, describe(best), formatQuantity(best.stepTime),
        formatQuantity(best.batchTime), formatQuantity(best.memory));
  }

  /// No layout fits: an error naming the least memory one needs.
  void reportNoLayout(func::FuncOp step, const ParallelismPlan &plan) {
    const ParallelismCandidate *least = nullptr;
    for (const ParallelismCandidate &candidate : plan.candidates)
      if (candidate.memory > 0.0 &&
          (!least || candidate.memory < least->memory))
        least = &candidate;
    InFlightDiagnostic diag = step.emitError()
                              << "no layout of " << devices.getValue()
                              << " devices fits";
    if (least)
      diag << llvm::formatv(
          ": the least memory one needs is {0} bytes per device ({1})",
          formatQuantity(least->memory), describe(*least));
    for (const ParallelismCandidate &candidate : plan.candidates)
      diag.attachNote() << describe(candidate) << ": " << candidate.reason;
    signalPassFailure();
  }
};
} // namespace
