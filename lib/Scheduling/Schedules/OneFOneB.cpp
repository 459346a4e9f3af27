//===- OneFOneB.cpp - the 1F1B (PipeDream-Flush) schedule -----------------===//
//
// Rank r runs p - r - 1 warm-up forwards, then alternates one forward and
// one backward, then drains the remaining backwards (DAPPLE, Megatron).
// Under memory caps, a rank runs as many warm-up forwards as its cap holds
// and no more than the rank before it: rank r + 1's backward of micro-batch
// i then needs only forwards rank r runs before its own backward of i, so
// the ranks cannot wait for each other in a cycle.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// Stage `stage`'s steps with the most warm-up forwards, at most `most`,
/// that keep its rank within its memory cap; returns their number.
static llvm::Expected<int64_t>
appendStepsWithinCap(SmallVectorImpl<ScheduledAction> &out,
                     const ScheduleProblem &problem, const ActionCosts &costs,
                     int64_t stage, int64_t most) {
  double cap = problem.getMemoryCap(stage);
  for (int64_t warmup = most; warmup >= 0; --warmup) {
    SmallVector<ScheduledAction> steps;
    appendOneFOneBSteps(steps, problem, stage, warmup);
    if (findActivationPeak(costs, steps).peak <= cap + 1e-9) {
      out.append(steps);
      return warmup;
    }
  }
  return ScheduleError() << "1f1b: rank " << stage << "'s memory cap of "
                         << formatQuantity(cap)
                         << " does not hold one micro-batch of stage " << stage;
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateOneFOneB(const ScheduleProblem &problem) {
  if (llvm::Error error = requireOneStagePerRank(problem, "1f1b"))
    return std::move(error);
  ActionCosts costs(problem.getCostOrUnit());
  int64_t p = problem.numStages;
  SmallVector<SmallVector<ScheduledAction>> ranks(p);
  int64_t most = p - 1;
  for (int64_t stage = 0; stage < p; ++stage) {
    llvm::Expected<int64_t> warmup = appendStepsWithinCap(
        ranks[stage], problem, costs, stage, std::min(most, p - stage - 1));
    if (!warmup)
      return warmup.takeError();
    most = *warmup;
  }
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}
