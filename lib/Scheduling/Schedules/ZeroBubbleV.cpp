//===- ZeroBubbleV.cpp - the ZB-V zero-bubble schedule --------------------===//
//
// Zero Bubble V (Qi et al., ICLR 2024; PyTorch ScheduleZBVZeroBubble): two
// half-size stages per rank in a V and backwards split, so that with equal
// F, B and W a rank idles only for the start-up once m >= 2p - 1, at 1F1B's
// peak activation memory.
//
//===----------------------------------------------------------------------===//

#include "VShape.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir::pp;
using namespace mlir::pp::sched;

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateZeroBubbleV(const ScheduleProblem &problem) {
  if (llvm::Error error = vshape::requireTwoStagesPerRank(problem, "zbv"))
    return std::move(error);
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  // Built for at least 2p - 1 micro-batches, the fewest that keep rank 0
  // busy until its first chunk-0 B; the extra ones are dropped at the end.
  int64_t n = std::max(2 * p - 1, m);
  GeneratedSchedule schedule;
  schedule.stageRank = vShapePlacement(problem);
  schedule.ranks.resize(p);
  for (int64_t rank = 0; rank < p; ++rank) {
    llvm::SmallVector<ScheduledAction> &actions = schedule.ranks[rank];
    int64_t chunk0 = rank, chunk1 = 2 * p - 1 - rank;
    int64_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    auto forward0 = [&] { actions.push_back({Phase::forward, chunk0, f0++}); };
    auto forward1 = [&] { actions.push_back({Phase::forward, chunk1, f1++}); };
    auto input = [&](int64_t stage, int64_t mb) {
      actions.push_back({Phase::backward_input, stage, mb});
    };
    auto weight = [&](int64_t stage, int64_t mb) {
      actions.push_back({Phase::backward_weight, stage, mb});
    };
    // Warm-up: fill the way down, 2(p - r) - 1 chunk-0 forwards, then
    // alternate with the chunk-1 forwards coming back up; the last p - r
    // chunk-1 forwards are each followed by their B and W.
    for (int64_t i = 0; i < 2 * (p - rank) - 1; ++i)
      forward0();
    for (int64_t i = 0; i < rank; ++i) {
      forward1();
      forward0();
    }
    for (int64_t i = 0; i < p - rank; ++i, ++b1) {
      forward1();
      input(chunk1, b1);
      weight(chunk1, b1);
    }
    // Steady state: F, B, W of chunk 0, then of chunk 1, one micro-batch
    // each, until every forward has run.
    for (; f1 < f0 || f0 < n; ++b0, ++b1) {
      if (f0 < n)
        forward0();
      input(chunk0, b0);
      weight(chunk0, b0);
      forward1();
      input(chunk1, b1);
      weight(chunk1, b1);
    }
    // Cool-down: r pairs of B's with their W's deferred, then p - r chunk-0
    // B's each with the oldest deferred chunk-0 W, then the remaining W's
    // fill the bubbles of the last gradients' way down.
    int64_t w0 = b0, w1 = b1;
    for (int64_t i = 0; i < rank; ++i) {
      input(chunk0, b0++);
      input(chunk1, b1++);
    }
    for (int64_t i = 0; i < p - rank; ++i) {
      input(chunk0, b0++);
      weight(chunk0, w0++);
    }
    for (; w1 < b1; ++w1)
      weight(chunk1, w1);
    for (; w0 < b0; ++w0)
      weight(chunk0, w0);
    llvm::erase_if(actions,
                   [&](const ScheduledAction &a) { return a.mb >= m; });
  }
  return schedule;
}
