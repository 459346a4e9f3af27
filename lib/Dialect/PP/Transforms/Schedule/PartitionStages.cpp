//===- PartitionStages.cpp - cut a training step into pipeline stages -----===//
//
// Plans the stages of a training step (the cost model's times and memory,
// the partition planner's optimal cuts, user markers as fixed cuts, which
// stages recompute) and wraps each stage in a pp.stage op.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/CostModel.h"
#include "pp/Dialect/PP/Analysis/CostProfile.h"
#include "pp/Dialect/PP/Analysis/DeviceDescription.h"
#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Scheduling/CollectiveCost.h"
#include "pp/Scheduling/PartitionPlanner.h"
#include "pp/Scheduling/ScheduleEvaluator.h"
#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPPARTITIONSTAGES
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// The most copies of each weight a rank may hold (`param-copies`): weights,
/// gradients and any optimizer's state fit in far fewer.
static constexpr int kMaxParameterCopies = 1024;

namespace {

/// What the planner is asked to optimise for: the pass options.
struct PlannerOptions {
  int64_t numStages = 0, numRanks = 0, numMicrobatches = 0;
  ScheduleChoice schedule;
  ArrayRef<std::string> devices;
  StringRef deviceFile, costFile;
  /// Bytes each rank may hold: one value for every rank or one per rank;
  /// the devices' capacity when empty or 0.
  ArrayRef<double> memoryCap;
  double parameterCopies = 2.0;
  RecomputePolicy recompute = RecomputePolicy::None;
  bool printTable = false, printCosts = false, recordCosts = false;
};

/// The pipeline the stages are planned for: where each stage runs, how many
/// micro-batches of it a rank holds at most, and the ranks' devices.
struct PipelineTarget {
  int64_t numMicrobatches = 1;
  SmallVector<int64_t> stageRank;
  SmallVector<double> inFlight;
  SmallVector<DeviceDescription> devices;
  SmallVector<double> memoryCap;
  /// Versions of its weights each stage keeps (2 for pipedream-2bw), each
  /// but the first one more copy of the weights.
  int64_t weightVersions = 1;
};

/// Builds the pp.stage ops of one training step.
class StagePartitioner {
public:
  StagePartitioner(func::FuncOp func) : func(func) {}

  LogicalResult run(const PlannerOptions &options);

private:
  LogicalResult assignStages(const PlannerOptions &options);
  FailureOr<int64_t> countStages(const PlannerOptions &options,
                                 ArrayRef<BoundaryOp> markers,
                                 ArrayRef<int64_t> markerCuts);
  FailureOr<PipelineTarget> describeTarget(const PlannerOptions &options,
                                           int64_t numStages);
  /// The micro-batches the plan is for: the option, else the split's.
  int64_t getPlannedMicrobatches(const PlannerOptions &options);
  LogicalResult planStages(const PlannerOptions &options, int64_t numStages,
                           ArrayRef<int64_t> markerCuts);
  void recordPlannedCosts(const PlannerOptions &options,
                          const PipelineTarget &target,
                          const StageCostModel &model, ArrayRef<int64_t> starts,
                          const CostProfile *profile);
  void buildStages(int64_t numStages);
  Value materialize(Value value, IRMapping &mapping, OpBuilder &builder);
  LogicalResult checkWeightsUnshared();
  LogicalResult checkStatesLocal();

  func::FuncOp func;
  SmallVector<Operation *> work;          // ops that belong to a stage
  DenseMap<Operation *, int64_t> stageOf; // stage of each op in `work`
  SmallVector<bool> recomputed;           // per stage
};

} // namespace

