//===- ScheduleEvaluator.h - timing of generated schedules ------*- C++ -*-===//
//
// Times a compute-only GeneratedSchedule under a problem's costs with the one
// timing model (ScheduleTiming.h), without IR: what `auto`, `greedy` and the
// local search compare candidates by, and `simulate`'s makespan, bubble and
// peak memory per rank. Under the problem's rendezvous semantics a schedule
// is timed as the program pp-insert-transfers makes of it (TransferOrder.h);
// under async semantics the compute-only run is that program's timing
// (each input arrives the transfer time after it is computed).
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULEEVALUATOR_H
#define PP_SCHEDULING_SCHEDULEEVALUATOR_H

#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include <limits>

namespace mlir::pp::sched {

/// How a compute-only schedule performs under the problem's costs.
struct Evaluation {
  double makespan = std::numeric_limits<double>::infinity();
  /// The sum of the ranks' finishing times: ties between equal makespans.
  double totalEnd = std::numeric_limits<double>::infinity();
  SmallVector<double> rankPeak; // the most activation memory each rank holds
  SmallVector<double> rankBusy; // how long each rank computes

  /// The most activation memory any rank holds.
  double peak() const {
    return rankPeak.empty() ? 0.0 : *llvm::max_element(rankPeak);
  }

  /// The fraction of the ranks' time until the makespan they idle.
  double bubble() const;

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
        optimizer(costs.getOptimizerPerRank(stageRank)),
        semantics(problem.semantics),
        timing(problem.numStages, problem.numMicrobatches),
        program(problem.numStages, problem.numMicrobatches) {}

  /// Times `schedule`; fails if its ranks wait for each other forever.
  /// With `starts`, also returns when each compute action starts, per rank.
  FailureOr<Evaluation>
  evaluate(const GeneratedSchedule &schedule,
           SmallVectorImpl<SmallVector<double>> *starts = nullptr);

private:
  const ActionCosts &costs;
  SmallVector<int64_t> stageRank;
  /// Per rank: its stages' optimizer steps, which end its program.
  SmallVector<double> optimizer;
  TransferSemantics semantics;
  /// The compute-only run (memory, dependencies, and the async timing)
  /// and, under rendezvous semantics, the run of the program with its
  /// transfers.
  ScheduleTiming timing, program;
};

/// Per stage, the most micro-batches whose activations its rank holds at
/// once under `schedule`: the stage's peak memory when each forward holds
/// one unit until its input gradient (unit costs, no stash). What the stage
/// planner sizes a stage's activation memory by.
SmallVector<double> countInFlight(const GeneratedSchedule &schedule);

/// Times `schedule` under `problem`'s costs: its makespan, bubble and peak
/// activation memory per rank; fails if its ranks wait for each other
/// forever.
llvm::Expected<Evaluation> simulate(const ScheduleProblem &problem,
                                    const GeneratedSchedule &schedule);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_SCHEDULEEVALUATOR_H
