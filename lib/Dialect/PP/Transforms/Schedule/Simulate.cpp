//===- Simulate.cpp - cost-aware simulation of pipeline schedules ---------===//
//
// Runs each schedule with its costs and reports makespan, idle time per
// rank, bubble fraction and peak activation memory.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/DeviceDescription.h"
#include "pp/Dialect/PP/Analysis/NoFlushSteps.h"
#include "pp/Dialect/PP/Analysis/ParamGathers.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/Analysis/StaticMemory.h"
#include "pp/Dialect/PP/Analysis/TensorParallelCollectives.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Scheduling/CollectiveCost.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSIMULATE
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

static std::string joinNumbers(ArrayRef<double> values) {
  return llvm::join(llvm::map_range(values, formatQuantity), ", ");
}

/// How long `rank` works: its set-up, computations and optimizer steps; an
/// overlapped backward adds only the time it runs past its forward.
static double getBusyTime(const ScheduleSimulator &simulator,
                          const ActionCosts &costs, int64_t rank) {
  ArrayRef<TimedAction> actions = simulator.getTimedActions(rank);
  ArrayRef<ScheduleSimulator::Interval> times = simulator.getIntervals(rank);
  double busy = costs.stepOverhead();
  for (auto [i, action] : llvm::enumerate(actions)) {
    if (action.kind == TimedAction::Kind::optimizerStep)
      busy += getDuration(costs, action);
    if (action.kind != TimedAction::Kind::compute)
      continue;
    if (action.overlapped)
      busy += std::max(0.0, times[i].end - times[i - 1].end);
    else
      busy += costs.duration(action.phase, action.stage, action.mb);
  }
  return busy;
}

/// When `steps` calls of no-flush `schedule` run back to back end, or
/// failure on a deadlock (pp-verify-schedule reports it at the actions).
static FailureOr<double> getBackToBackMakespan(ScheduleOp schedule,
                                               int64_t steps,
                                               const ActionCosts &costs,
                                               TransferSemantics semantics) {
  ScheduleOp run = buildBackToBack(schedule, steps);
  ScheduleSimulator simulator(run);
  FailureOr<double> makespan = failure();
  if (succeeded(simulator.run(costs, semantics)))
    makespan = simulator.getMakespan();
  run.erase();
  return makespan;
}

/// Reports a no-flush schedule's steady state: the time per step between
/// 2 and 3 steps back to back.
static LogicalResult reportSteadyState(ScheduleOp schedule,
                                       const ActionCosts &costs,
                                       TransferSemantics semantics) {
  FailureOr<double> two = getBackToBackMakespan(schedule, 2, costs, semantics);
  FailureOr<double> three =
      getBackToBackMakespan(schedule, 3, costs, semantics);
  if (failed(two) || failed(three))
    return schedule.emitError("deadlocks when its steps run back to back "
                              "without a flush; run pp-verify-schedule");
  emitRemark(schedule.getLoc())
      << "no flush: 3 steps back to back take " << formatQuantity(*three)
      << ", " << formatQuantity(*three - *two) << " per step in the steady "
      << "state";
  schedule->setAttr(
      "pp.steady_step",
      Builder(schedule.getContext()).getF64FloatAttr(*three - *two));
  return success();
}

/// How the ZeRO-3 stages of `rank` gather: for the step, at once per param,
/// or both where its stages differ; nothing without a ZeRO-3 stage.
static StringRef getGatherUnitText(ScheduleOp schedule, int64_t rank) {
  bool perStep = false, perParam = false;
  for (auto [stage, owner] : llvm::enumerate(schedule.getStageRank())) {
    if (owner != rank || schedule.getZeroStage(stage) != 3)
      continue;
    bool param = schedule.getZeroGatherUnit(stage) == ZeroGather::Param;
    perParam |= param;
    perStep |= !param;
  }
  if (perStep && perParam)
    return "for the step and at once, per param";
  if (perStep || perParam)
    return perParam ? "at once, per param" : "for the step";
  return "";
}

