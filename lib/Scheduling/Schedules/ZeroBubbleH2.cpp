//===- ZeroBubbleH2.cpp - the ZB-H2 zero-bubble schedule ------------------===//
//
// Zero Bubble H2 (Qi et al., ICLR 2024): split backwards with twice 1F1B's
// warm-up forwards, so that no rank idles between its first and last action.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

#include <algorithm>

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateZeroBubbleH2(const ScheduleProblem &problem) {
  if (llvm::Error error = requireOneStagePerRank(problem, "zb-h2"))
    return std::move(error);
  int64_t p = problem.numStages, m = problem.numMicrobatches;
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> ranks(p);
  // With fewer than 2p - 1 micro-batches rank 0 cannot stay busy until its
  // first backward arrives; lags beyond m - 1 would only delay the B's.
  auto warmup = [&](int64_t stage) {
    return std::min(2 * (p - 1 - stage), m - 1);
  };
  for (int64_t stage = 0; stage < p; ++stage) {
    // Step x runs F x, B x - 2(p-1-stage) and W x - 2(p-1), each if in range:
    // rank r's first B arrives 2(p-1-r) forwards after its first F, and its
    // 2r deferred W's keep it busy after its last B.
    int64_t backwardLag = warmup(stage), weightLag = warmup(0);
    appendLaggedSteps(ranks[stage], stage, m, backwardLag, weightLag);
  }
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}
