//===- ZeroBubbleH1.cpp - the ZB-H1 zero-bubble schedule ------------------===//
//
// Zero Bubble H1 (Qi et al., ICLR 2024): 1F1B with split backwards whose
// weight gradients are deferred into the cool-down, at 1F1B's peak memory.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateZeroBubbleH1(const ScheduleProblem &problem) {
  if (llvm::Error error = requireOneStagePerRank(problem, "zb-h1"))
    return std::move(error);
  int64_t p = problem.numStages, m = problem.numMicrobatches;
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> ranks(p);
  for (int64_t stage = 0; stage < p; ++stage) {
    // Step x runs F x, B x - (p-1-stage) and W x - (p-1), each if in range:
    // the B lag is 1F1B's warm-up, so at most p - stage micro-batches are
    // in flight; every rank's W lags by p - 1, so rank r defers r of them
    // to the end, where they fill the bubbles the B's leave.
    int64_t backwardLag = p - 1 - stage, weightLag = p - 1;
    appendLaggedSteps(ranks[stage], stage, m, backwardLag, weightLag);
  }
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}