/// Reports each rank's weights, gradients and optimizer state, when the
/// schedule has its model.
static void reportStaticMemory(ScheduleOp schedule, OptimizerKind optimizer) {
  std::optional<SmallVector<SmallVector<WeightBuffer>>> weights =
      getStageWeights(schedule);
  if (!weights)
    return;
  SmallVector<StaticMemory> ranks =
      getRankStaticMemory(schedule, *weights, optimizer);
  InFlightDiagnostic remark = emitRemark(schedule.getLoc());
  remark << "static memory per rank (weights + gradients + optimizer state, "
            "bytes):";
  SmallVector<double> totals;
  for (auto [rank, memory] : llvm::enumerate(ranks)) {
    remark << (rank ? "; " : " ") << "rank " << rank << ": " << memory.weights
           << " + " << memory.gradients << " + " << memory.optimizer;
    if (StringRef unit = getGatherUnitText(schedule, rank); !unit.empty())
      remark << " (+ " << memory.gathered << " gathered " << unit << ")";
    totals.push_back(memory.total());
  }
  schedule->setAttr(
      "pp.static_memory",
      Builder(schedule.getContext()).getDenseF64ArrayAttr(totals));
}

/// Adds `extra` to every micro-batch's cost of (phase, stage); a fused
/// backward's goes to B (it takes B + W).
static void addCost(StageCosts &costs, Phase phase, int64_t stage,
                    double extra) {
  bool forward = phase == Phase::forward;
  bool weight = phase == Phase::backward_weight;
  SmallVector<double> &perStage = forward  ? costs.forward
                                  : weight ? costs.backwardWeight
                                           : costs.backwardInput;
  MicrobatchCosts &table = costs.perMicrobatch;
  SmallVector<double> &perMb = forward  ? table.forward
                               : weight ? table.backwardWeight
                                        : table.backwardInput;
  perStage[stage] += extra;
  for (int64_t mb = 0; mb < table.numMicrobatches && !perMb.empty(); ++mb)
    perMb[stage * table.numMicrobatches + mb] += extra;
}

/// Reports the tensor-parallel all-reduces of `schedule`'s stage functions
/// and each rank's bytes per step, and adds their time to `costs`.
static void addTensorParallelAllReduces(ScheduleOp schedule, StageCosts &costs,
                                        CollectiveLink link) {
  int64_t parts = getTensorParallelism(schedule);
  llvm::DenseMap<int64_t, AllReduceCount> counts =
      getTensorParallelAllReduces(schedule);
  if (parts <= 1 || counts.empty())
    return;
  SmallVector<int64_t> keys = llvm::to_vector(llvm::make_first_range(counts));
  llvm::sort(keys);
  InFlightDiagnostic remark = emitRemark(schedule.getLoc());
  remark << "tensor-parallel all-reduces per micro-batch (T = " << parts
         << "; count, bytes each device sends):";
  for (auto [i, key] : llvm::enumerate(keys)) {
    AllReduceCount count = counts[key];
    double sent = getRingAllReduceBytes(count.bytes, parts);
    auto phase = static_cast<Phase>(key % 4);
    remark << (i ? "; " : " ") << "s" << key / 4 << " " << stringifyPhase(phase)
           << " " << count.count << ", " << formatQuantity(sent);
    if (link.bandwidth > 0.0 || link.latency > 0.0)
      addCost(costs, phase, key / 4,
              count.count * link.latency +
                  (link.bandwidth > 0.0 ? sent / link.bandwidth : 0.0));
  }
  SmallVector<double> perRank(schedule.getNumRanks(), 0.0);
  ArrayRef<int64_t> stageRank = schedule.getStageRank();
  schedule.walk([&](ComputeOp compute) {
    int64_t key =
        compute.getStage() * 4 + static_cast<int64_t>(compute.getPhase());
    perRank[stageRank[compute.getStage()]] +=
        getRingAllReduceBytes(counts.lookup(key).bytes, parts);
  });
  remark << "; per rank and step: " << joinNumbers(perRank);
  schedule->setAttr(
      "pp.tp_all_reduce_bytes",
      Builder(schedule.getContext()).getDenseF64ArrayAttr(perRank));
}

