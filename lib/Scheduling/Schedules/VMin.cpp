//===- VMin.cpp - the V-Min controllable-memory schedule ------------------===//
//
// V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory",
// NeurIPS 2024): a V-shaped schedule at about a third of 1F1B's peak
// activation memory, (p + 4) / 3 stages' worth, for about two thirds of its
// bubble.
//
//===----------------------------------------------------------------------===//

#include "VShape.h"

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateVMin(const ScheduleProblem &problem) {
  if (llvm::Error error = vshape::requireTwoStagesPerRank(problem, "v-min"))
    return std::move(error);
  int64_t p = problem.numRanks;
  // The paper's V-Min building block: every hop as soon as its input is
  // there, so that a micro-batch's two chunks are in flight about 4p slots
  // in all on each rank and, one micro-batch starting every 6 slots, each
  // rank holds about 2p / 3 chunks. The gap keeps a rank's four slots
  // distinct modulo 6 when 3 divides p.
  int64_t gap = p % 3 == 0 ? 2 : 0;
  llvm::SmallVector<vshape::BlockOffsets> block;
  for (int64_t r = 0; r < p; ++r)
    block.push_back({r, 2 * p - r - 1, 2 * p + gap + r, 4 * p + gap - r - 1});
  // (p + 4) / 3 whole stages are 2(p + 4) / 3 chunks of half a stage,
  // rounded down.
  return vshape::scheduleWithMemoryLimit(problem, "v-min", 2 * (p + 4) / 3,
                                         block);
}
