//===- NoFlushSteps.h - a no-flush schedule's steps back to back -*- C++
//-*-===//
//
// A schedule with `first_step` and `next_step` actions (PipeDream-2BW,
// docs/PipeDream2BW.md) describes one call of a run whose steps follow each
// other without a flush: the first call also runs the warm-up, every call
// but the last runs the next step's first forwards. These helpers check
// that form and write a run of several steps out as one schedule, so that
// the verifier and the simulator judge the steps as they really run.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_NOFLUSHSTEPS_H
#define PP_DIALECT_PP_ANALYSIS_NOFLUSHSTEPS_H

#include "pp/Dialect/PP/IR/PPOps.h"

namespace mlir::pp {

/// Whether `schedule` runs its steps without a flush (has `first_step` or
/// `next_step` actions).
bool runsWithoutFlush(ScheduleOp schedule);

/// Checks that each rank's `next_step` actions repeat its `first_step`
/// actions in order, so that every step runs each of its actions once (the
/// next step's call skips what the previous call did for it), and that each
/// comes after the step's own actions of its stage and micro-batch, whose
/// buffers (slot mb) it overwrites. Reports a located error otherwise.
LogicalResult verifyNextStepActions(ScheduleOp schedule);

/// A copy of `schedule`, inserted right after it, of `steps` calls run back
/// to back as one step of `steps` times the micro-batches: micro-batch j of
/// step s is s * m + j, the first call keeps the `first_step` actions, the
/// last drops the `next_step` ones, and only the last call updates the
/// weights (the earlier updates come before every action that needs them).
/// With one step it is the schedule as a run of one step runs it. The
/// caller erases it.
ScheduleOp buildBackToBack(ScheduleOp schedule, int64_t steps);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_NOFLUSHSTEPS_H