/// The number of stages: the option, or one more than the markers.
FailureOr<int64_t> StagePartitioner::countStages(const PlannerOptions &options,
                                                 ArrayRef<BoundaryOp> markers,
                                                 ArrayRef<int64_t> markerCuts) {
  int64_t numStages = options.numStages;
  if (numStages == 0 && !markers.empty())
    numStages = markers.size() + 1;
  if (numStages < 1)
    return func.emitError("num-stages must be at least 1 without stage "
                          "markers, got ")
           << numStages;
  if (numStages > kMaxPlannedStages)
    return func.emitError("num-stages is ")
           << numStages << "; at most " << kMaxPlannedStages
           << " stages are planned (pp-schedule takes up to " << kMaxStages
           << " stage functions)";
  if (numStages < int64_t(markers.size()) + 1)
    return markers.front()->emitError("the model has ")
           << markers.size() << " stage markers, which make at least "
           << markers.size() + 1 << " stages, but " << numStages
           << " stages were requested";
  // Cuts are in program order: equal neighbours enclose an empty stage.
  for (auto [index, cut] : llvm::enumerate(markerCuts))
    if (cut == 0 || cut == int64_t(work.size()) ||
        (index > 0 && markerCuts[index - 1] == cut))
      return markers[index]->emitError(
          "stage marker leaves a stage without ops");
  if (int64_t(work.size()) < numStages)
    return func.emitError("cannot cut ")
           << work.size() << " ops into " << numStages << " stages";
  return numStages;
}

int64_t
StagePartitioner::getPlannedMicrobatches(const PlannerOptions &options) {
  if (auto split = func->getAttrOfType<IntegerAttr>(kMicrobatchesAttr);
      split && options.numMicrobatches == 0)
    return split.getInt();
  return options.numMicrobatches;
}

FailureOr<PipelineTarget>
StagePartitioner::describeTarget(const PlannerOptions &options,
                                 int64_t numStages) {
  int64_t microbatches = getPlannedMicrobatches(options);
  ScheduleProblem problem{numStages, std::max<int64_t>(microbatches, 1),
                          options.numRanks ? options.numRanks : numStages};
  if (microbatches < 0)
    return func.emitError("num-microbatches must be at least 1, got ")
           << microbatches;
  if (microbatches > kMaxMicrobatches)
    return func.emitError("num-microbatches is ")
           << microbatches << "; at most " << kMaxMicrobatches
           << " micro-batches are supported";
  if (numStages * problem.numMicrobatches > kMaxStageMicrobatches)
    return func.emitError()
           << numStages << " stages x " << problem.numMicrobatches
           << " micro-batches is too large a schedule to plan for: at most "
           << kMaxStageMicrobatches << " stage micro-batches are supported";
  if (problem.numRanks < 1 || numStages % problem.numRanks != 0)
    return func.emitError("cannot place ")
           << numStages << " stages on " << problem.numRanks << " ranks with "
           << problem.numMicrobatches << " micro-batches";
  llvm::Expected<GeneratedSchedule> schedule =
      options.schedule.generate(problem);
  if (!schedule)
    return func.emitError(llvm::toString(schedule.takeError()));

  PipelineTarget target;
  target.numMicrobatches = problem.numMicrobatches;
  target.stageRank = schedule->stageRank;
  target.inFlight = countInFlight(*schedule);
  target.weightVersions = schedule->weightVersions;
  llvm::Expected<SmallVector<DeviceDescription>> devices =
      resolveDevices(options.devices, options.deviceFile, problem.numRanks);
  if (!devices)
    return func.emitError(llvm::toString(devices.takeError()));
  target.devices = std::move(*devices);
  ArrayRef<double> caps = options.memoryCap;
  if (caps.size() > 1 && static_cast<int64_t>(caps.size()) != problem.numRanks)
    return func.emitError("memory-cap has ")
           << caps.size() << " values, expected 1 or one per rank ("
           << problem.numRanks << ")";
  for (double cap : caps)
    if (!isValidQuantity(cap))
      return func.emitError("memory-cap must be a finite number of bytes "
                            "between 0 (the device's capacity) and ")
             << kMaxQuantityText << ", got " << formatQuantity(cap);
  if (!(options.parameterCopies >= 0 &&
        options.parameterCopies <= kMaxParameterCopies))
    return func.emitError("param-copies must be between 0 and ")
           << kMaxParameterCopies << ", got "
           << formatQuantity(options.parameterCopies);
  for (auto [rank, device] : llvm::enumerate(target.devices)) {
    double cap = caps.empty() ? 0.0 : caps[caps.size() == 1 ? 0 : rank];
    target.memoryCap.push_back(cap > 0.0 ? cap : device.memoryCapacity);
  }
  return target;
}

