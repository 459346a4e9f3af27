//===- GPipe.cpp - the GPipe schedule -------------------------------------===//
//
// All forwards of every micro-batch, then all backwards (GPipe).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

using namespace mlir::pp;

mlir::FailureOr<GeneratedSchedule>
mlir::pp::generateGPipe(const ScheduleProblem &problem,
                        ScheduleErrorFn emitError) {
  if (failed(requireOneStagePerRank(problem, "gpipe", emitError)))
    return mlir::failure();
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> ranks(
      problem.numStages);
  for (int64_t stage = 0; stage < problem.numStages; ++stage) {
    for (int64_t mb = 0; mb < problem.numMicrobatches; ++mb)
      ranks[stage].push_back({Phase::forward, stage, mb});
    for (int64_t mb = 0; mb < problem.numMicrobatches; ++mb)
      appendBackward(ranks[stage], problem, stage, mb);
  }
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}
