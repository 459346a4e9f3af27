//===- DualPipeV.cpp - the DualPipeV ("cut-in-half" DualPipe) schedule ----===//
//
// DualPipeV (DeepSeek, deepseek-ai/DualPipe; PyTorch ScheduleDualPipeV):
// DualPipe's bidirectional pipeline folded into a V, two half-size stages per
// rank, whose steady state pairs the forward of one chunk with the backward
// of the other so that a runtime can overlap their computation and
// communication.
//
//===----------------------------------------------------------------------===//

#include "VShape.h"

#include <deque>

using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {
/// The actions of one rank, appended phase by phase. Chunk 0 is stage r,
/// chunk 1 stage 2p - 1 - r; each chunk's forwards and backwards run in
/// micro-batch order.
class DualPipeVRank {
public:
  DualPipeVRank(const ScheduleProblem &problem, int64_t rank,
                llvm::SmallVectorImpl<ScheduledAction> &actions)
      : problem(problem),
        actions(actions), stages{rank, 2 * problem.numRanks - 1 - rank} {}

  void forward(int chunk) {
    actions.push_back({Phase::forward, stages[chunk], forwards[chunk]++});
  }

  /// A whole backward: fused, or B then W with split-backward.
  void backward(int chunk) {
    appendBackward(actions, problem, stages[chunk], backwards[chunk]++);
  }

  /// A B whose W is deferred to a later weight().
  void backwardInput(int chunk) {
    int64_t mb = backwards[chunk]++;
    actions.push_back({Phase::backward_input, stages[chunk], mb});
    deferred.push_back({Phase::backward_weight, stages[chunk], mb});
  }

  /// The oldest deferred W.
  void weight() {
    actions.push_back(deferred.front());
    deferred.pop_front();
  }

  /// A B that defers its W when `zeroBubble`, else a whole backward.
  void backward(int chunk, bool zeroBubble) {
    zeroBubble ? backwardInput(chunk) : backward(chunk);
  }

private:
  const ScheduleProblem &problem;
  llvm::SmallVectorImpl<ScheduledAction> &actions;
  int64_t stages[2];
  int64_t forwards[2] = {0, 0};
  int64_t backwards[2] = {0, 0};
  std::deque<ScheduledAction> deferred;
};
} // namespace

/// The eight phases of DualPipeV on `rank`; the counts make every chunk run
/// m forwards and m backwards.
static void appendDualPipeVRank(const ScheduleProblem &problem, int64_t rank,
                                llvm::SmallVectorImpl<ScheduledAction> &out) {
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  int64_t below = p - rank - 1; // ranks after this one
  DualPipeVRank r(problem, rank, out);
  // 1. Fill the way down: chunk-0 forwards for the ranks below.
  for (int64_t i = 0; i < 2 * below; ++i)
    r.forward(0);
  // 2. Chunk-0 and chunk-1 forwards in turn, as the first micro-batches
  //    come back up.
  for (int64_t i = 0; i <= rank; ++i) {
    r.forward(0);
    r.forward(1);
  }
  // 3. B1 W1 F1: the first chunk-1 backwards with their W at once.
  for (int64_t i = 0; i < below; ++i) {
    r.backwardInput(1);
    r.weight();
    r.forward(1);
  }
  // 4. Steady state: F0 paired with B1, then F1 with B0.
  for (int64_t i = 0, e = m - 2 * p + rank + 1; i < e; ++i) {
    r.forward(0);
    r.backward(1);
    r.forward(1);
    r.backward(0);
  }
  // 5. No chunk-0 forwards left: B1, then F1 paired with B0.
  for (int64_t i = 0; i < below; ++i) {
    r.backward(1);
    r.forward(1);
    r.backward(0);
  }
  // 6. The last B1 B0 pairs; from the middle on the W's are deferred (from
  //    B1 on odd ranks, from B0 on even ones).
  bool zeroBubble = false;
  for (int64_t i = 0; i <= rank; ++i) {
    bool middle = i == (rank + 1) / 2;
    zeroBubble |= middle && rank % 2 == 1;
    r.backward(1, zeroBubble);
    zeroBubble |= middle && rank % 2 == 0;
    r.backward(0, zeroBubble);
  }
  // 7. Deferred W's fill the wait for each remaining chunk-0 gradient.
  for (int64_t i = 0; i < below; ++i) {
    r.weight();
    r.backwardInput(0);
  }
  // 8. The remaining W's.
  for (int64_t i = 0; i <= rank; ++i)
    r.weight();
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateDualPipeV(const ScheduleProblem &problem) {
  if (llvm::Error error = vshape::requireTwoStagesPerRank(problem, "dualpipev"))
    return std::move(error);
  int64_t p = problem.numRanks, m = problem.numMicrobatches;
  // As in the reference: rank 0 then runs at least one steady-state step
  // (m - 2p + 1 of them).
  if (m < 2 * p)
    return ScheduleError() << "dualpipev needs at least twice as many "
                              "micro-batches as ranks ("
                           << 2 * p << " for " << p << " ranks), got " << m;
  GeneratedSchedule schedule;
  schedule.stageRank = vShapePlacement(problem);
  schedule.ranks.resize(p);
  for (int64_t rank = 0; rank < p; ++rank)
    appendDualPipeVRank(problem, rank, schedule.ranks[rank]);
  return schedule;
}
