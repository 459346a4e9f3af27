//===- ScheduleEvaluator.cpp - fast timing of generated schedules ---------===//
//
// Runs each rank's list until it waits for an input, and wakes the ranks
// that wait on what it produced: linear in the number of actions.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScheduleEvaluator.h"

using namespace mlir;
using namespace mlir::pp;

ActionCosts::ActionCosts(const ScheduleCosts &costs, int64_t numStages)
    : stages(numStages), transfer(costs.transferTime()) {
  for (Phase phase : {Phase::forward, Phase::backward_input,
                      Phase::backward_weight, Phase::backward})
    for (int64_t s = 0; s < numStages; ++s) {
      durations.push_back(costs.duration(phase, s));
      deltas.push_back(costs.memoryDelta(phase, s));
    }
}

double mlir::pp::peakMemory(ArrayRef<ScheduledAction> actions,
                            const ActionCosts &costs) {
  double held = 0.0, peak = 0.0;
  for (const ScheduledAction &a : actions) {
    held += costs.memoryDelta(a.phase, a.stage);
    peak = std::max(peak, held);
  }
  return peak;
}

bool Evaluation::fits(const ScheduleProblem &problem) const {
  for (auto [rank, held] : llvm::enumerate(rankPeak))
    if (held > problem.getMemoryCap(rank) + 1e-9)
      return false;
  return true;
}

bool Evaluation::betterThan(const Evaluation &other) const {
  if (makespan < other.makespan - 1e-9)
    return true;
  return makespan <= other.makespan + 1e-9 && totalEnd < other.totalEnd - 1e-9;
}

ScheduleEvaluator::ScheduleEvaluator(const ScheduleProblem &problem,
                                     const ActionCosts &costs,
                                     ArrayRef<int64_t> stageRank)
    : problem(problem), costs(costs), stageRank(stageRank) {}

void ScheduleEvaluator::reset() {
  int64_t size = problem.numStages * problem.numMicrobatches;
  forwardEnd.assign(size, -1.0);
  backwardEnd.assign(size, -1.0);
}

FailureOr<Evaluation>
ScheduleEvaluator::evaluate(const GeneratedSchedule &schedule,
                            SmallVectorImpl<SmallVector<double>> *starts) {
  reset();
  size_t numRanks = schedule.ranks.size();
  SmallVector<size_t> next(numRanks, 0);
  SmallVector<double> clock(numRanks, 0.0), held(numRanks, 0.0);
  if (starts) {
    starts->assign(numRanks, {});
    for (auto [rank, actions] : llvm::enumerate(schedule.ranks))
      (*starts)[rank].reserve(actions.size());
  }
  Evaluation result;
  result.makespan = 0.0;
  result.rankPeak.assign(numRanks, 0.0);
  // Ranks that may be able to run their next action.
  SmallVector<int64_t> awake = llvm::to_vector(llvm::seq<int64_t>(0, numRanks));
  auto wake = [&](int64_t stage) {
    if (stage >= 0 && stage < problem.numStages)
      awake.push_back(stageRank[stage]);
  };
  while (!awake.empty()) {
    int64_t rank = awake.pop_back_val();
    ArrayRef<ScheduledAction> actions = schedule.ranks[rank];
    for (; next[rank] < actions.size(); ++next[rank]) {
      const ScheduledAction &a = actions[next[rank]];
      std::optional<double> ready = readyTime(a);
      if (!ready)
        break;
      double start = std::max(clock[rank], *ready);
      if (starts)
        (*starts)[rank].push_back(start);
      clock[rank] = start + costs.duration(a.phase, a.stage);
      record(a, clock[rank]);
      held[rank] += costs.memoryDelta(a.phase, a.stage);
      result.rankPeak[rank] = std::max(result.rankPeak[rank], held[rank]);
      // A forward feeds the next stage, an input gradient the one before.
      if (a.phase == Phase::forward)
        wake(a.stage + 1);
      else if (a.phase != Phase::backward_weight)
        wake(a.stage - 1);
    }
  }
  result.totalEnd = 0.0;
  for (auto [rank, actions] : llvm::enumerate(schedule.ranks)) {
    if (next[rank] != actions.size())
      return failure();
    result.makespan = std::max(result.makespan, clock[rank]);
    result.totalEnd += clock[rank];
  }
  return result;
}
