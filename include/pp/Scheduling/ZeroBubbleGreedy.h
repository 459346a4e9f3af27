//===- ZeroBubbleGreedy.h - Zero Bubble's heuristic schedule ----*- C++ -*-===//
//
// The heuristic of the Zero Bubble paper's "automatic scheduling" (Qi et
// al., ICLR 2024) on split backwards, one stage per rank: warm-up forwards
// that fill the time until the first backward comes back, then one forward
// per stage and one micro-batch's backwards per round, with weight gradients
// wherever a stage would wait for an input or needs memory. It is built
// micro-batch by micro-batch rather than by a list scheduler's clock, so it
// reaches orders `auto`'s list schedules (GreedySchedule.h) do not; `auto`
// times every variant as the program it emits.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_ZEROBUBBLEGREEDY_H
#define PP_SCHEDULING_ZEROBUBBLEGREEDY_H

#include "pp/Scheduling/ScheduleProblem.h"

namespace mlir::pp::sched {

/// The heuristic's three switches (eight variants).
struct ZeroBubblePolicy {
  /// A warm-up forward must end before the first backward reaches its stage
  /// (else it need only start before).
  bool warmupEndsBeforeBackward = true;
  /// A stage skips its forward of a round while it runs ahead of the next
  /// stage by two micro-batches and a forward, backward and transfer of
  /// time.
  bool holdBack = true;
  /// A stage waiting for its input always runs a weight gradient, even one
  /// that ends after the input arrives (else only while it has waited less
  /// than the stage that waited most).
  bool fillAlways = true;
};

/// Every combination of the switches.
SmallVector<ZeroBubblePolicy> getZeroBubblePolicies();

/// The heuristic's schedule of `problem` (split backwards, stage s on rank
/// s, within the problem's memory caps) with the durations and transfer
/// time of `costs`, which may charge transfers to compute actions; fails if
/// the problem has more stages than ranks or a cap leaves a stage unable to
/// go on.
FailureOr<GeneratedSchedule>
buildZeroBubbleGreedy(const ScheduleProblem &problem, const ActionCosts &costs,
                      const ZeroBubblePolicy &policy);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_ZEROBUBBLEGREEDY_H
