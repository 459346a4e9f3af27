//===- Simulate.cpp - cost-aware simulation of pipeline schedules ---------===//
//
// Runs each schedule with its costs and reports makespan, idle time per
// rank, bubble fraction and peak activation memory.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSIMULATE
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

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
      busy += costs.duration(action.phase, action.stage);
  }
  return busy;
}

/// Simulates `schedule` and records what it found; fails on a deadlock.
/// `allReduceCost` has no entry (free), one (every stage) or one per stage.
static LogicalResult simulate(ScheduleOp schedule, TransferSemantics semantics,
                              ArrayRef<double> allReduceCost) {
  int64_t numCosts = allReduceCost.size();
  if (numCosts > 1 && numCosts != schedule.getNumStages())
    return schedule.emitError("all-reduce-cost has ")
           << numCosts << " values but the schedule has "
           << schedule.getNumStages() << " stages";
  ActionCosts costs(schedule.getCostOrUnit());
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
  return success();
}

namespace {
struct SimulatePass : pp::impl::PPSimulateBase<SimulatePass> {
  using Base::Base;
  void runOnOperation() override {
    if (llvm::any_of(allReduceCost, [](double c) { return c < 0; })) {
      getOperation().emitError("all-reduce-cost must not be negative");
      return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](ScheduleOp schedule) {
      return WalkResult(simulate(schedule, semantics, allReduceCost));
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
