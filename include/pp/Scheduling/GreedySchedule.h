//===- GreedySchedule.h - list schedules with bubbles filled ----*- C++ -*-===//
//
// A list scheduler over split backwards: ranks take the action that can
// start first, forwards only within a per-rank memory limit, and weight
// gradients fill the time no other action can use. `auto` builds a family
// of them; `greedy` is one of them as a named schedule.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_GREEDYSCHEDULE_H
#define PP_SCHEDULING_GREEDYSCHEDULE_H

#include "pp/Scheduling/ScheduleEvaluator.h"

namespace mlir::pp::sched {

/// What a greedy list schedule trades.
struct GreedyPolicy {
  /// Per rank: the most activation memory its forwards may make it hold.
  SmallVector<double> memoryLimit;
  /// Run weight gradients as soon as they can start instead of in idle
  /// time only.
  bool eagerWeights = false;
  /// On ties, run forwards (of earlier stages first) before input
  /// gradients, as a critical-path list schedule does: a forward's path to
  /// the end of the step is the longer.
  bool forwardsFirst = false;
};

/// The list schedule of `problem` on `stageRank` under `policy`: repeatedly
/// appends, over all ranks, the action that can start first; on ties input
/// gradients go first (they unblock the stage before), then forwards of
/// later stages, then weight gradients. Each stage runs its micro-batches of
/// a phase in order. Fails if the memory limit leaves no rank anything to
/// do.
FailureOr<GeneratedSchedule> buildGreedySchedule(const ScheduleProblem &problem,
                                                 const ActionCosts &costs,
                                                 ArrayRef<int64_t> stageRank,
                                                 const GreedyPolicy &policy);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_GREEDYSCHEDULE_H