/// Each stage's gradient all-reduce over the schedule's replicas on `link`
/// (a ring over the stage's local weight bytes), reported as a remark;
/// none for one replica or a schedule without its model.
static SmallVector<double> getDataParallelAllReduces(ScheduleOp schedule,
                                                     CollectiveLink link) {
  int64_t replicas = schedule.getNumReplicas().value_or(1);
  std::optional<SmallVector<SmallVector<WeightBuffer>>> weights =
      getStageWeights(schedule);
  if (replicas <= 1 || !weights)
    return {};
  SmallVector<double> bytes, times;
  for (ArrayRef<WeightBuffer> stage : *weights) {
    double sum = 0.0;
    for (WeightBuffer buffer : stage)
      sum += double(buffer.numel) * buffer.elementBytes;
    bytes.push_back(sum);
    times.push_back(getRingAllReduceTime(sum, replicas, link));
  }
  emitRemark(schedule.getLoc())
      << "data-parallel gradient all-reduce per stage (d = " << replicas
      << "; bytes, time): "
      << llvm::join(llvm::map_range(llvm::seq<size_t>(0, bytes.size()),
                                    [&](size_t stage) {
                                      return formatQuantity(bytes[stage]) +
                                             ", " +
                                             formatQuantity(times[stage]);
                                    }),
                    "; ");
  return times;
}

/// Adds to each compute of a stage gathered per param (ZeRO-3) one
/// all-gather per param its function reads: on `link` when given, else a
/// share of its stage's all-reduce time (`allReduce`, the whole weights') by
/// bytes.
static void addParamGathers(ScheduleOp schedule, StageCosts &costs,
                            ArrayRef<double> allReduce,
                            std::optional<CollectiveLink> link) {
  int64_t replicas = schedule.getNumReplicas().value_or(1);
  std::optional<SmallVector<SmallVector<WeightBuffer>>> weights =
      getStageWeights(schedule);
  if (replicas <= 1 || !weights || (!link && allReduce.empty()))
    return;
  llvm::DenseSet<std::pair<int64_t, int64_t>> timed; // (phase, stage)
  schedule.walk([&](ComputeOp compute) {
    int64_t stage = compute.getStage();
    auto phase = static_cast<int64_t>(compute.getPhase());
    if (schedule.getZeroGatherUnit(stage) != ZeroGather::Param ||
        !timed.insert({phase, stage}).second)
      return;
    double stageBytes = 0.0;
    for (WeightBuffer buffer : (*weights)[stage])
      stageBytes += double(buffer.numel) * buffer.elementBytes;
    double whole =
        allReduce.empty() ? 0.0 : allReduce[allReduce.size() == 1 ? 0 : stage];
    double time = 0.0;
    for (ParamRead read :
         getFunctionGathers(lookupComputeFunction(compute)).reads)
      time += link ? getRingAllReduceTime(read.bytes, replicas, *link) / 2
                   : whole / 2 * (read.bytes / stageBytes);
    addCost(costs, compute.getPhase(), stage, time);
  });
}

/// What the collectives cost: the options, or where they leave a cost
/// unset, the links of `devices` (none: free).
struct CollectiveCosts {
  ArrayRef<double> allReduceCost;
  CollectiveLink tensorParallel;
  std::optional<CollectiveLink> devices;
};

