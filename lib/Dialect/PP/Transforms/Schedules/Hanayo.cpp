//===- Hanayo.cpp - the Hanayo wave schedule ------------------------------===//
//
// Hanayo (Liu et al., SC 2023): 2W stages per rank in W waves, the stages
// going down the ranks and back up W times (W = 1 is the V placement), run
// 1F1B-style: warm-up forwards down and up the waves, then a backward as
// soon as one is ready, then the drain.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleCost.h"
#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::pp;

/// The stage of `chunk` on `rank`: even chunks go down the ranks, odd ones
/// back up.
static int64_t waveStage(int64_t numRanks, int64_t chunk, int64_t rank) {
  int64_t position = chunk % 2 == 0 ? rank : numRanks - 1 - rank;
  return chunk * numRanks + position;
}

/// The rank of each stage under the wave placement.
static SmallVector<int64_t> wavePlacement(const ScheduleProblem &problem) {
  SmallVector<int64_t> stageRank(problem.numStages);
  for (int64_t chunk = 0; chunk < problem.numStages / problem.numRanks; ++chunk)
    for (int64_t rank = 0; rank < problem.numRanks; ++rank)
      stageRank[waveStage(problem.numRanks, chunk, rank)] = rank;
  return stageRank;
}

namespace {
/// One rank's forwards, or with the chunks reversed its backwards, in
/// micro-batch groups of `group`, each group through every chunk in turn as
/// in interleaved 1F1B; the last group may be partial.
SmallVector<ScheduledAction> groupedOrder(const ScheduleProblem &problem,
                                          int64_t rank, int64_t group,
                                          Phase phase) {
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  int64_t chunks = problem.numStages / p;
  SmallVector<ScheduledAction> order;
  for (int64_t first = 0; first < m; first += group)
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t mb = first; mb < std::min(first + group, m); ++mb) {
        int64_t chunk = phase == Phase::forward ? c : chunks - 1 - c;
        order.push_back({phase, waveStage(p, chunk, rank), mb});
      }
  return order;
}

/// Runs the ranks in lock step under unit costs (F = 1, backward = 2): an
/// idle rank takes its first ready backward, else its next forward while it
/// holds fewer than `inFlight` activations. One group's forwards fit in
/// `inFlight`, so the first group always reaches its backwards.
class WaveScheduler {
public:
  WaveScheduler(const ScheduleProblem &problem, int64_t group)
      : problem(problem), group(group),
        inFlight(group * problem.numStages / problem.numRanks),
        forwardEnd(problem.numStages * problem.numMicrobatches, kNotYet),
        backwardEnd(problem.numStages * problem.numMicrobatches, kNotYet) {}

  FailureOr<GeneratedSchedule> build(ScheduleErrorFn emitError);

private:
  static constexpr int64_t kNotYet = std::numeric_limits<int64_t>::max();

  struct RankState {
    SmallVector<ScheduledAction> forwards, backwards;
    size_t nextForward = 0;
    int64_t held = 0, busyUntil = 0;
  };

  int64_t &endOf(SmallVectorImpl<int64_t> &ends, int64_t stage, int64_t mb) {
    return ends[stage * problem.numMicrobatches + mb];
  }
  bool isReady(const ScheduledAction &action, int64_t now);
  /// Starts the action `rank` runs at `now`, if any.
  bool step(RankState &rank, SmallVectorImpl<ScheduledAction> &actions,
            int64_t now);

  const ScheduleProblem &problem;
  int64_t group, inFlight;
  SmallVector<int64_t> forwardEnd, backwardEnd;
};
} // namespace

bool WaveScheduler::isReady(const ScheduledAction &action, int64_t now) {
  int64_t s = action.stage, mb = action.mb;
  if (action.phase == Phase::forward)
    return s == 0 || endOf(forwardEnd, s - 1, mb) <= now;
  return endOf(forwardEnd, s, mb) <= now &&
         (s + 1 == problem.numStages || endOf(backwardEnd, s + 1, mb) <= now);
}

bool WaveScheduler::step(RankState &rank,
                         SmallVectorImpl<ScheduledAction> &actions,
                         int64_t now) {
  auto *backward = llvm::find_if(rank.backwards, [&](const ScheduledAction &a) {
    return isReady(a, now);
  });
  if (backward != rank.backwards.end()) {
    endOf(backwardEnd, backward->stage, backward->mb) = now + 2;
    appendBackward(actions, problem, backward->stage, backward->mb);
    rank.backwards.erase(backward);
    --rank.held;
    rank.busyUntil = now + 2;
    return true;
  }
  if (rank.nextForward == rank.forwards.size() || rank.held >= inFlight ||
      !isReady(rank.forwards[rank.nextForward], now))
    return false;
  const ScheduledAction &forward = rank.forwards[rank.nextForward++];
  endOf(forwardEnd, forward.stage, forward.mb) = now + 1;
  actions.push_back(forward);
  ++rank.held;
  rank.busyUntil = now + 1;
  return true;
}

FailureOr<GeneratedSchedule> WaveScheduler::build(ScheduleErrorFn emitError) {
  int64_t p = problem.numRanks;
  GeneratedSchedule schedule;
  schedule.stageRank = wavePlacement(problem);
  schedule.ranks.resize(p);
  SmallVector<RankState> ranks(p);
  for (int64_t r = 0; r < p; ++r) {
    ranks[r].forwards = groupedOrder(problem, r, group, Phase::forward);
    ranks[r].backwards = groupedOrder(problem, r, group, Phase::backward);
  }
  auto done = [](const RankState &r) { return r.backwards.empty(); };
  for (int64_t now = 0; !llvm::all_of(ranks, done); ++now) {
    bool progress = false;
    for (int64_t r = 0; r < p; ++r)
      if (ranks[r].busyUntil <= now)
        progress |= step(ranks[r], schedule.ranks[r], now);
    bool busy = llvm::any_of(
        ranks, [&](const RankState &r) { return r.busyUntil > now; });
    if (!progress && !busy)
      return emitError() << "hanayo: the ranks deadlock with groups of "
                         << group << " micro-batches";
  }
  return schedule;
}

FailureOr<GeneratedSchedule>
mlir::pp::generateHanayo(const ScheduleProblem &problem,
                         ScheduleErrorFn emitError) {
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  if (problem.numStages % (2 * p) != 0)
    return emitError() << "hanayo needs 2W stages per rank for W waves "
                          "(num-stages a multiple of 2 * num-ranks = "
                       << 2 * p << "), got " << problem.numStages
                       << " stages on " << p << " ranks";
  // A rank holds at most one group's forwards of every chunk: groups of p
  // micro-batches, fewer where a memory cap asks for it.
  int64_t chunks = problem.numStages / p;
  CostAttr cost = problem.cost
                      ? problem.cost
                      : CostAttr::getUnit(problem.context, problem.numStages);
  ScheduleCosts costs(cost);
  double largest = 0.0;
  for (int64_t s = 0; s < problem.numStages; ++s)
    largest = std::max(largest, costs.memoryDelta(Phase::forward, s));
  SmallVector<double> caps = problem.getMemoryCaps();
  double cap = *llvm::min_element(caps);
  int64_t group = std::min(p, m);
  while (group > 1 && group * chunks * largest > cap + 1e-9)
    --group;
  if (group * chunks * largest > cap + 1e-9)
    return emitError() << "hanayo needs room for one micro-batch's "
                          "activations of its "
                       << chunks << " stages per rank (" << chunks * largest
                       << "), above the memory cap of " << cap;
  return WaveScheduler(problem, group).build(emitError);
}
