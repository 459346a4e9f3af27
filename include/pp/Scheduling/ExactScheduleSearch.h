//===- ExactScheduleSearch.h - branch and bound over schedules --*- C++ -*-===//
//
// Finds the schedule with the least makespan for a placement, the costs and
// the ranks' memory caps by searching all of them (with split backwards),
// for the small problems where that is affordable.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_EXACTSCHEDULESEARCH_H
#define PP_SCHEDULING_EXACTSCHEDULESEARCH_H

#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include <optional>

namespace mlir::pp::sched {

/// What a search over all schedules of one placement found.
struct ExactSearchResult {
  /// The fastest schedule found that is faster than the bound the search
  /// was given; none if it found nothing faster.
  std::optional<GeneratedSchedule> schedule;
  double makespan = 0.0;
  /// Whether the search finished within its node budget: then no schedule
  /// on the placement beats `schedule`, or the given bound if there is none.
  bool exhaustive = false;
  /// Search states expanded.
  int64_t nodes = 0;
};

/// Searches every schedule of `problem` whose stage s runs on
/// `stageRank[s]`, with backwards split into B and W (no slower and holding
/// no more memory than fused ones), under `costs` and with no rank holding
/// more activation memory than its cap in `problem`, for one faster than
/// `upperBound`. Gives up after expanding `nodeBudget` states.
///
/// Micro-batches cost the same, so each stage runs the F's, B's and W's of
/// its micro-batches in increasing order, and a search state is how many of
/// each a stage has run plus the times that matter later (rank clocks,
/// results in flight to other ranks). Every schedule is reached by appending
/// actions to their ranks, each starting as soon as its rank is free and
/// its inputs have arrived. States are pruned by a critical-path and a
/// per-rank workload bound, and by an earlier state with the same counts
/// (hence the same memory) whose times are all no later.
ExactSearchResult searchFastestSchedule(const ScheduleProblem &problem,
                                        const ActionCosts &costs,
                                        ArrayRef<int64_t> stageRank,
                                        double upperBound, int64_t nodeBudget);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_EXACTSCHEDULESEARCH_H
