//===- StageCutsTest.cpp - the stage-cut planner without IR ---------------===//
//
// Cuts chains of ops with known times and sizes into stages: the transfers
// at cuts between ranks, the memory caps (and the factor they must grow by
// when nothing fits), recomputation and cuts the model fixes.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/PartitionPlanner.h"

#include "llvm/ADT/ArrayRef.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// A chain whose op i takes times[i] (F a third of it) and holds weights[i]
/// and activations[i] bytes, inputs a tenth of its activations, on ranks
/// that send any cut in `transfer` seconds.
struct Chain {
  SmallVector<double> times, weights, activations;
  double transfer = 0.0;

  double sum(ArrayRef<double> values, int64_t begin, int64_t end) const {
    double total = 0.0;
    for (int64_t op = begin; op < end; ++op)
      total += values[op];
    return total;
  }

  /// `problem` over this chain, one stage per rank.
  StageCuts plan(StageCutProblem problem) const {
    auto compute = [&](int64_t op, int64_t) { return times[op]; };
    auto forward = [&](int64_t op, int64_t) { return times[op] / 3.0; };
    auto send = [&](int64_t, int64_t, int64_t) { return transfer; };
    auto params = [&](int64_t b, int64_t e) { return sum(weights, b, e); };
    auto acts = [&](int64_t b, int64_t e) { return sum(activations, b, e); };
    auto inputs = [&](int64_t b, int64_t e) { return acts(b, e) / 10.0; };
    problem.numOps = times.size();
    if (problem.mayCut.empty())
      problem.mayCut.assign(times.size() + 1, true);
    problem.computeTime = compute;
    problem.forwardTime = forward;
    problem.transferTime = send;
    problem.parameterBytes = params;
    problem.activationBytes = acts;
    problem.inputBytes = inputs;
    return planStageCuts(problem);
  }
};

/// Two stages on two ranks with caps `cap`, each holding `inFlight`
/// micro-batches, one weight copy.
StageCutProblem twoStages(double cap, double inFlight = 1.0) {
  StageCutProblem problem;
  problem.stageRank = {0, 1};
  problem.inFlight = {inFlight, inFlight};
  problem.memoryCap = {cap, cap};
  problem.weightCopies = 1.0;
  return problem;
}

TEST(StageCuts, BalancesTimeAndCountsTransfersOnBothEnds) {
  Chain chain{{1, 1, 1, 3}, {0, 0, 0, 0}, {0, 0, 0, 0}, 0.5};
  StageCuts cuts = chain.plan(twoStages(1e9));
  ASSERT_TRUE(cuts.partition.has_value());
  EXPECT_EQ(cuts.partition->starts, (SmallVector<int64_t>{0, 3}));
  // 3 of compute and the transfer on both ends of the cut, 2 x 0.5.
  ASSERT_EQ(cuts.loads.size(), 2u);
  EXPECT_DOUBLE_EQ(cuts.loads[0].time, 4.0);
  EXPECT_DOUBLE_EQ(cuts.loads[1].time, 4.0);
  EXPECT_DOUBLE_EQ(cuts.partition->bottleneck, 4.0);
  EXPECT_EQ(cuts.partition->recompute, (SmallVector<bool>{false, false}));
}

TEST(StageCuts, ChargesWeightCopiesAndActivationsInFlight) {
  Chain chain{{1, 1}, {10, 20}, {1, 2}};
  StageCutProblem problem = twoStages(1e9, /*inFlight=*/3.0);
  problem.weightCopies = 2.0;
  StageCuts cuts = chain.plan(problem);
  ASSERT_TRUE(cuts.partition.has_value());
  EXPECT_DOUBLE_EQ(cuts.loads[0].memory, 2.0 * 10 + 3.0 * 1);
  EXPECT_DOUBLE_EQ(cuts.loads[1].memory, 2.0 * 20 + 3.0 * 2);
}

TEST(StageCuts, MarkersAndWeightSpansFixWhereItCuts) {
  // Unconstrained, the cut goes before op 2 (2 | 3).
  Chain chain{{1, 1, 1, 2}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  StageCutProblem problem = twoStages(1e9);
  problem.markerCuts = {1};
  EXPECT_EQ(chain.plan(problem).partition->starts,
            (SmallVector<int64_t>{0, 1}));
  problem.markerCuts.clear();
  problem.mayCut = {true, true, false, true, true};
  EXPECT_EQ(chain.plan(problem).partition->starts,
            (SmallVector<int64_t>{0, 3}));
  problem.mayCut = {true, false, false, false, true};
  StageCuts cuts = chain.plan(problem);
  EXPECT_FALSE(cuts.partition.has_value());
  EXPECT_FALSE(cuts.overMemory);
}

TEST(StageCuts, OverTheCapsNamesTheFactorTheyMustGrowBy) {
  // The most even cut leaves 4 weight bytes on a rank; caps of 2 must double.
  Chain chain{{1, 1, 1, 1}, {1, 1, 2, 2}, {0, 0, 0, 0}};
  StageCuts cuts = chain.plan(twoStages(2.0));
  EXPECT_FALSE(cuts.partition.has_value());
  EXPECT_TRUE(cuts.overMemory);
  ASSERT_TRUE(cuts.capFactor.has_value());
  EXPECT_DOUBLE_EQ(*cuts.capFactor, 2.0);
}

TEST(StageCuts, RecomputesOnlyWhereTheCapRequires) {
  // Stage 1 holds 2 x 10 activation bytes in flight, over its cap of 12;
  // recomputing it keeps one micro-batch's inputs (1) and re-creates one
  // micro-batch's activations (10), and adds its forward time.
  Chain chain{{3, 3}, {0, 0}, {1, 10}};
  StageCutProblem problem = twoStages(12.0, /*inFlight=*/2.0);
  EXPECT_TRUE(chain.plan(problem).overMemory);
  problem.recompute = RecomputePolicy::Auto;
  StageCuts cuts = chain.plan(problem);
  ASSERT_TRUE(cuts.partition.has_value());
  EXPECT_EQ(cuts.partition->recompute, (SmallVector<bool>{false, true}));
  EXPECT_DOUBLE_EQ(cuts.loads[1].memory, 1.0 + 10.0);
  EXPECT_DOUBLE_EQ(cuts.loads[1].time, 3.0 + 1.0);
  EXPECT_DOUBLE_EQ(cuts.loads[0].time, 3.0);

  problem.recompute = RecomputePolicy::All;
  cuts = chain.plan(problem);
  ASSERT_TRUE(cuts.partition.has_value());
  EXPECT_EQ(cuts.partition->recompute, (SmallVector<bool>{true, true}));
  EXPECT_DOUBLE_EQ(cuts.loads[0].time, 4.0);
}

} // namespace
