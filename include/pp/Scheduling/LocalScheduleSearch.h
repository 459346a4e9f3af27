//===- LocalScheduleSearch.h - improve a schedule by small moves -*- C++
//-*-===//
//
// A first-improvement local search over one schedule's per-rank orders:
// what `auto` runs on its best candidate.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_LOCALSCHEDULESEARCH_H
#define PP_SCHEDULING_LOCALSCHEDULESEARCH_H

#include "pp/Scheduling/ScheduleEvaluator.h"

namespace mlir::pp::sched {

/// Improves `schedule`, whose evaluation is `eval`, in place: where a rank
/// idles before an action, it moves one of the next few actions into the
/// gap or the waiting action a few places later, and keeps a move when the
/// schedule still runs, stays within every rank's memory cap and gets faster (a
/// smaller makespan, or the same with ranks that finish earlier in sum). Stops
/// when no move helps or after `maxEvaluations` timings. Returns how many moves
/// it kept.
int64_t improveSchedule(const ScheduleProblem &problem,
                        const ActionCosts &costs, GeneratedSchedule &schedule,
                        Evaluation &eval, int64_t maxEvaluations);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_LOCALSCHEDULESEARCH_H