/// Simulates `schedule` and records what it found; fails on a deadlock.
/// `allReduceCost` has no entry (free, or the devices'), one (every stage)
/// or one per stage.
static LogicalResult simulate(ScheduleOp schedule, TransferSemantics semantics,
                              const CollectiveCosts &collectives,
                              OptimizerKind optimizer) {
  ArrayRef<double> allReduceCost = collectives.allReduceCost;
  int64_t numCosts = allReduceCost.size();
  if (numCosts > 1 && numCosts != schedule.getNumStages())
    return schedule.emitError("all-reduce-cost has ")
           << numCosts << " values but the schedule has "
           << schedule.getNumStages() << " stages";
  StageCosts stageCosts = getStageCosts(schedule.getCostOrUnit());
  CollectiveLink link = collectives.tensorParallel;
  if (collectives.devices && link.bandwidth == 0.0 && link.latency == 0.0)
    link = *collectives.devices;
  addTensorParallelAllReduces(schedule, stageCosts, link);
  SmallVector<double> dataParallel;
  bool fromDevices = collectives.devices && allReduceCost.empty();
  if (fromDevices)
    dataParallel = getDataParallelAllReduces(schedule, *collectives.devices);
  ArrayRef<double> allReduce =
      allReduceCost.empty() ? ArrayRef(dataParallel) : allReduceCost;
  if (schedule.hasParamGathers())
    addParamGathers(schedule, stageCosts, allReduceCost,
                    fromDevices ? collectives.devices : std::nullopt);
  ActionCosts costs(stageCosts);
  costs.setAllReduceDurations(allReduce);
  ScheduleSimulator simulator(schedule);
  if (failed(simulator.run(costs, semantics))) {
    simulator.emitDeadlockError().attachNote(schedule.getLoc())
        << "while simulating this schedule with "
        << stringifyTransferSemantics(semantics) << " transfers";
    return failure();
  }
  double makespan = simulator.getMakespan();
  SmallVector<double> idle, peak;
  double totalIdle = 0.0;
  for (int64_t rank = 0; rank < simulator.getNumRanks(); ++rank) {
    idle.push_back(makespan - getBusyTime(simulator, costs, rank));
    totalIdle += idle.back();
    peak.push_back(simulator.getPeakMemory(rank));
  }
  double bubble =
      makespan > 0 ? totalIdle / (makespan * simulator.getNumRanks()) : 0.0;
  // At the location only: printing the schedule would bury the numbers.
  emitRemark(schedule.getLoc())
      << "makespan " << formatPrecisely(makespan) << ", bubble "
      << llvm::formatv("{0:P1}", bubble)
      << " (idle per rank: " << joinNumbers(idle)
      << "), peak activation memory per rank: " << joinNumbers(peak);
  Builder b(schedule.getContext());
  schedule->setAttr("pp.makespan", b.getF64FloatAttr(makespan));
  schedule->setAttr("pp.idle", b.getDenseF64ArrayAttr(idle));
  schedule->setAttr("pp.peak_memory", b.getDenseF64ArrayAttr(peak));
  reportStaticMemory(schedule, optimizer);
  if (runsWithoutFlush(schedule))
    return reportSteadyState(schedule, costs, semantics);
  return success();
}

namespace {
struct SimulatePass : pp::impl::PPSimulateBase<SimulatePass> {
  using Base::Base;
  void runOnOperation() override {
    for (double cost : allReduceCost)
      if (!isValidQuantity(cost)) {
        getOperation().emitError("all-reduce-cost must be a finite number "
                                 "between 0 and ")
            << kMaxQuantityText << ", got " << formatQuantity(cost);
        return signalPassFailure();
      }
    if (optimizer != "sgd" && optimizer != "adam") {
      getOperation().emitError("optimizer must be sgd or adam, got '")
          << optimizer << "'";
      return signalPassFailure();
    }
    OptimizerKind kind =
        optimizer == "adam" ? OptimizerKind::adam : OptimizerKind::sgd;
    for (double value :
         {double(tensorParallelBandwidth), double(tensorParallelLatency)})
      if (!isValidQuantity(value)) {
        getOperation().emitError("tensor-parallel-bandwidth and -latency "
                                 "must be finite numbers between 0 and ")
            << kMaxQuantityText << ", got " << formatQuantity(value);
        return signalPassFailure();
      }
    std::optional<double> seconds = getSecondsPerUnit(timeUnit);
    if (!seconds) {
      getOperation().emitError("time-unit must be s, ms, us or ns, got '")
          << timeUnit << "'";
      return signalPassFailure();
    }
    // Collected first: a no-flush schedule's steps are simulated on copies.
    SmallVector<ScheduleOp> schedules;
    getOperation().walk([&](ScheduleOp op) { schedules.push_back(op); });
    for (ScheduleOp schedule : schedules) {
      CollectiveCosts collectives{
          allReduceCost, {tensorParallelBandwidth, tensorParallelLatency}, {}};
      if (!device.empty() || !deviceFile.empty()) {
        llvm::Expected<SmallVector<DeviceDescription>> devices =
            resolveDevices(device, deviceFile, schedule.getNumRanks());
        if (!devices) {
          schedule.emitError(llvm::toString(devices.takeError()));
          return signalPassFailure();
        }
        collectives.devices = CollectiveLink::getSlowest(*devices, *seconds);
      }
      TransferSemantics chosen = getPassSemantics(semantics, schedule);
      if (failed(simulate(schedule, chosen, collectives, kind)))
        return signalPassFailure();
    }
  }
};
} // namespace
