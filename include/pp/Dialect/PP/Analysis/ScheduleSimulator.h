//===- ScheduleSimulator.h - run a pp.schedule in lock step -----*- C++ -*-===//
//
// Reads the program of a `pp.schedule` (ScheduleProgram.h) into the timing
// model of ScheduleTiming.h and maps its results back to the ops, so that the
// verifier (deadlock freedom), pp-simulate and the exporters (timelines)
// agree on what a schedule does and report it at the actions.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_SCHEDULESIMULATOR_H
#define PP_DIALECT_PP_ANALYSIS_SCHEDULESIMULATOR_H

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Scheduling/Program.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <optional>

namespace mlir::pp {

//===----------------------------------------------------------------------===//
// ScheduleSimulator
//===----------------------------------------------------------------------===//

/// Runs the ranks of a schedule against each other (see ScheduleTiming).
class ScheduleSimulator {
public:
  using Interval = sched::ScheduleTiming::Interval;

  /// Collects the actions of every rank and pairs each receive with the
  /// first send of the same transfer on the receive's peer rank.
  explicit ScheduleSimulator(ScheduleOp schedule);

  int64_t getNumRanks() const { return timing.getNumRanks(); }

  /// Runs every rank as far as it gets under `costs`. Succeeds if all ranks
  /// finish; fails silently on a deadlock (see emitDeadlockError).
  LogicalResult run(const sched::ActionCosts &costs,
                    TransferSemantics semantics = TransferSemantics::async) {
    return timing.run(costs, semantics);
  }
  /// The same with unit costs: F, B and W take 1, a fused backward 2,
  /// everything else 0, and transfers arrive at once.
  LogicalResult run(TransferSemantics semantics = TransferSemantics::async) {
    return run(unitCosts, semantics);
  }

  /// The actions of `rank` in order, as ops and as the timing model sees
  /// them.
  ArrayRef<Operation *> getActions(int64_t rank) const {
    return ArrayRef<Operation *>(ops).slice(timing.getFirstAction(rank),
                                            timing.getNumActions(rank));
  }
  ArrayRef<sched::TimedAction> getTimedActions(int64_t rank) const {
    return timing.getActions(rank);
  }

  /// When the actions of `rank` ran, after a successful run.
  ArrayRef<Interval> getIntervals(int64_t rank) const {
    return timing.getIntervals(rank);
  }

  /// The time the last action ends, after a successful run.
  double getMakespan() const { return timing.getMakespan(); }
  /// The most activation memory `rank` held, after a successful run.
  double getPeakMemory(int64_t rank) const {
    return timing.getPeakMemory(rank);
  }

  /// After a run, the action `rank` is stuck at (a receive, or under
  /// rendezvous semantics a send), or null if it finished.
  Operation *getBlockedAction(int64_t rank) const {
    std::optional<int64_t> id = timing.getBlockedAction(rank);
    return id ? ops[*id] : nullptr;
  }

  /// After a failed run, the ranks that wait for each other (see
  /// ScheduleTiming::getWaitChain).
  SmallVector<int64_t> getWaitChain() const { return timing.getWaitChain(); }

  /// Runs with unit costs for an exported timeline, reporting a deadlock
  /// with a note at the schedule.
  LogicalResult runForTimeline(Operation *schedule);

  /// After a failed run, reports the deadlock at the transfer the lowest
  /// blocked rank waits at, naming the chain of ranks that wait for each
  /// other, with a note at each other blocked transfer in the chain.
  InFlightDiagnostic emitDeadlockError() const;

private:
  ScheduleOp schedule;
  /// All actions, rank by rank, in the order of `timing`'s, and where each
  /// is in the schedule's program.
  std::vector<Operation *> ops;
  std::vector<sched::ProgramSite> sites;
  sched::ScheduleTiming timing;
  sched::ActionCosts unitCosts;
};

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_SCHEDULESIMULATOR_H