/// Prints the chain's per-op costs as one JSON document, for tools that
/// check the planner (test/e2e/partition_oracle.py).
static void printCosts(raw_ostream &os, const StageCostModel &model,
                       ArrayRef<int64_t> markerCuts) {
  llvm::json::OStream json(os);
  auto ids = [&](ArrayRef<int64_t> list) {
    json.array(
        [&] { llvm::for_each(list, [&](int64_t id) { json.value(id); }); });
  };
  json.object([&] {
    json.attributeArray("ops", [&] {
      for (const StageCostModel::Op &op : model.getOps())
        json.object([&] {
          json.attribute("name", op.op->getName().getStringRef());
          json.attribute("flops", op.cost.flops);
          json.attribute("bytes", op.cost.bytes);
          json.attributeBegin("weights");
          ids(op.weights);
          json.attributeEnd();
          json.attributeBegin("reads");
          ids(op.reads);
          json.attributeEnd();
          json.attributeBegin("writes");
          ids(op.writes);
          json.attributeEnd();
        });
    });
    json.attributeArray("values", [&] {
      for (const StageCostModel::ChainValue &value : model.getValues())
        json.object([&] {
          json.attribute("bytes", value.bytes);
          json.attribute("definer", value.definer);
          json.attribute("last_use", value.lastUse);
        });
    });
    json.attributeArray("weight_bytes", [&] {
      llvm::for_each(model.getWeightBytes(), [&](double b) { json.value(b); });
    });
    json.attributeBegin("markers");
    ids(markerCuts);
    json.attributeEnd();
  });
  os << "\n";
}

/// Prints the planned stages and ranks as a table.
static void printTable(raw_ostream &os, const StageCostModel &model,
                       const PipelineTarget &target, ArrayRef<int64_t> starts,
                       ArrayRef<bool> recomputed, ArrayRef<StageLoad> loads,
                       double parameterCopies) {
  int64_t numStages = starts.size();
  int64_t numRanks = target.devices.size();
  os << llvm::format("%-5s %-4s %-9s %-10s %-10s %-10s %-10s %-10s %-10s "
                     "%-9s %s\n",
                     "stage", "rank", "ops", "flops", "F(s)", "B(s)", "W(s)",
                     "params(B)", "acts(B)", "in-flight", "send(B)");
  SmallVector<double> rankTime(numRanks, 0.0), rankMemory(numRanks, 0.0);
  for (int64_t stage = 0; stage < numStages; ++stage) {
    int64_t begin = starts[stage];
    int64_t end = stage + 1 < numStages ? starts[stage + 1] : model.size();
    int64_t rank = target.stageRank[stage];
    StageCost cost = model.getStageCost(begin, end, target.devices[rank]);
    std::string ops = llvm::formatv("{0}-{1}", begin, end - 1).str();
    os << llvm::format("%-5d %-4d %-9s %-10.4g %-10.4g %-10.4g %-10.4g "
                       "%-10.4g %-10.4g %-9g %.4g\n",
                       int(stage), int(rank), ops.c_str(), cost.flops,
                       cost.forward, cost.backwardInput, cost.backwardWeight,
                       cost.parameterBytes, cost.activationBytes,
                       target.inFlight[stage],
                       end < model.size() ? model.getBoundaryBytes(end) : 0.0);
    rankTime[rank] += loads[stage].time;
    rankMemory[rank] += loads[stage].memory;
  }
  int64_t bottleneck = llvm::max_element(rankTime) - rankTime.begin();
  os << llvm::format("%-5s %-8s %-12s %-12s %s\n", "rank", "device", "time(s)",
                     "memory(B)", "cap(B)");
  for (int64_t rank = 0; rank < numRanks; ++rank)
    os << llvm::format("%-5d %-8s %-12.6g %-12.6g %-12.6g%s\n", int(rank),
                       target.devices[rank].name.c_str(), rankTime[rank],
                       rankMemory[rank], target.memoryCap[rank],
                       rank == bottleneck ? " bottleneck" : "");
  os << llvm::format("bottleneck: rank %d, %.9g s per micro-batch "
                     "(F + B + W and transfers; weights x%g)\n",
                     int(bottleneck), rankTime[bottleneck], parameterCopies);
  for (int64_t stage = 0; stage < numStages; ++stage) {
    if (!recomputed[stage])
      continue;
    int64_t begin = starts[stage];
    int64_t end = stage + 1 < numStages ? starts[stage + 1] : model.size();
    os << llvm::format("recompute: stage %d keeps %.4g of %.4g activation "
                       "bytes per micro-batch, B + F\n",
                       int(stage), model.getInputBytes(begin, end),
                       model.getActivationBytes(begin, end));
  }
}

