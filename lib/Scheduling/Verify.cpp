//===- Verify.cpp - check a plain schedule against its problem ------------===//
//
// The checks of a schedule that need no IR: placement, every action once,
// dependencies and deadlock freedom under the timing model, memory caps.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <string>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// An action as messages name it: "forward stage 1 mb 2".
static std::string describe(const ScheduledAction &action) {
  return (stringifyPhase(action.phase) + " stage " + llvm::Twine(action.stage) +
          " mb " + llvm::Twine(action.mb))
      .str();
}

/// Every stage on one of the problem's ranks, and one action list per rank.
static llvm::Error verifyPlacement(const ScheduleProblem &problem,
                                   const GeneratedSchedule &schedule) {
  if (static_cast<int64_t>(schedule.stageRank.size()) != problem.numStages)
    return ScheduleError() << "the placement has " << schedule.stageRank.size()
                           << " stages, expected " << problem.numStages;
  if (static_cast<int64_t>(schedule.ranks.size()) != problem.numRanks)
    return ScheduleError() << "the schedule has " << schedule.ranks.size()
                           << " ranks, expected " << problem.numRanks;
  for (auto [stage, rank] : llvm::enumerate(schedule.stageRank))
    if (rank < 0 || rank >= problem.numRanks)
      return ScheduleError()
             << "stage " << stage << " is placed on rank " << rank
             << ", but there are " << problem.numRanks << " ranks";
  return llvm::Error::success();
}

namespace {
/// How often each (phase, stage, micro-batch) runs in a step, and how often
/// on behalf of the next step (no-flush schedules).
class ActionCounts {
public:
  explicit ActionCounts(const ScheduleProblem &problem)
      : numStages(problem.numStages), numMicrobatches(problem.numMicrobatches),
        counts(4 * numStages * numMicrobatches, 0),
        nextStep(numStages * numMicrobatches, 0),
        firstOnly(numStages * numMicrobatches, 0) {}

  /// Counts `action`; returns how often it ran before in its step.
  int64_t add(const ScheduledAction &action) {
    size_t key = index(action.stage, action.mb);
    if (action.part == StepPart::next)
      return nextStep[key]++;
    if (action.part == StepPart::firstOnly)
      ++firstOnly[key];
    return counts[static_cast<size_t>(action.phase) * nextStep.size() + key]++;
  }
  int64_t get(Phase phase, int64_t stage, int64_t mb) const {
    return counts[static_cast<size_t>(phase) * nextStep.size() +
                  index(stage, mb)];
  }
  /// Whether the micro-batches forwarded for the next step are those the
  /// first step alone forwards.
  bool nextStepMatches(int64_t stage, int64_t mb) const {
    size_t key = index(stage, mb);
    return nextStep[key] == firstOnly[key];
  }

private:
  size_t index(int64_t stage, int64_t mb) const {
    return stage * numMicrobatches + mb;
  }
  int64_t numStages, numMicrobatches;
  std::vector<int64_t> counts, nextStep, firstOnly;
};
} // namespace

/// Each action in range, on its stage's rank, and run once.
static llvm::Error verifyActions(const ScheduleProblem &problem,
                                 const GeneratedSchedule &schedule,
                                 ActionCounts &counts) {
  for (auto [rank, actions] : llvm::enumerate(schedule.ranks))
    for (const ScheduledAction &action : actions) {
      if (action.stage < 0 || action.stage >= problem.numStages ||
          action.mb < 0 || action.mb >= problem.numMicrobatches)
        return ScheduleError()
               << "rank " << rank << " runs " << describe(action) << ", but "
               << "there are " << problem.numStages << " stages and "
               << problem.numMicrobatches << " micro-batches";
      int64_t owner = schedule.stageRank[action.stage];
      if (owner != static_cast<int64_t>(rank))
        return ScheduleError()
               << "rank " << rank << " runs " << describe(action)
               << ", but stage " << action.stage << " is placed on rank "
               << owner;
      if (counts.add(action) > 0)
        return ScheduleError() << describe(action) << " runs more than once";
    }
  return llvm::Error::success();
}

/// Every forward, and every backward fused or as B and W, present.
static llvm::Error verifyComplete(const ScheduleProblem &problem,
                                  const ActionCounts &counts) {
  for (int64_t stage = 0; stage < problem.numStages; ++stage)
    for (int64_t mb = 0; mb < problem.numMicrobatches; ++mb) {
      ScheduledAction forward{Phase::forward, stage, mb};
      if (counts.get(Phase::forward, stage, mb) == 0)
        return ScheduleError() << describe(forward) << " is missing";
      if (!counts.nextStepMatches(stage, mb))
        return ScheduleError() << describe(forward)
                               << " runs in the first step only but is not "
                                  "run for the next step, or the other way";
      bool fused = counts.get(Phase::backward, stage, mb) > 0;
      for (Phase phase : {Phase::backward_input, Phase::backward_weight}) {
        bool split = counts.get(phase, stage, mb) > 0;
        if (fused && split)
          return ScheduleError() << "stage " << stage << " mb " << mb
                                 << " runs both a fused backward and a "
                                 << stringifyPhase(phase);
        if (!fused && !split)
          return ScheduleError() << describe({phase, stage, mb})
                                 << " is missing (and there is no fused "
                                    "backward)";
      }
    }
  return llvm::Error::success();
}

