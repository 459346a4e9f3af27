//===- LoopedBFS.cpp - the looped breadth-first schedule ------------------===//
//
// Breadth-first pipelining (PyTorch ScheduleLoopedBFS): stages placed
// round-robin, each rank runs every micro-batch through one local stage
// before the next, forwards first, then backwards in reverse.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateLoopedBFS(const ScheduleProblem &problem) {
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  GeneratedSchedule schedule;
  schedule.stageRank = loopedPlacement(problem);
  schedule.ranks.resize(p);
  for (int64_t rank = 0; rank < p; ++rank) {
    auto &actions = schedule.ranks[rank];
    for (int64_t stage = rank; stage < problem.numStages; stage += p)
      for (int64_t mb = 0; mb < m; ++mb)
        actions.push_back({Phase::forward, stage, mb});
    // Backwards in exactly the reverse order, as the last forward's gradient
    // arrives first.
    for (int64_t stage = problem.numStages - p + rank; stage >= 0; stage -= p)
      for (int64_t mb = m - 1; mb >= 0; --mb)
        appendBackward(actions, problem, stage, mb);
  }
  return schedule;
}
