//===- VShape.cpp - shared construction of V-shaped schedules -------------===//
//
// The shape check of the V-shaped schedules and the building-block and
// greedy constructions of the controllable-memory ones.
//
//===----------------------------------------------------------------------===//

#include "VShape.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;
using namespace mlir::pp::sched::vshape;

llvm::Error
mlir::pp::sched::vshape::requireTwoStagesPerRank(const ScheduleProblem &problem,
                                                 StringRef schedule) {
  if (problem.numStages == 2 * problem.numRanks)
    return llvm::Error::success();
  return ScheduleError() << schedule << " needs two stages per rank ("
                         << 2 * problem.numRanks << " stages on "
                         << problem.numRanks << " ranks), got "
                         << problem.numStages;
}

namespace {
using Ranks = SmallVector<SmallVector<ScheduledAction>>;

/// Unit-cost finish times of the F, B and W of every stage and micro-batch
/// of a V schedule, and when each could start.
class UnitTimes {
public:
  static constexpr int64_t kNotYet = std::numeric_limits<int64_t>::max();

  UnitTimes(int64_t numStages, int64_t numMicrobatches)
      : numStages(numStages), numMicrobatches(numMicrobatches),
        finish(3 * numStages * numMicrobatches, kNotYet) {}

  int64_t &finishOf(Phase phase, int64_t stage, int64_t mb) {
    // A fused backward never occurs here; it would stand for its B.
    int64_t kind = phase == Phase::forward           ? 0
                   : phase == Phase::backward_weight ? 2
                                                     : 1;
    return finish[(kind * numStages + stage) * numMicrobatches + mb];
  }

  /// The earliest start of `action` once its inputs are done (F of the
  /// previous stage; F of its stage and B of the next; B of its stage), or
  /// kNotYet while one of them has no time.
  int64_t readyTime(const ScheduledAction &action) {
    int64_t s = action.stage, mb = action.mb;
    switch (action.phase) {
    case Phase::forward:
      return s == 0 ? 0 : finishOf(Phase::forward, s - 1, mb);
    case Phase::backward_input:
    case Phase::backward:
      return std::max(
          finishOf(Phase::forward, s, mb),
          s + 1 == numStages ? 0 : finishOf(Phase::backward_input, s + 1, mb));
    case Phase::backward_weight:
      return finishOf(Phase::backward_input, s, mb);
    }
    return kNotYet;
  }

private:
  int64_t numStages, numMicrobatches;
  SmallVector<int64_t> finish;
};

/// The four steps of one micro-batch on a rank, in priority order for the
/// greedy: backwards before forwards, and chunk 1's forward (which moves a
/// micro-batch towards its turn) before chunk 0's (which admits one).
enum class Step { Backward0, Backward1, Forward1, Forward0 };
constexpr Step kSteps[] = {Step::Backward0, Step::Backward1, Step::Forward1,
                           Step::Forward0};

ScheduledAction actionOf(Step step, int64_t p, int64_t rank, int64_t mb) {
  int64_t chunk0 = rank, chunk1 = 2 * p - 1 - rank;
  switch (step) {
  case Step::Forward0:
    return {Phase::forward, chunk0, mb};
  case Step::Forward1:
    return {Phase::forward, chunk1, mb};
  case Step::Backward1:
    return {Phase::backward_input, chunk1, mb};
  case Step::Backward0:
    return {Phase::backward_input, chunk0, mb};
  }
  llvm_unreachable("unknown step");
}

ScheduledAction weightOf(const ScheduledAction &backwardInput) {
  return {Phase::backward_weight, backwardInput.stage, backwardInput.mb};
}
} // namespace

/// The most activation units `actions` hold at once.
static int64_t peakActivations(ArrayRef<ScheduledAction> actions) {
  int64_t held = 0, peak = 0;
  for (const ScheduledAction &action : actions) {
    if (action.phase == Phase::forward)
      peak = std::max(peak, ++held);
    else if (action.phase != Phase::backward_weight)
      --held;
  }
  return peak;
}

static int64_t worstPeak(const Ranks &ranks) {
  int64_t peak = 0;
  for (const auto &actions : ranks)
    peak = std::max(peak, peakActivations(actions));
  return peak;
}

/// The unit-cost makespan of `ranks`, each action starting as soon as its
/// rank and inputs are free; fails if the ranks deadlock.
static FailureOr<int64_t> unitMakespan(const Ranks &ranks, int64_t numStages,
                                       int64_t numMicrobatches) {
  UnitTimes times(numStages, numMicrobatches);
  SmallVector<size_t> next(ranks.size(), 0);
  SmallVector<int64_t> free(ranks.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (auto [rank, actions] : llvm::enumerate(ranks)) {
      for (; next[rank] < actions.size(); ++next[rank]) {
        const ScheduledAction &action = actions[next[rank]];
        int64_t ready = times.readyTime(action);
        if (ready == UnitTimes::kNotYet)
          break;
        free[rank] = std::max(free[rank], ready) + 1;
        times.finishOf(action.phase, action.stage, action.mb) = free[rank];
        progress = true;
      }
    }
  }
  for (auto [rank, actions] : llvm::enumerate(ranks))
    if (next[rank] != actions.size())
      return failure();
  return *llvm::max_element(free);
}

