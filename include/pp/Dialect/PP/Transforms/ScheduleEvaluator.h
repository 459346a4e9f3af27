//===- ScheduleEvaluator.h - fast timing of generated schedules -*- C++ -*-===//
//
// Times a compute-only GeneratedSchedule under a problem's costs, without IR:
// what `auto`, the greedy list scheduler and the local search compare
// candidates by. It follows pp-simulate's model of compute actions.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULEEVALUATOR_H
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULEEVALUATOR_H

#include "pp/Dialect/PP/Analysis/ScheduleCost.h"
#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

#include <limits>
#include <optional>
#include <vector>

namespace mlir::pp {

/// The durations and memory changes of every (phase, stage) and the
/// transfer time, read from a CostAttr once: searches query them millions of
/// times.
class ActionCosts {
public:
  ActionCosts(const ScheduleCosts &costs, int64_t numStages);

  double duration(Phase phase, int64_t stage) const {
    return durations[index(phase, stage)];
  }
  double memoryDelta(Phase phase, int64_t stage) const {
    return deltas[index(phase, stage)];
  }
  double transferTime() const { return transfer; }

private:
  size_t index(Phase phase, int64_t stage) const {
    return static_cast<size_t>(phase) * stages + stage;
  }

  int64_t stages;
  SmallVector<double> durations, deltas;
  double transfer;
};

/// The most activation memory a rank holds running `actions` in order (it
/// depends on the order alone, not on when they run).
double peakMemory(ArrayRef<ScheduledAction> actions, const ActionCosts &costs);

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

/// Times the actions of a schedule: each rank runs its list in order, an
/// action starts when its rank is free and its inputs are there (a
/// transfer's time later across ranks).
class ScheduleEvaluator {
public:
  ScheduleEvaluator(const ScheduleProblem &problem, const ActionCosts &costs,
                    ArrayRef<int64_t> stageRank);

  /// Times `schedule`; fails if its ranks wait for each other forever.
  /// With `starts`, also returns when each action starts, per rank.
  FailureOr<Evaluation>
  evaluate(const GeneratedSchedule &schedule,
           SmallVectorImpl<SmallVector<double>> *starts = nullptr);

  /// Forgets every recorded action.
  void reset();
  /// When the inputs of `a` are available, if they are recorded yet.
  std::optional<double> readyTime(const ScheduledAction &a) const;
  /// Records that `a` ended at `end`.
  void record(const ScheduledAction &a, double end);

private:
  const ScheduleProblem &problem;
  const ActionCosts &costs;
  ArrayRef<int64_t> stageRank;
  std::vector<double> forwardEnd, backwardEnd;
};

inline std::optional<double>
ScheduleEvaluator::readyTime(const ScheduledAction &a) const {
  int64_t s = a.stage, m = problem.numMicrobatches;
  auto arrival = [&](int64_t from, double time) {
    return stageRank[from] == stageRank[s] ? time : time + costs.transferTime();
  };
  switch (a.phase) {
  case Phase::forward:
    if (s == 0)
      return 0.0;
    if (forwardEnd[(s - 1) * m + a.mb] < 0)
      return std::nullopt;
    return arrival(s - 1, forwardEnd[(s - 1) * m + a.mb]);
  case Phase::backward:
  case Phase::backward_input: {
    double own = forwardEnd[s * m + a.mb];
    if (own < 0)
      return std::nullopt;
    if (s == problem.numStages - 1)
      return own;
    double next = backwardEnd[(s + 1) * m + a.mb];
    if (next < 0)
      return std::nullopt;
    return std::max(own, arrival(s + 1, next));
  }
  case Phase::backward_weight:
    if (backwardEnd[s * m + a.mb] < 0)
      return std::nullopt;
    return backwardEnd[s * m + a.mb];
  }
  return std::nullopt;
}

inline void ScheduleEvaluator::record(const ScheduledAction &a, double end) {
  int64_t index = a.stage * problem.numMicrobatches + a.mb;
  if (a.phase == Phase::forward)
    forwardEnd[index] = end;
  else if (a.phase != Phase::backward_weight)
    backwardEnd[index] = end;
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULEEVALUATOR_H