/// Reports that no partition fits the memory caps, with the smallest caps
/// (the given ones scaled by one factor) that some partition fits.
static void reportMemoryInfeasible(func::FuncOp func, int64_t numStages,
                                   ArrayRef<double> caps,
                                   std::optional<double> factor) {
  InFlightDiagnostic diag = func.emitError("no partition into ")
                            << numStages << " stages fits the memory caps";
  if (!factor)
    return;
  auto bytes = [](double value) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%.10g", value);
    return text;
  };
  if (llvm::all_equal(caps)) {
    diag << "; the smallest feasible cap is " << bytes(caps.front() * *factor)
         << " bytes per rank";
    return;
  }
  diag << "; the caps must grow by a factor of " << bytes(*factor) << " to";
  for (double cap : caps)
    diag << " " << bytes(cap * *factor);
  diag << " bytes";
}

/// Plans the cuts of `model` on `target` and which stages recompute (in the
/// partition's `recompute`, one entry per stage); `loads` gets what each
/// planned stage adds to its rank.
static FailureOr<Partition>
planCuts(func::FuncOp func, const PlannerOptions &options,
         const PipelineTarget &target, const StageCostModel &model,
         ArrayRef<int64_t> markerCuts, SmallVectorImpl<StageLoad> &loads) {
  ArrayRef<DeviceDescription> devices = target.devices;
  auto computeTime = [&](int64_t op, int64_t rank) {
    return model.getComputeTime(op, devices[rank]);
  };
  auto forwardTime = [&](int64_t op, int64_t rank) {
    return model.getForwardTime(op, devices[rank]);
  };
  auto transferTime = [&](int64_t cut, int64_t from, int64_t to) {
    return model.getTransferTime(cut, devices[from], devices[to]);
  };
  auto parameterBytes = [&](int64_t begin, int64_t end) {
    return model.getParameterBytes(begin, end);
  };
  auto activationBytes = [&](int64_t begin, int64_t end) {
    return model.getActivationBytes(begin, end);
  };
  auto inputBytes = [&](int64_t begin, int64_t end) {
    return model.getInputBytes(begin, end);
  };
  StageCutProblem problem;
  problem.numOps = model.size();
  problem.stageRank = target.stageRank;
  problem.inFlight = target.inFlight;
  problem.memoryCap = target.memoryCap;
  problem.numMicrobatches = target.numMicrobatches;
  problem.weightCopies =
      getWeightCopies(options.parameterCopies, target.weightVersions);
  problem.recompute = options.recompute;
  for (int64_t cut = 0; cut <= model.size(); ++cut)
    problem.mayCut.push_back(!model.splitsWeight(cut));
  problem.markerCuts = llvm::to_vector(markerCuts);
  problem.computeTime = computeTime;
  problem.forwardTime = forwardTime;
  problem.transferTime = transferTime;
  problem.parameterBytes = parameterBytes;
  problem.activationBytes = activationBytes;
  problem.inputBytes = inputBytes;

  StageCuts cuts = planStageCuts(problem);
  int64_t numStages = problem.getNumStages();
  if (cuts.overMemory) {
    reportMemoryInfeasible(func, numStages, problem.memoryCap, cuts.capFactor);
    return failure();
  }
  if (!cuts.partition)
    return func.emitError("no partition into ")
           << numStages
           << " stages cuts at every stage marker and keeps the users of "
              "each weight in one stage";
  if (!cuts.partition->proven)
    func.emitRemark("the plan is the best a bounded search found over ")
        << numStages << " stages on " << problem.getNumRanks()
        << " ranks; it is not proven optimal";
  loads.assign(cuts.loads.begin(), cuts.loads.end());
  return *cuts.partition;
}

