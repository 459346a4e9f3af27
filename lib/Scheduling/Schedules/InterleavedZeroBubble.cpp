//===- InterleavedZeroBubble.cpp - the interleaved zero-bubble schedule ---===//
//
// PyTorch's ScheduleInterleavedZeroBubble (ZB1P of Qi et al., ICLR 2024, on
// the interleaved placement): v stages per rank, placed round-robin, run
// depth first in rounds like interleaved 1F1B, with backwards split and each
// rank's weight gradients deferred to fill the cool-down.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

#include <algorithm>

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateInterleavedZeroBubble(const ScheduleProblem &problem) {
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  int64_t v = problem.numStages / p;
  // The micro-batches run in rounds of m / rounds each, every chunk taking a
  // whole round before the next; with m < p, one round of all of them.
  int64_t rounds = std::max<int64_t>(1, m / p);
  if (m % rounds != 0)
    return ScheduleError()
           << "interleaved-zb needs the micro-batch count (" << m
           << ") to be a multiple of its " << rounds
           << " rounds (max(1, m / p) with p = " << p
           << " ranks), as PyTorch's ScheduleInterleavedZeroBubble "
              "does";
  int64_t perRound = m / rounds;

  GeneratedSchedule schedule;
  schedule.stageRank = loopedPlacement(problem);
  schedule.ranks.resize(p);
  for (int64_t rank = 0; rank < p; ++rank) {
    // The k-th forward (B, W) of a rank: round by round, chunk by chunk,
    // perRound micro-batches each; B's and W's visit the chunks in reverse.
    auto stepAction = [&](Phase phase, int64_t k) -> ScheduledAction {
      int64_t chunk = (k / perRound) % v;
      if (phase != Phase::forward)
        chunk = v - 1 - chunk;
      int64_t mb = k / (perRound * v) * perRound + k % perRound;
      return {phase, chunk * p + rank, mb};
    };
    // Warm-up: the other chunks' first round plus one forward per hop to
    // the last rank, so the first B's gradient has arrived. Rank r defers
    // its W's by r steps, the bubbles the later ranks' B's leave it.
    int64_t warmup = std::min((v - 1) * perRound + p - 1 - rank, m * v);
    appendLaggedSteps(schedule.ranks[rank], m * v, warmup, warmup + rank,
                      stepAction);
  }
  return schedule;
}
