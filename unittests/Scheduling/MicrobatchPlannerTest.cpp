//===- MicrobatchPlannerTest.cpp - variable-length micro-batches ----------===//
//
// The micro-batch planner against brute force over every contiguous cut,
// and per-micro-batch costs through the timing model: GPipe's makespan
// with micro-batches of different times.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/MicrobatchPlanner.h"
#include "pp/Scheduling/ScheduleEvaluator.h"
#include "pp/Scheduling/ScheduleGenerators.h"

#include "SortedLists.h"

#include "llvm/ADT/Sequence.h"
#include "gtest/gtest.h"

#include <functional>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// The least objective over all 2^(n-1) cuts of `lengths` into runs within
/// the memory cap, by enumeration; infinity if none fits.
double bruteForce(ArrayRef<int64_t> lengths,
                  const MicrobatchPlanProblem &problem) {
  double best = std::numeric_limits<double>::infinity();
  forEachCut(lengths.size(), [&](ArrayRef<int64_t> ends) {
    MicrobatchPlan plan = makeMicrobatchPlan(lengths, ends, problem);
    bool fits = llvm::all_of(
        llvm::seq<int64_t>(0, plan.getNumMicrobatches()), [&](int64_t mb) {
          return problem.memory.get(plan.rows[mb], plan.paddedLength[mb]) <=
                 problem.memoryCap;
        });
    if (fits)
      best = std::min(best, plan.objective);
  });
  return best;
}

TEST(MicrobatchPlanner, EqualsBruteForceOnEverySortedList) {
  // Linear and attention-like costs, with and without a memory cap that
  // binds, on 2 and 8 stages.
  struct Case {
    int64_t stages;
    TokenCost time;
    double cap;
  };
  Case cases[] = {
      {2, {0.5, 1.0, 0.0}, std::numeric_limits<double>::infinity()},
      {8, {0.0, 1.0, 0.05}, std::numeric_limits<double>::infinity()},
      {4, {1.0, 0.5, 0.02}, 24.0},
  };
  int64_t lists = 0;
  for (const Case &c : cases) {
    MicrobatchPlanProblem problem;
    problem.numStages = c.stages;
    problem.time = c.time;
    problem.memory = {0.0, 1.0, 0.0}; // one unit per token
    problem.memoryCap = c.cap;
    forEachSortedList({9, 5, 2, 1}, 12, [&](ArrayRef<int64_t> lengths) {
      ++lists;
      llvm::Expected<MicrobatchPlan> plan = planMicrobatches(lengths, problem);
      ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
      double expected = bruteForce(lengths, problem);
      ASSERT_NEAR(plan->objective, expected, 1e-9 * expected)
          << "lengths of " << lengths.size() << " starting " << lengths[0];
      // The plan is a cut of the samples within the cap.
      int64_t covered = 0;
      for (int64_t mb = 0; mb < plan->getNumMicrobatches(); ++mb) {
        EXPECT_EQ(plan->begin[mb], covered);
        covered += plan->rows[mb];
        EXPECT_LE(problem.memory.get(plan->rows[mb], plan->paddedLength[mb]),
                  problem.memoryCap);
      }
      EXPECT_EQ(covered, int64_t(lengths.size()));
    });
  }
  // C(n + 3, 3) lists of each length n from 1 to 12, per case.
  EXPECT_EQ(lists, 3 * 1819);
}

TEST(MicrobatchPlanner, RejectsASampleOverTheCap) {
  MicrobatchPlanProblem problem;
  problem.time = {0.0, 1.0, 0.0};
  problem.memory = {0.0, 1.0, 0.0};
  problem.memoryCap = 8.0;
  llvm::Expected<MicrobatchPlan> plan = planMicrobatches({9, 4}, problem);
  ASSERT_FALSE(static_cast<bool>(plan));
  EXPECT_EQ(llvm::toString(plan.takeError()),
            "sample 0 of length 9 needs 9 of activation memory alone, over "
            "the cap of 8");
}

TEST(MicrobatchPlanner, TakesSamplesLongestFirstKeepingTies) {
  EXPECT_EQ(orderLongestFirst({2, 8, 4, 8}),
            (llvm::SmallVector<int64_t>{1, 3, 2, 0}));
}

TEST(MicrobatchPlanner, PaddedBaselineFitsTheCap) {
  // Three samples of 8 tokens hold 24 > 20: two per micro-batch, each
  // padded to 8 tokens and taking 16; (2 - 1) x 16 + 2 x 16.
  MicrobatchPlanProblem problem;
  problem.numStages = 2;
  problem.time = {0.0, 1.0, 0.0};
  problem.memory = {0.0, 1.0, 0.0};
  problem.memoryCap = 20.0;
  PaddedBaseline baseline = getPaddedBaseline({8, 8, 4, 2}, 3, problem);
  EXPECT_EQ(baseline.rows, 2);
  EXPECT_DOUBLE_EQ(baseline.objective, 48.0);
  // Without a cap, three then one: (2 - 1) x 24 + 24 + 8.
  problem.memoryCap = std::numeric_limits<double>::infinity();
  baseline = getPaddedBaseline({8, 8, 4, 2}, 3, problem);
  EXPECT_EQ(baseline.rows, 3);
  EXPECT_DOUBLE_EQ(baseline.objective, 56.0);
}

TEST(MicrobatchCosts, GPipeMakespanIsClosedForm) {
  // Per-micro-batch times the same on every stage, no transfer time:
  // sum F + sum B + (p - 1)(max F + max B).
  MicrobatchPlanProblem problem;
  MicrobatchPlan plan =
      makeMicrobatchPlan({16, 12, 12, 7, 3, 3, 3, 1}, {1, 3, 4, 7, 8}, problem);
  StageTokenCosts stage;
  stage.forward = {0.5, 1.0, 0.0};
  stage.backwardInput = {1.0, 2.0, 0.01};
  stage.activation = {0.0, 1.0, 0.0};
  for (int64_t p : {2, 3, 5}) {
    SmallVector<StageTokenCosts> stages(p, stage);
    ScheduleProblem schedule{p, plan.getNumMicrobatches(), p};
    schedule.cost = getMicrobatchCosts(plan, stages, 0.0);
    const ScheduleGenerator *gpipe = lookupScheduleGenerator("gpipe");
    llvm::Expected<GeneratedSchedule> generated = gpipe->generate(schedule);
    ASSERT_TRUE(static_cast<bool>(generated));
    llvm::Expected<Evaluation> eval = simulate(schedule, *generated);
    ASSERT_TRUE(static_cast<bool>(eval));
    const MicrobatchCosts &table = schedule.cost->perMicrobatch;
    double sumF = 0, sumB = 0, maxF = 0, maxB = 0;
    for (int64_t mb = 0; mb < plan.getNumMicrobatches(); ++mb) {
      sumF += table.forward[mb];
      sumB += table.backwardInput[mb];
      maxF = std::max(maxF, table.forward[mb]);
      maxB = std::max(maxB, table.backwardInput[mb]);
    }
    EXPECT_NEAR(eval->makespan, sumF + sumB + (p - 1) * (maxF + maxB), 1e-9)
        << "p = " << p;
  }
}

} // namespace