/// Reads the profile at `path`, which must have been measured on the
/// stages `target` describes with `numMicrobatches` micro-batches.
static FailureOr<CostProfile> readStageProfile(func::FuncOp func,
                                               StringRef path,
                                               const PipelineTarget &target,
                                               int64_t numMicrobatches) {
  FailureOr<CostProfile> profile =
      readCostProfile(path, [&] { return func.emitError(); });
  if (failed(profile))
    return failure();
  if (std::string why =
          profile->checkShape(target.stageRank.size(), numMicrobatches);
      !why.empty())
    return func.emitError("cost file '") << path << "' " << why;
  if (std::string why = profile->checkModel(func->getParentOfType<ModuleOp>());
      !why.empty())
    return func.emitError("cost file '") << path << "' " << why;
  if (!getSecondsPerUnit(profile->timeUnit))
    return func.emitError("cost file '")
           << path << "': time_unit '" << profile->timeUnit
           << "' is not a time; expected s, ms, us or ns";
  return profile;
}

/// Scales the F, B and W of every op by measured / analytic of the stage
/// that holds it in `starts`, the partition `profile` was measured on. A
/// time the model puts at zero has no op to carry it and stays zero.
static void calibrateModel(const CostProfile &profile,
                           const PipelineTarget &target,
                           ArrayRef<int64_t> starts, StageCostModel &model) {
  double seconds = *getSecondsPerUnit(profile.timeUnit);
  auto factor = [&](double measured, double analytic) {
    return analytic > 0.0 ? measured * seconds / analytic : 1.0;
  };
  int64_t numStages = starts.size();
  for (int64_t stage = 0; stage < numStages; ++stage) {
    int64_t begin = starts[stage];
    int64_t end = stage + 1 < numStages ? starts[stage + 1] : model.size();
    StageCost analytic =
        model.getStageCost(begin, end, target.devices[target.stageRank[stage]]);
    const StageProfile &measured = profile.stages[stage];
    CostCalibration factors{
        factor(measured.forward, analytic.forward),
        factor(measured.backwardInput, analytic.backwardInput),
        factor(measured.backwardWeight, analytic.backwardWeight)};
    // The first stage's W runs its ops' B work too (StageCostModel): the
    // one measurement scales both.
    if (begin == 0)
      factors.backwardInput = factors.backwardWeight;
    model.calibrate(begin, end, factors);
  }
}

/// Seconds an optimizer step takes per parameter byte on `device`: the
/// profile's measured steps over every weight's bytes where it has them,
/// else a pass over the weights, their gradients and the optimizer state
/// (`copies` of the weights) reading and writing each at the device's
/// memory bandwidth.
static double getOptimizerSecondsPerByte(const CostProfile *profile,
                                         const StageCostModel &model,
                                         const DeviceDescription &device,
                                         double copies) {
  if (profile && !profile->stages.empty() && profile->stages[0].optimizer) {
    double measured = 0.0;
    for (const StageProfile &stage : profile->stages)
      measured += *stage.optimizer;
    double bytes = model.getParameterBytes(0, model.size());
    return bytes > 0 ? measured * *getSecondsPerUnit(profile->timeUnit) / bytes
                     : 0.0;
  }
  return 2.0 * copies / device.memoryBandwidth;
}

