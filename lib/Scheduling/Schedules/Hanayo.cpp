//===- Hanayo.cpp - the Hanayo wave schedule ------------------------------===//
//
// Hanayo (Liu et al., SC 2023): 2W stages per rank in W waves, the stages
// going down the ranks and back up W times (W = 1 is the V placement), run
// 1F1B-style: warm-up forwards down and up the waves up to a memory limit,
// then forwards and backwards as they become ready, then the drain.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// The stage of `chunk` on `rank` under wavePlacement: even chunks go down
/// the ranks, odd ones back up.
static int64_t waveStage(int64_t numRanks, int64_t chunk, int64_t rank) {
  int64_t position = chunk % 2 == 0 ? rank : numRanks - 1 - rank;
  return chunk * numRanks + position;
}

namespace {
/// A forward or backward of one rank's chunk.
struct ChunkStep {
  int64_t chunk, mb;
};

/// Runs the ranks in lock step under unit costs (F = 1, backward = 2): an
/// idle rank takes a ready forward, oldest micro-batch first, while it holds
/// fewer than its limit of activations, else its oldest ready backward.
/// A micro-batch enters a rank (its chunk-0 forward) only with room left for
/// its forwards of every chunk there, so every admitted micro-batch can
/// reach its backwards.
class WaveScheduler {
public:
  WaveScheduler(const ScheduleProblem &problem, ArrayRef<int64_t> limit)
      : problem(problem), chunks(problem.numStages / problem.numRanks),
        limit(limit),
        forwardEnd(problem.numStages * problem.numMicrobatches, kNotYet),
        backwardEnd(problem.numStages * problem.numMicrobatches, kNotYet) {}

  llvm::Expected<GeneratedSchedule> build();

private:
  static constexpr int64_t kNotYet = std::numeric_limits<int64_t>::max();

  struct RankState {
    int64_t rank;
    /// The next micro-batch to enter; forwards of later chunks owed to
    /// those that entered; backwards still to run.
    int64_t nextMicrobatch = 0;
    SmallVector<ChunkStep> forwards, backwards;
    int64_t held = 0, busyUntil = 0;
  };

  int64_t &endOf(SmallVectorImpl<int64_t> &ends, int64_t stage, int64_t mb) {
    return ends[stage * problem.numMicrobatches + mb];
  }
  int64_t stageOf(const RankState &rank, const ChunkStep &step) const {
    return waveStage(problem.numRanks, step.chunk, rank.rank);
  }
  bool forwardReady(const RankState &rank, const ChunkStep &step, int64_t now);
  bool backwardReady(const RankState &rank, const ChunkStep &step, int64_t now);
  /// The forward `rank` may start at `now`, oldest micro-batch first.
  std::optional<ChunkStep> pickForward(const RankState &rank, int64_t now);
  /// Starts the action `rank` runs at `now`, if any.
  bool step(RankState &rank, SmallVectorImpl<ScheduledAction> &actions,
            int64_t now);

  const ScheduleProblem &problem;
  int64_t chunks;
  ArrayRef<int64_t> limit;
  SmallVector<int64_t> forwardEnd, backwardEnd;
};
} // namespace

bool WaveScheduler::forwardReady(const RankState &rank, const ChunkStep &step,
                                 int64_t now) {
  int64_t s = stageOf(rank, step);
  return s == 0 || endOf(forwardEnd, s - 1, step.mb) <= now;
}

bool WaveScheduler::backwardReady(const RankState &rank, const ChunkStep &step,
                                  int64_t now) {
  int64_t s = stageOf(rank, step);
  return endOf(forwardEnd, s, step.mb) <= now &&
         (s + 1 == problem.numStages ||
          endOf(backwardEnd, s + 1, step.mb) <= now);
}

std::optional<ChunkStep> WaveScheduler::pickForward(const RankState &rank,
                                                    int64_t now) {
  if (rank.held >= limit[rank.rank])
    return std::nullopt;
  auto *owed = llvm::find_if(rank.forwards, [&](const ChunkStep &step) {
    return forwardReady(rank, step, now);
  });
  if (owed != rank.forwards.end())
    return *owed;
  ChunkStep enter{0, rank.nextMicrobatch};
  int64_t room =
      limit[rank.rank] - rank.held - static_cast<int64_t>(rank.forwards.size());
  if (enter.mb < problem.numMicrobatches && room >= chunks &&
      forwardReady(rank, enter, now))
    return enter;
  return std::nullopt;
}

