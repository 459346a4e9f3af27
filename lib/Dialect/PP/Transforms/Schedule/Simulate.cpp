//===- Simulate.cpp - cost-aware simulation of pipeline schedules ---------===//
//
// Runs each schedule with its costs and reports makespan, idle time per
// rank, bubble fraction and peak activation memory.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/NoFlushSteps.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/Analysis/StaticMemory.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"

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

/// How long `rank` computes: an overlapped backward adds only the time it
/// runs past its forward.
static double getBusyTime(const ScheduleSimulator &simulator,
                          const ActionCosts &costs, int64_t rank) {
  ArrayRef<TimedAction> actions = simulator.getTimedActions(rank);
  ArrayRef<ScheduleSimulator::Interval> times = simulator.getIntervals(rank);
  double busy = 0.0;
  for (auto [i, action] : llvm::enumerate(actions)) {
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
    totals.push_back(memory.total());
  }
  schedule->setAttr(
      "pp.static_memory",
      Builder(schedule.getContext()).getDenseF64ArrayAttr(totals));
}

/// Simulates `schedule` and records what it found; fails on a deadlock.
/// `allReduceCost` has no entry (free), one (every stage) or one per stage.
static LogicalResult simulate(ScheduleOp schedule, TransferSemantics semantics,
                              ArrayRef<double> allReduceCost,
                              OptimizerKind optimizer) {
  int64_t numCosts = allReduceCost.size();
  if (numCosts > 1 && numCosts != schedule.getNumStages())
    return schedule.emitError("all-reduce-cost has ")
           << numCosts << " values but the schedule has "
           << schedule.getNumStages() << " stages";
  ActionCosts costs = getActionCosts(schedule.getCostOrUnit());
  costs.setAllReduceDurations(allReduceCost);
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
      << "makespan " << formatQuantity(makespan) << ", bubble "
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
    // Collected first: a no-flush schedule's steps are simulated on copies.
    SmallVector<ScheduleOp> schedules;
    getOperation().walk([&](ScheduleOp op) { schedules.push_back(op); });
    for (ScheduleOp schedule : schedules)
      if (failed(simulate(schedule, semantics, allReduceCost, kind)))
        return signalPassFailure();
  }
};
} // namespace
