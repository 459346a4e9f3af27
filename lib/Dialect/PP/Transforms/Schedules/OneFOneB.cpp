//===- OneFOneB.cpp - the 1F1B (PipeDream-Flush) schedule -----------------===//
//
// Rank r runs p - r - 1 warm-up forwards, then alternates one forward and
// one backward, then drains the remaining backwards (DAPPLE, Megatron).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

#include <algorithm>

using namespace mlir::pp;

mlir::FailureOr<GeneratedSchedule>
mlir::pp::generateOneFOneB(const ScheduleProblem &problem,
                           ScheduleErrorFn emitError) {
  if (failed(requireOneStagePerRank(problem, "1f1b", emitError)))
    return mlir::failure();
  int64_t p = problem.numStages, m = problem.numMicrobatches;
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> ranks(p);
  for (int64_t stage = 0; stage < p; ++stage) {
    auto &actions = ranks[stage];
    int64_t warmup = std::min(p - stage - 1, m);
    int64_t forward = 0, backward = 0;
    for (; forward < warmup; ++forward)
      actions.push_back({Phase::forward, stage, forward});
    while (forward < m) {
      actions.push_back({Phase::forward, stage, forward++});
      appendBackward(actions, problem, stage, backward++);
    }
    while (backward < m)
      appendBackward(actions, problem, stage, backward++);
  }
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}