/// Leaves the planned stages' costs on the module for pp-schedule: F, B, W,
/// each stage's optimizer step, the step's set-up (measured only) and the
/// slowest transfer between two ranks in seconds, the activation a
/// micro-batch holds (a recomputing stage: its inputs) and the stash in
/// bytes and, under a memory cap, what each rank may hold beside its
/// weights, gradients and optimizer state.
void StagePartitioner::recordPlannedCosts(const PlannerOptions &options,
                                          const PipelineTarget &target,
                                          const StageCostModel &model,
                                          ArrayRef<int64_t> starts,
                                          const CostProfile *profile) {
  int64_t numStages = starts.size();
  SmallVector<double> forward, backwardInput, backwardWeight, activation, stash;
  SmallVector<double> optimizer;
  SmallVector<double> staticBytes(target.devices.size(), 0.0);
  double copies =
      getWeightCopies(options.parameterCopies, target.weightVersions);
  double transfer = 0.0;
  for (int64_t stage = 0; stage < numStages; ++stage) {
    int64_t begin = starts[stage];
    int64_t end = stage + 1 < numStages ? starts[stage + 1] : model.size();
    int64_t rank = target.stageRank[stage];
    StageCost cost = model.getStageCost(begin, end, target.devices[rank]);
    forward.push_back(cost.forward);
    backwardInput.push_back(cost.backwardInput);
    backwardWeight.push_back(cost.backwardWeight);
    activation.push_back(recomputed[stage] ? cost.inputBytes
                                           : cost.activationBytes);
    stash.push_back(std::min(cost.stashBytes, activation.back()));
    optimizer.push_back(cost.parameterBytes *
                        getOptimizerSecondsPerByte(profile, model,
                                                   target.devices[rank],
                                                   options.parameterCopies));
    staticBytes[rank] += copies * cost.parameterBytes;
    if (stage + 1 < numStages && target.stageRank[stage + 1] != rank)
      transfer = std::max(
          transfer,
          model.getTransferTime(end, target.devices[rank],
                                target.devices[target.stageRank[stage + 1]]));
  }
  Builder b(func.getContext());
  auto module = func->getParentOfType<ModuleOp>();
  double overhead =
      profile ? profile->stepOverhead * *getSecondsPerUnit(profile->timeUnit)
              : 0.0;
  module->setAttr(
      kPlannedCostAttr,
      CostAttr::get(func.getContext(), b.getDenseF64ArrayAttr(forward),
                    b.getDenseF64ArrayAttr(backwardInput),
                    b.getDenseF64ArrayAttr(backwardWeight),
                    b.getF64FloatAttr(transfer),
                    b.getDenseF64ArrayAttr(activation),
                    b.getDenseF64ArrayAttr(stash), nullptr, nullptr, nullptr,
                    nullptr, nullptr, b.getDenseF64ArrayAttr(optimizer),
                    overhead > 0 ? b.getF64FloatAttr(overhead) : FloatAttr()));
  if (llvm::none_of(options.memoryCap, [](double cap) { return cap > 0; }))
    return;
  SmallVector<double> budget;
  for (auto [rank, cap] : llvm::enumerate(target.memoryCap))
    budget.push_back(std::max(cap - staticBytes[rank], 0.0));
  module->setAttr(kPlannedActivationCapAttr, b.getDenseF64ArrayAttr(budget));
}

LogicalResult StagePartitioner::planStages(const PlannerOptions &options,
                                           int64_t numStages,
                                           ArrayRef<int64_t> markerCuts) {
  FailureOr<PipelineTarget> target = describeTarget(options, numStages);
  if (failed(target))
    return failure();
  StageCostModel model(func, work);
  if (options.printCosts)
    printCosts(llvm::outs(), model, markerCuts);
  FailureOr<CostProfile> profile;
  if (!options.costFile.empty()) {
    profile =
        readStageProfile(func, options.costFile, *target,
                         std::max<int64_t>(getPlannedMicrobatches(options), 1));
    if (failed(profile))
      return failure();
  }

  SmallVector<StageLoad> loads;
  FailureOr<Partition> plan =
      planCuts(func, options, *target, model, markerCuts, loads);
  if (succeeded(plan) && succeeded(profile)) {
    // Re-plan with the per-op costs the measured partition calibrates.
    calibrateModel(*profile, *target, plan->starts, model);
    plan = planCuts(func, options, *target, model, markerCuts, loads);
  }
  if (failed(plan))
    return failure();
  recomputed = plan->recompute;
  if (options.recordCosts)
    recordPlannedCosts(options, *target, model, plan->starts,
                       succeeded(profile) ? &*profile : nullptr);
  if (options.printTable)
    printTable(
        llvm::outs(), model, *target, plan->starts, recomputed, loads,
        getWeightCopies(options.parameterCopies, target->weightVersions));
  for (auto [index, op] : llvm::enumerate(work))
    stageOf[op] = llvm::upper_bound(plan->starts, int64_t(index)) -
                  plan->starts.begin() - 1;
  return success();
}

