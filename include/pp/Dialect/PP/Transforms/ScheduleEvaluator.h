//===- ScheduleEvaluator.h - timing of generated schedules ------*- C++ -*-===//
//
// Times a compute-only GeneratedSchedule under a problem's costs with the one
// timing model (ScheduleTiming.h), without IR: what `auto`, `greedy` and the
// local search compare candidates by.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULEEVALUATOR_H
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULEEVALUATOR_H

#include "pp/Dialect/PP/Analysis/ScheduleTiming.h"
#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

#include <limits>

namespace mlir::pp {

/// How a compute-only schedule performs under the problem's costs.
struct Evaluation {
  double makespan = std::numeric_limits<double>::infinity();
  /// The sum of the ranks' finishing times: ties between equal makespans.
  double totalEnd = std::numeric_limits<double>::infinity();
  SmallVector<double> rankPeak; // the most activation memory each rank holds

  /// The most activation memory any rank holds.
  double peak() const {
    return rankPeak.empty() ? 0.0 : *llvm::max_element(rankPeak);
  }

  /// Whether no rank holds more than its cap in `problem`.
  bool fits(const ScheduleProblem &problem) const;

  /// Whether this is faster than `other`: a smaller makespan, or the same
  /// one with ranks that finish earlier in sum.
  bool betterThan(const Evaluation &other) const;
};

/// Times schedules of one problem and placement; keeps its buffers from one
/// schedule to the next, as searches time thousands.
class ScheduleEvaluator {
public:
  ScheduleEvaluator(const ScheduleProblem &problem, const ActionCosts &costs,
                    ArrayRef<int64_t> stageRank)
      : costs(costs), stageRank(stageRank),
        timing(problem.numStages, problem.numMicrobatches) {}

  /// Times `schedule`; fails if its ranks wait for each other forever.
  /// With `starts`, also returns when each action starts, per rank.
  FailureOr<Evaluation>
  evaluate(const GeneratedSchedule &schedule,
           SmallVectorImpl<SmallVector<double>> *starts = nullptr);

private:
  const ActionCosts &costs;
  SmallVector<int64_t> stageRank;
  ScheduleTiming timing;
};

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULEEVALUATOR_H