/// Where each compute action runs in its rank's list, by (phase, stage,
/// unit); -1 where none does.
static std::vector<int64_t> getPositions(const ScheduleProblem &problem,
                                         const GeneratedSchedule &schedule) {
  std::vector<int64_t> positions(
      4 * problem.numStages * problem.numMicrobatches, -1);
  for (const auto &actions : schedule.ranks)
    for (auto [position, action] : llvm::enumerate(actions))
      if (action.part != StepPart::next)
        positions[(static_cast<size_t>(action.phase) * problem.numStages +
                   action.stage) *
                      problem.numMicrobatches +
                  action.mb] = position;
  return positions;
}

/// Sequence slices in order on every stage: the forward of slice j after
/// that of slice j - 1 (its attention reads their keys and values), the
/// backward (B or fused) of slice j before that of slice j - 1 (it yields
/// their key and value gradients).
llvm::Error
mlir::pp::sched::verifySliceOrder(const ScheduleProblem &problem,
                                  const GeneratedSchedule &schedule) {
  int64_t k = problem.numSlices;
  if (k < 2)
    return llvm::Error::success();
  if (problem.numMicrobatches % k != 0)
    return ScheduleError() << problem.numMicrobatches << " units are not " << k
                           << " slices of whole micro-batches";
  std::vector<int64_t> positions = getPositions(problem, schedule);
  auto at = [&](Phase phase, int64_t stage, int64_t unit) {
    return positions[(static_cast<size_t>(phase) * problem.numStages + stage) *
                         problem.numMicrobatches +
                     unit];
  };
  auto backwardAt = [&](int64_t stage, int64_t unit) {
    int64_t fused = at(Phase::backward, stage, unit);
    return fused >= 0 ? fused : at(Phase::backward_input, stage, unit);
  };
  auto name = [&](int64_t unit) {
    return "mb " + std::to_string(unit) + " (micro-batch " +
           std::to_string(unit / k) + " slice " + std::to_string(unit % k) +
           ")";
  };
  for (int64_t stage = 0; stage < problem.numStages; ++stage)
    for (int64_t unit = 0; unit < problem.numMicrobatches; ++unit) {
      if (unit % k == 0)
        continue;
      if (at(Phase::forward, stage, unit) < at(Phase::forward, stage, unit - 1))
        return ScheduleError()
               << "the forward of stage " << stage << " " << name(unit)
               << " runs before that of slice " << unit % k - 1;
      if (backwardAt(stage, unit - 1) < backwardAt(stage, unit))
        return ScheduleError()
               << "the backward of stage " << stage << " " << name(unit - 1)
               << " runs before that of slice " << unit % k;
    }
  return llvm::Error::success();
}

/// The ranks run to the end, each action waiting for its inputs, within
/// their memory caps. Actions for the next step belong to the next run.
static llvm::Error verifyTiming(const ScheduleProblem &problem,
                                const GeneratedSchedule &schedule) {
  SmallVector<SmallVector<ScheduledAction>> step;
  for (const auto &actions : schedule.ranks)
    step.push_back(llvm::to_vector(
        llvm::make_filter_range(actions, [](const ScheduledAction &action) {
          return action.part != StepPart::next;
        })));
  ScheduleTiming timing(problem.numStages, problem.numMicrobatches);
  ActionCosts costs(problem.getCostOrUnit());
  if (failed(timing.runComputeOnly(step, schedule.stageRank, costs))) {
    ScheduleError error;
    error << "the ranks wait forever:";
    for (int64_t rank = 0; rank < problem.numRanks; ++rank)
      if (std::optional<int64_t> id = timing.getBlockedAction(rank))
        error << " rank " << rank << " at "
              << describe(step[rank][*id - timing.getFirstAction(rank)]) << ",";
    return error << " whose inputs are never computed before them";
  }
  for (int64_t rank = 0; rank < problem.numRanks; ++rank) {
    double peak = timing.getPeakMemory(rank), cap = problem.getMemoryCap(rank);
    if (peak > cap + 1e-9)
      return ScheduleError()
             << "rank " << rank << " holds " << formatQuantity(peak)
             << " units of activation memory, over its memory cap of "
             << formatQuantity(cap);
  }
  return llvm::Error::success();
}

llvm::Error mlir::pp::sched::verify(const ScheduleProblem &problem,
                                    const GeneratedSchedule &schedule) {
  if (problem.cost) {
    std::string wrong =
        problem.cost->check(problem.numStages, problem.numMicrobatches);
    if (!wrong.empty())
      return ScheduleError() << wrong;
  }
  if (llvm::Error error = verifyPlacement(problem, schedule))
    return error;
  ActionCounts counts(problem);
  if (llvm::Error error = verifyActions(problem, schedule, counts))
    return error;
  if (llvm::Error error = verifyComplete(problem, counts))
    return error;
  if (llvm::Error error = verifySliceOrder(problem, schedule))
    return error;
  return verifyTiming(problem, schedule);
}
