//===- OneFOneB.cpp - the 1F1B (PipeDream-Flush) schedule -----------------===//
//
// Rank r runs p - r - 1 warm-up forwards, then alternates one forward and
// one backward, then drains the remaining backwards (DAPPLE, Megatron).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

using namespace mlir::pp;

mlir::FailureOr<GeneratedSchedule>
mlir::pp::generateOneFOneB(const ScheduleProblem &problem,
                           ScheduleErrorFn emitError) {
  if (failed(requireOneStagePerRank(problem, "1f1b", emitError)))
    return mlir::failure();
  int64_t p = problem.numStages;
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> ranks(p);
  for (int64_t stage = 0; stage < p; ++stage)
    appendOneFOneBSteps(ranks[stage], problem, stage, p - stage - 1);
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}