/// Construction (1): `block` repeated for every micro-batch, each W in the
/// first slot after its B that no block action takes.
static Ranks repeatBlock(int64_t p, int64_t m, ArrayRef<BlockOffsets> block) {
  Ranks ranks(p);
  for (int64_t rank = 0; rank < p; ++rank) {
    const BlockOffsets &offsets = block[rank];
    SmallVector<std::pair<int64_t, ScheduledAction>> timed;
    for (int64_t mb = 0; mb < m; ++mb) {
      timed.push_back(
          {offsets.forward0 + 6 * mb, actionOf(Step::Forward0, p, rank, mb)});
      timed.push_back(
          {offsets.forward1 + 6 * mb, actionOf(Step::Forward1, p, rank, mb)});
      timed.push_back(
          {offsets.backward1 + 6 * mb, actionOf(Step::Backward1, p, rank, mb)});
      timed.push_back(
          {offsets.backward0 + 6 * mb, actionOf(Step::Backward0, p, rank, mb)});
    }
    llvm::stable_sort(timed, llvm::less_first());
    std::deque<ScheduledAction> weights;
    int64_t slot = 0;
    for (const auto &[time, action] : timed) {
      for (; slot < time && !weights.empty(); ++slot) {
        ranks[rank].push_back(weights.front());
        weights.pop_front();
      }
      slot = std::max(slot, time) + 1;
      ranks[rank].push_back(action);
      if (action.phase == Phase::backward_input)
        weights.push_back(weightOf(action));
    }
    ranks[rank].append(weights.begin(), weights.end());
  }
  return ranks;
}

/// Construction (2): the greedy list schedule under `memoryLimit` described
/// in VShape.h. Fails only if it deadlocks, which the room kept for chunk 1
/// rules out: the oldest micro-batch still on its way is never refused.
static FailureOr<Ranks> scheduleGreedily(int64_t p, int64_t m,
                                         int64_t memoryLimit) {
  struct RankState {
    int64_t next[std::size(kSteps)] = {};
    std::deque<ScheduledAction> weights;
    int64_t held = 0;
  };
  UnitTimes times(2 * p, m);
  SmallVector<RankState> states(p);
  Ranks ranks(p);
  auto fits = [&](Step step, int64_t held) {
    if (step == Step::Forward1)
      return held + 1 <= memoryLimit;
    if (step == Step::Forward0)
      return held + 2 <= memoryLimit;
    return true;
  };
  for (int64_t time = 0, left = 6 * p * m; left > 0; ++time) {
    bool started = false;
    // An action started now finishes at time + 1, so the ranks' choices at
    // `time` do not depend on each other.
    for (int64_t rank = 0; rank < p; ++rank) {
      RankState &state = states[rank];
      std::optional<ScheduledAction> chosen;
      for (Step step : kSteps) {
        int64_t &mb = state.next[static_cast<int>(step)];
        if (mb == m || !fits(step, state.held))
          continue;
        ScheduledAction action = actionOf(step, p, rank, mb);
        if (times.readyTime(action) > time)
          continue;
        chosen = action;
        ++mb;
        if (action.phase == Phase::forward) {
          ++state.held;
        } else {
          --state.held;
          state.weights.push_back(weightOf(action));
        }
        break;
      }
      if (!chosen && !state.weights.empty()) {
        chosen = state.weights.front();
        state.weights.pop_front();
      }
      if (!chosen)
        continue;
      times.finishOf(chosen->phase, chosen->stage, chosen->mb) = time + 1;
      ranks[rank].push_back(*chosen);
      started = true;
      --left;
    }
    if (!started)
      return failure();
  }
  return ranks;
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::vshape::scheduleWithMemoryLimit(const ScheduleProblem &problem,
                                                 StringRef schedule,
                                                 int64_t memoryLimit,
                                                 ArrayRef<BlockOffsets> block) {
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  FailureOr<Ranks> greedy = scheduleGreedily(p, m, memoryLimit);
  FailureOr<int64_t> greedyMakespan = failure();
  if (succeeded(greedy))
    greedyMakespan = unitMakespan(*greedy, 2 * p, m);
  if (failed(greedyMakespan))
    return ScheduleError() << schedule << ": the greedy schedule under "
                           << memoryLimit << " activation units deadlocked";

  Ranks chosen = std::move(*greedy);
  Ranks repeated = repeatBlock(p, m, block);
  FailureOr<int64_t> repeatedMakespan = unitMakespan(repeated, 2 * p, m);
  int64_t repeatedPeak = worstPeak(repeated);
  if (succeeded(repeatedMakespan) && repeatedPeak <= memoryLimit &&
      std::make_pair(*repeatedMakespan, repeatedPeak) <=
          std::make_pair(*greedyMakespan, worstPeak(chosen)))
    chosen = std::move(repeated);
  return GeneratedSchedule{vShapePlacement(problem), std::move(chosen)};
}