LogicalResult StagePartitioner::assignStages(const PlannerOptions &options) {
  SmallVector<BoundaryOp> markers;
  SmallVector<int64_t> markerCuts; // markers as cuts before a work op
  for (Operation &op : func.front().without_terminator()) {
    if (auto marker = dyn_cast<BoundaryOp>(op)) {
      markers.push_back(marker);
      markerCuts.push_back(work.size());
    } else if (isStageWork(op)) {
      work.push_back(&op);
    }
  }
  if (work.empty())
    return func.emitError("the training step has no ops to partition");
  if (!func.front().getOps<StageOp>().empty())
    return func.emitError("the training step is already partitioned");
  FailureOr<int64_t> numStages = countStages(options, markers, markerCuts);
  if (failed(numStages) || failed(planStages(options, *numStages, markerCuts)))
    return failure();
  for (BoundaryOp marker : markers) {
    marker.getOutput().replaceAllUsesWith(marker.getInput());
    marker.erase();
  }
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

  // New values of the step's state: results of the stage computing them,
  // which no later stage reads (the runtime keeps them in that stage).
  DenseSet<Value> stateUpdates;
  for (OpOperand &operand : terminator->getOpOperands())
    if (func.getResultAttr(operand.getOperandNumber(), kStateAttr))
      stateUpdates.insert(operand.get());

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
    SmallVector<Value> updates;
    for (Operation *op : ops)
      for (Value result : op->getResults())
        if (stateUpdates.contains(result))
          updates.push_back(result);
        else if (lastUse.lookup(result) > stage)
          outputs.push_back(result);
    carried = outputs;
    // The state updates come last, after the values later stages read.
    llvm::append_range(outputs, updates);

    SmallVector<Value> operands = llvm::map_to_vector(
        inputs, [&](Value v) { return outer.lookup(v) ? outer.lookup(v) : v; });
    Location loc = ops.empty() ? func.getLoc() : ops.front()->getLoc();
    auto stageOp = StageOp::create(builder, loc, ValueRange(outputs).getTypes(),
                                   stage, recomputed[stage], operands);
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

/// Each state is read and updated by one stage, which keeps it: the
/// runtime holds a state's value where it is updated.
LogicalResult StagePartitioner::checkStatesLocal() {
  Block &body = func.front();
  Operation *terminator = body.getTerminator();
  for (OpOperand &operand : terminator->getOpOperands()) {
    auto arg = func.getResultAttrOfType<IntegerAttr>(operand.getOperandNumber(),
                                                     kStateAttr);
    if (!arg)
      continue;
    Operation *update = operand.get().getDefiningOp();
    if (!update || !stageOf.count(update))
      return terminator->emitError("result #")
             << operand.getOperandNumber() << " updates state argument #"
             << arg.getInt() << " but no op of the step computes it";
    int64_t stage = stageOf.lookup(update);
    for (Operation *user : func.getArgument(arg.getInt()).getUsers()) {
      Operation *reader = body.findAncestorOpInBlock(*user);
      if (!stageOf.count(reader) || stageOf.lookup(reader) == stage)
        continue;
      InFlightDiagnostic diag = reader->emitError("reads state argument #")
                                << arg.getInt() << " in stage "
                                << stageOf.lookup(reader) << ", but stage "
                                << stage << " updates it; a state must be "
                                << "read and updated in one stage";
      diag.attachNote(update->getLoc()) << "updated here";
      return diag;
    }
  }
  return success();
}

LogicalResult StagePartitioner::run(const PlannerOptions &options) {
  if (failed(assignStages(options)) || failed(checkStatesLocal()))
    return failure();
  int64_t numStages = 1 + llvm::max_element(stageOf, [](auto a, auto b) {
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
    if (!func)
      return signalPassFailure();
    PlannerOptions options;
    options.numStages = numStages;
    options.numRanks = numRanks;
    options.numMicrobatches = numMicrobatches;
    options.schedule = schedule;
    options.devices = device;
    options.deviceFile = deviceFile;
    options.costFile = costFile;
    options.memoryCap = memoryCap;
    options.parameterCopies = parameterCopies;
    options.recompute = recompute;
    options.printTable = printTable;
    options.printCosts = printCosts;
    options.recordCosts = recordCosts;
    if (failed(StagePartitioner(func).run(options)))
      signalPassFailure();
  }
};
} // namespace
