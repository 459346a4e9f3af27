//===- InterleavedOneFOneB.cpp - the interleaved 1F1B schedule ------------===//
//
// Megatron-LM's interleaved 1F1B (PyTorch ScheduleInterleaved1F1B): v stages
// per rank, placed round-robin, run depth first in groups of p micro-batches.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

#include <algorithm>

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateInterleavedOneFOneB(const ScheduleProblem &problem) {
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  int64_t v = problem.numStages / p;
  if (v < 2)
    return ScheduleError()
           << "interleaved-1f1b needs at least 2 stages per rank, "
              "but there are "
           << problem.numStages << " stages on " << p << " ranks";
  // Each chunk takes a whole group of p micro-batches before the next chunk;
  // a partial group would leave the ranks out of step.
  if (m % p != 0)
    return ScheduleError() << "interleaved-1f1b needs the micro-batch count ("
                           << m << ") to be a multiple of the rank count (" << p
                           << ")";

  GeneratedSchedule schedule;
  schedule.stageRank = loopedPlacement(problem);
  schedule.ranks.resize(p);
  int64_t total = m * v;
  for (int64_t rank = 0; rank < p; ++rank) {
    // The k-th forward (backward) of a rank: micro-batch groups of p, chunk
    // by chunk; backwards visit the chunks in reverse.
    auto action = [&](Phase phase, int64_t k) -> ScheduledAction {
      int64_t chunk = (k % (p * v)) / p;
      if (phase != Phase::forward)
        chunk = v - 1 - chunk;
      return {phase, chunk * p + rank, k / (p * v) * p + k % p};
    };
    auto appendBackwardStep = [&](int64_t k) {
      ScheduledAction backward = action(Phase::backward, k);
      appendBackward(schedule.ranks[rank], problem, backward.stage,
                     backward.mb);
    };
    // Enough forwards that the first backward of the last chunk has arrived:
    // the other chunks' first groups plus two per hop to the last rank.
    int64_t warmup = std::min(2 * (p - rank - 1) + (v - 1) * p, total);
    for (int64_t k = 0; k < warmup; ++k)
      schedule.ranks[rank].push_back(action(Phase::forward, k));
    for (int64_t k = warmup; k < total; ++k) {
      schedule.ranks[rank].push_back(action(Phase::forward, k));
      appendBackwardStep(k - warmup);
    }
    for (int64_t k = total - warmup; k < total; ++k)
      appendBackwardStep(k);
  }
  return schedule;
}
