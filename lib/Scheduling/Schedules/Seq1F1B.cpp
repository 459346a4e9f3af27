//===- Seq1F1B.cpp - 1F1B over sequence slices (Seq1F1B) ------------------===//
//
// Seq1F1B (Sun et al., NAACL 2025), the core of SlimPipe: every micro-batch
// is cut into k slices along its sequence, and 1F1B runs over the slices.
// The schedule's unit u is slice u mod k of micro-batch u / k. Stage s runs
// min(p - s - 2 + k, m k) warm-up slice forwards (the order of the Zero
// Bubble repository's seq1f1b.py), then one forward and one backward at a
// time. Forwards visit a micro-batch's slices in order, since causal
// attention in slice j reads the keys and values of slices < j; backwards
// visit them in reverse, since slice j's backward yields the key and value
// gradients of the slices before it. Rank r then holds at most
// p - r + k - 1 slices, (p + k - 1) / k micro-batches on rank 0 against
// 1F1B's p, and with uniform slices the bubble is 1F1B's divided by k.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// The unit of the `n`-th backward of a stage: micro-batches in order, the
/// slices of each in reverse.
static int64_t getBackwardUnit(int64_t n, int64_t slices) {
  return (n / slices) * slices + (slices - 1 - n % slices);
}

/// Stage `stage`'s order: `warmup` slice forwards, then one forward and one
/// backward at a time, then the remaining backwards.
static void appendSliceSteps(SmallVectorImpl<ScheduledAction> &actions,
                             const ScheduleProblem &problem, int64_t stage,
                             int64_t warmup) {
  int64_t units = problem.numMicrobatches, k = problem.numSlices;
  int64_t forward = 0, backward = 0;
  for (; forward < warmup; ++forward)
    actions.push_back({Phase::forward, stage, forward});
  for (; forward < units; ++forward, ++backward) {
    actions.push_back({Phase::forward, stage, forward});
    appendBackward(actions, problem, stage, getBackwardUnit(backward, k));
  }
  for (; backward < units; ++backward)
    appendBackward(actions, problem, stage, getBackwardUnit(backward, k));
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateSeq1F1B(const ScheduleProblem &problem) {
  if (llvm::Error error = requireOneStagePerRank(problem, "seq1f1b"))
    return std::move(error);
  int64_t p = problem.numStages, k = problem.numSlices;
  if (k < 2)
    return ScheduleError() << "schedule 'seq1f1b' slices the sequence: it "
                              "needs at least 2 slices per micro-batch (with "
                              "one slice it is 1f1b)";
  if (problem.numMicrobatches % k != 0)
    return ScheduleError() << "seq1f1b: " << problem.numMicrobatches
                           << " units are not " << k
                           << " slices of whole micro-batches";
  SmallVector<SmallVector<ScheduledAction>> ranks(p);
  for (int64_t stage = 0; stage < p; ++stage)
    appendSliceSteps(ranks[stage], problem, stage,
                     std::min(p - stage - 2 + k, problem.numMicrobatches));
  return GeneratedSchedule{identityPlacement(problem), std::move(ranks)};
}
