//===- PipeDream2BW.cpp - the PipeDream-2BW schedule ----------------------===//
//
// PipeDream-2BW (Narayanan et al., ICML'21): 1F1B without a flush between
// steps, each stage keeping two weight versions. The forward and backward
// of every micro-batch of step t read version t - 1 and the update makes
// W(t + 1) = W(t) - lr * grad(W(t - 1)), so step t + 1's forwards need
// nothing from step t's update and run while step t's backwards drain.
// The schedule holds one step's call in the no-flush order: the warm-up
// forwards run in the first step only (`first_step`), and the cool-down
// pairs each backward with a forward of the next step (`next_step`),
// skipped in the last step; it is marked `weight_versions = 2`. Its steady
// state, the steps run back to back, is the 1F1B order over the
// micro-batches of many steps, timed here and reported in the note.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// The 1F1B order of `problem` with p - r - 1 warm-up forwards on rank r.
static SmallVector<SmallVector<ScheduledAction>>
getOneFOneBRanks(const ScheduleProblem &problem) {
  int64_t p = problem.numStages;
  SmallVector<SmallVector<ScheduledAction>> ranks(p);
  for (int64_t stage = 0; stage < p; ++stage)
    appendOneFOneBSteps(ranks[stage], problem, stage, p - stage - 1);
  return ranks;
}

/// When the last of `steps` steps run back to back without a flush ends.
static FailureOr<double> getNoFlushMakespan(const ScheduleProblem &problem,
                                            const ActionCosts &costs,
                                            int64_t steps) {
  ScheduleProblem unrolled = problem;
  unrolled.numMicrobatches = steps * problem.numMicrobatches;
  ScheduleTiming timing(problem.numStages, unrolled.numMicrobatches);
  if (failed(timing.runComputeOnly(getOneFOneBRanks(unrolled),
                                   identityPlacement(problem), costs,
                                   /*recordIntervals=*/false)))
    return failure();
  double makespan = 0.0;
  for (int64_t rank = 0; rank < problem.numStages; ++rank)
    makespan = std::max(makespan, timing.getRankEnd(rank));
  return makespan;
}

/// The steady state's time per step and bubble (idle over all ranks' time):
/// the difference between 3 and 2 steps back to back.
static FailureOr<std::pair<double, double>>
getSteadyState(const ScheduleProblem &problem, const ActionCosts &costs) {
  FailureOr<double> two = getNoFlushMakespan(problem, costs, 2);
  FailureOr<double> three = getNoFlushMakespan(problem, costs, 3);
  if (failed(two) || failed(three))
    return failure();
  double period = *three - *two;
  double busy = 0.0;
  for (int64_t stage = 0; stage < problem.numStages; ++stage)
    busy +=
        problem.numMicrobatches * (costs.duration(Phase::forward, stage, 0) +
                                   costs.duration(Phase::backward, stage, 0));
  double bubble = period > 0 ? 1.0 - busy / (period * problem.numStages) : 0.0;
  return std::make_pair(period, std::max(bubble, 0.0));
}

/// One rank's call of the no-flush order: 1F1B with `warmup` warm-up
/// forwards, run in the first step only, and the cool-down's backwards
/// each after the forward of the next step's micro-batch that the next
/// call's warm-up would run. With one step it is 1F1B.
static SmallVector<ScheduledAction>
getNoFlushSteps(const ScheduleProblem &problem, int64_t stage, int64_t warmup) {
  int64_t m = problem.numMicrobatches;
  SmallVector<ScheduledAction> actions;
  for (int64_t mb = 0; mb < warmup; ++mb)
    actions.push_back({Phase::forward, stage, mb, StepPart::firstOnly});
  for (int64_t k = 0; k < m; ++k) {
    // Pair k's forward: this step's micro-batch warmup + k, or in the
    // cool-down the next step's k - (m - warmup).
    if (k < m - warmup)
      actions.push_back({Phase::forward, stage, warmup + k});
    else
      actions.push_back(
          {Phase::forward, stage, k - (m - warmup), StepPart::next});
    appendBackward(actions, problem, stage, k);
  }
  return actions;
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generatePipeDream2BW(const ScheduleProblem &problem) {
  if (llvm::Error error = requireOneStagePerRank(problem, "pipedream-2bw"))
    return std::move(error);
  int64_t p = problem.numStages, m = problem.numMicrobatches;
  if (m < p)
    return ScheduleError()
           << "pipedream-2bw needs at least one micro-batch per "
              "stage (got "
           << m << " for " << p
           << " stages), so that each step's new weight version "
              "is made before the next step's forwards read it";
  ActionCosts costs(problem.getCostOrUnit());
  // Its steady state runs step after step: every step's micro-batches must
  // cost alike.
  if (!costs.isUniform())
    return ScheduleError() << "pipedream-2bw needs costs that are the same "
                              "for every micro-batch";
  GeneratedSchedule schedule{identityPlacement(problem), {}};
  for (int64_t stage = 0; stage < p; ++stage)
    schedule.ranks.push_back(getNoFlushSteps(problem, stage, p - stage - 1));
  schedule.weightVersions = 2;
  FailureOr<std::pair<double, double>> steady = getSteadyState(problem, costs);
  if (failed(steady))
    return ScheduleError() << "pipedream-2bw: the steps run back to back "
                              "deadlock";
  schedule.note =
      llvm::formatv(
          "pipedream-2bw steady state (steps back to back, no flush): {0} per "
          "step of {1} micro-batches, bubble {2:P1}",
          formatQuantity(steady->first), m, steady->second)
          .str();
  return schedule;
}
