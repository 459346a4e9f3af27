//===- GPipe.cpp - the GPipe schedule -------------------------------------===//
//
// All forwards of every micro-batch, then all backwards (GPipe).
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateGPipe(const ScheduleProblem &problem) {
  if (llvm::Error error = requireOneStagePerRank(problem, "gpipe"))
    return std::move(error);
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
