//===- VHalf.cpp - the V-Half controllable-memory schedule ----------------===//
//
// V-Half (Qi et al., "Pipeline Parallelism with Controllable Memory",
// NeurIPS 2024): a V-shaped schedule at about half of 1F1B's peak activation
// memory, (p + 2) / 2 stages' worth, for about half of its bubble.
//
//===----------------------------------------------------------------------===//

#include "VShape.h"

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateVHalf(const ScheduleProblem &problem) {
  if (llvm::Error error = vshape::requireTwoStagesPerRank(problem, "v-half"))
    return std::move(error);
  int64_t p = problem.numRanks;
  // The paper's V-Half building block: a forward hop every 2 slots, so that
  // a micro-batch's two chunks are in flight about 6p slots in all on each
  // rank and, one micro-batch starting every 6 slots, each rank holds about
  // p + 1 chunks. The gap keeps a rank's four slots distinct modulo 6 for
  // even p.
  int64_t gap = p % 2 == 0 ? 3 : 0;
  llvm::SmallVector<vshape::BlockOffsets> block;
  for (int64_t r = 0; r < p; ++r)
    block.push_back(
        {2 * r, 3 * p - r - 2, 3 * p + gap + 2 * r - 1, 6 * p + gap - r - 2});
  // 1F1B holds p whole stages on rank 0; half of it and one more stage is
  // p + 2 chunks of half a stage.
  return vshape::scheduleWithMemoryLimit(problem, "v-half", p + 2, block);
}