bool WaveScheduler::step(RankState &rank,
                         SmallVectorImpl<ScheduledAction> &actions,
                         int64_t now) {
  if (std::optional<ChunkStep> forward = pickForward(rank, now)) {
    if (forward->chunk == 0) {
      ++rank.nextMicrobatch;
      for (int64_t c = 1; c < chunks; ++c)
        rank.forwards.push_back({c, forward->mb});
    } else {
      llvm::erase_if(rank.forwards, [&](const ChunkStep &step) {
        return step.chunk == forward->chunk && step.mb == forward->mb;
      });
    }
    int64_t s = stageOf(rank, *forward);
    endOf(forwardEnd, s, forward->mb) = now + 1;
    actions.push_back({Phase::forward, s, forward->mb});
    ++rank.held;
    rank.busyUntil = now + 1;
    return true;
  }
  auto *backward = llvm::find_if(rank.backwards, [&](const ChunkStep &step) {
    return backwardReady(rank, step, now);
  });
  if (backward == rank.backwards.end())
    return false;
  int64_t s = stageOf(rank, *backward);
  endOf(backwardEnd, s, backward->mb) = now + 2;
  appendBackward(actions, problem, s, backward->mb);
  rank.backwards.erase(backward);
  --rank.held;
  rank.busyUntil = now + 2;
  return true;
}

llvm::Expected<GeneratedSchedule> WaveScheduler::build() {
  int64_t p = problem.numRanks;
  GeneratedSchedule schedule;
  schedule.stageRank = wavePlacement(problem);
  schedule.ranks.resize(p);
  SmallVector<RankState> ranks(p);
  for (int64_t r = 0; r < p; ++r) {
    ranks[r].rank = r;
    // Oldest micro-batch first; its chunks in the order its gradient
    // comes back.
    for (int64_t mb = 0; mb < problem.numMicrobatches; ++mb)
      for (int64_t c = chunks - 1; c >= 0; --c)
        ranks[r].backwards.push_back({c, mb});
  }
  auto done = [](const RankState &r) { return r.backwards.empty(); };
  for (int64_t now = 0; !llvm::all_of(ranks, done); ++now) {
    bool progress = false;
    for (RankState &rank : ranks)
      if (rank.busyUntil <= now)
        progress |= step(rank, schedule.ranks[rank.rank], now);
    bool busy = llvm::any_of(
        ranks, [&](const RankState &r) { return r.busyUntil > now; });
    if (!progress && !busy)
      // Unreachable: each admitted micro-batch has room for all its chunks.
      return ScheduleError() << "hanayo found no order without a deadlock";
  }
  return schedule;
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateHanayo(const ScheduleProblem &problem) {
  int64_t p = problem.numRanks;
  if (problem.numStages % (2 * p) != 0)
    return ScheduleError() << "hanayo needs 2W stages per rank for W waves "
                              "(num-stages a multiple of 2 * num-ranks = "
                           << 2 * p << "), got " << problem.numStages
                           << " stages on " << p << " ranks";
  // Interleaved 1F1B's peak with 2W chunks per rank, (2W + 1)p - 1
  // activations, or what a rank's memory cap leaves room for.
  int64_t chunks = problem.numStages / p;
  ActionCosts costs(problem.getCostOrUnit());
  double largest = 0.0;
  for (int64_t s = 0; s < problem.numStages; ++s)
    largest = std::max(largest, costs.getLargestMemoryDelta(Phase::forward, s));
  SmallVector<int64_t> limit;
  for (int64_t rank = 0; rank < p; ++rank) {
    double cap = problem.getMemoryCap(rank);
    int64_t fits = std::isinf(cap) || largest <= 0.0
                       ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(cap / largest + 1e-9);
    limit.push_back(std::min((chunks + 1) * p - 1, fits));
    if (limit.back() < chunks)
      return ScheduleError()
             << "hanayo needs room on every rank for one "
                "micro-batch's activations of its "
             << chunks << " stages (" << formatQuantity(chunks * largest)
             << "), above rank " << rank << "'s memory cap of "
             << formatQuantity(cap);
  }
  return WaveScheduler(problem, limit).build();
}
