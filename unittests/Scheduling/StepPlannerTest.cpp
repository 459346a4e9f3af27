//===- StepPlannerTest.cpp - a plan and a schedule per step ---------------===//
//
// The dynamic program at compiled shapes against brute force, and per-step
// plans: each step's cut is the dynamic program's on its sorted samples,
// each micro-batch at the quickest shape holding it, one verified schedule
// per distinct shape sequence, and errors that name the step and sample.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/StepPlanner.h"
#include "pp/Scheduling/ScheduleEvaluator.h"

#include "SortedLists.h"

#include "llvm/ADT/Sequence.h"
#include "gtest/gtest.h"

#include <functional>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// Three shapes of about the same number of tokens: 2 x 16, 4 x 8, 8 x 2.
SmallVector<MicrobatchShape> getShapes() {
  return {{2, 16, 9.0, 32.0}, {4, 8, 5.0, 32.0}, {8, 2, 2.5, 16.0}};
}

/// The least objective over every cut into a multiple of the problem's
/// micro-batch multiple whose micro-batches some shape holds within the
/// cap, by enumeration; infinity if none does.
double bruteForce(ArrayRef<int64_t> lengths,
                  const MicrobatchPlanProblem &problem) {
  double best = std::numeric_limits<double>::infinity();
  forEachCut(lengths.size(), [&](ArrayRef<int64_t> ends) {
    if (ends.size() % problem.microbatchMultiple)
      return;
    MicrobatchPlan plan = makeMicrobatchPlan(lengths, ends, problem);
    if (llvm::all_of(plan.shape, [](int64_t shape) { return shape >= 0; }))
      best = std::min(best, plan.objective);
  });
  return best;
}

TEST(MicrobatchPlanner, ShapesEqualBruteForceOnEverySortedList) {
  int64_t lists = 0, refused = 0;
  // Without a cap, and with one that rules out the 4 x 8 shape; any
  // micro-batch count, and only multiples of 2 or 3 (interleaved-1f1b's
  // rank counts).
  for (double cap : {std::numeric_limits<double>::infinity(), 20.0})
    for (int64_t multiple : {1, 2, 3}) {
      MicrobatchPlanProblem problem;
      problem.numStages = 3;
      problem.shapes = getShapes();
      if (cap < 32.0)
        problem.shapes[0].memory = 16.0;
      problem.memoryCap = cap;
      problem.microbatchMultiple = multiple;
      forEachSortedList({16, 7, 2, 1}, 11, [&](ArrayRef<int64_t> lengths) {
        ++lists;
        llvm::Expected<MicrobatchPlan> plan =
            planMicrobatches(lengths, problem);
        double expected = bruteForce(lengths, problem);
        if (!plan) {
          ++refused;
          llvm::consumeError(plan.takeError());
          ASSERT_EQ(expected, std::numeric_limits<double>::infinity());
          return;
        }
        ASSERT_NEAR(plan->objective, expected, 1e-9 * expected);
        EXPECT_EQ(plan->getNumMicrobatches() % multiple, 0);
        for (int64_t mb = 0; mb < plan->getNumMicrobatches(); ++mb) {
          const MicrobatchShape &shape = problem.shapes[plan->shape[mb]];
          EXPECT_TRUE(shape.holds(plan->rows[mb], plan->paddedLength[mb]));
          EXPECT_LE(shape.memory, cap);
        }
      });
    }
  EXPECT_EQ(lists, 6 * 1364); // C(n + 3, 3) lists of each n from 1 to 11
  // Those with fewer samples than the multiple: 4 of one, 10 of two.
  EXPECT_EQ(refused, 2 * (4 + 4 + 10));
}

TEST(MicrobatchPlanner, NamesTheMultipleNoCutMeets) {
  MicrobatchPlanProblem problem;
  problem.numStages = 2;
  problem.shapes = getShapes();
  problem.microbatchMultiple = 2;
  // Eight short samples run best as one 8 x 2 micro-batch; the multiple
  // makes them two.
  llvm::Expected<MicrobatchPlan> plan =
      planMicrobatches({2, 2, 2, 2, 2, 2, 2, 2}, problem);
  ASSERT_TRUE(static_cast<bool>(plan)) << toString(plan.takeError());
  EXPECT_EQ(plan->getNumMicrobatches(), 2);
  llvm::Expected<MicrobatchPlan> one = planMicrobatches({16}, problem);
  ASSERT_FALSE(static_cast<bool>(one));
  EXPECT_EQ(toString(one.takeError()),
            "no cut of 1 sample into a multiple of 2 micro-batches at the "
            "shapes");
}

/// Shapes whose stages cost their time split 1 : 2 between F and B.
StepPlanProblem getStepProblem(int64_t numStages = 2, int64_t numRanks = 2) {
  StepPlanProblem problem;
  problem.numStages = numStages;
  problem.numRanks = numRanks;
  for (const MicrobatchShape &shape : getShapes()) {
    StepShape step{shape.rows, shape.length, StageCosts::getUnit(numStages)};
    step.costs.forward.assign(numStages, shape.time / 3);
    step.costs.backwardInput.assign(numStages, 2 * shape.time / 3);
    step.costs.backwardWeight.assign(numStages, 0.0);
    step.costs.activation.assign(numStages, shape.memory);
    problem.shapes.push_back(step);
  }
  return problem;
}

TEST(StepPlanner, EachStepIsCutByTheDynamicProgram) {
  StepPlanProblem problem = getStepProblem();
  SmallVector<SmallVector<int64_t>> steps = {{3, 16, 1, 9, 2, 2, 7, 1},
                                             {2, 1, 2, 2, 1, 1, 2, 2},
                                             {16, 15, 14, 13, 1, 1, 1, 1},
                                             {1, 2, 2, 1, 2, 2, 1, 2}};
  const ScheduleGenerator *greedy = lookupScheduleGenerator("greedy");
  llvm::Expected<PlannedSteps> planned = planSteps(steps, 1, problem, *greedy);
  ASSERT_TRUE(static_cast<bool>(planned)) << toString(planned.takeError());
  MicrobatchPlanProblem cut;
  cut.numStages = 2;
  cut.shapes = getShapes();
  for (auto [index, lengths] : llvm::enumerate(steps)) {
    const StepPlan &plan = planned->steps[index];
    SmallVector<int64_t> sorted;
    for (int64_t sample : plan.order)
      sorted.push_back(lengths[sample]);
    EXPECT_TRUE(llvm::is_sorted(llvm::reverse(sorted)));
    llvm::Expected<MicrobatchPlan> expected = planMicrobatches(sorted, cut);
    ASSERT_TRUE(static_cast<bool>(expected));
    EXPECT_EQ(plan.microbatches.begin, expected->begin) << "step " << index;
    EXPECT_EQ(plan.microbatches.shape, expected->shape) << "step " << index;
    // Each micro-batch runs at the quickest shape holding it.
    for (int64_t mb = 0; mb < plan.microbatches.getNumMicrobatches(); ++mb)
      for (const MicrobatchShape &shape : cut.shapes) {
        if (shape.holds(plan.microbatches.rows[mb],
                        plan.microbatches.paddedLength[mb])) {
          EXPECT_LE(cut.shapes[plan.microbatches.shape[mb]].time, shape.time);
        }
      }
  }
  // Steps 1 and 3 hold the same lengths in another order: one schedule.
  EXPECT_EQ(planned->scheduleOfStep[1], planned->scheduleOfStep[3]);
  EXPECT_NE(planned->scheduleOfStep[0], planned->scheduleOfStep[1]);
  EXPECT_NE(planned->scheduleOfStep[0], planned->scheduleOfStep[2]);
  ASSERT_EQ(planned->schedules.size(), 3u);
  // Each schedule runs its micro-batches, verified, with their own costs.
  for (auto [shapes, schedule] :
       llvm::zip(planned->shapeSequences, planned->schedules)) {
    ScheduleProblem check{2, int64_t(shapes.size()), 2};
    check.cost = getShapeSequenceCosts(shapes, problem);
    EXPECT_FALSE(static_cast<bool>(verify(check, schedule)));
    llvm::Expected<Evaluation> eval = simulate(check, schedule);
    ASSERT_TRUE(static_cast<bool>(eval));
    double sum = 0.0, leastF = 1e9, leastB = 1e9;
    for (int64_t shape : shapes) {
      const StageCosts &c = problem.shapes[shape].costs;
      sum += c.forward[0] + c.backwardInput[0];
      leastF = std::min(leastF, c.forward[0]);
      leastB = std::min(leastB, c.backwardInput[0]);
    }
    // Stage 1 waits for a forward of stage 0, which ends on a backward.
    EXPECT_GE(eval->makespan, sum + leastF + leastB - 1e-9);
  }
  // Step 1's eight short samples fill one 8 x 2 micro-batch.
  EXPECT_EQ(planned->shapeSequences[planned->scheduleOfStep[1]],
            SmallVector<int64_t>{2});
}

TEST(StepPlanner, ReplicasTakeEveryOtherSortedSample) {
  StepPlanProblem problem = getStepProblem();
  SmallVector<SmallVector<int64_t>> lines = {{3, 16, 1, 9, 2, 2, 7, 1, 2}};
  llvm::Expected<PlannedSteps> planned =
      planSteps(lines, 2, problem, *lookupScheduleGenerator("1f1b"));
  ASSERT_TRUE(static_cast<bool>(planned)) << toString(planned.takeError());
  ASSERT_EQ(planned->steps.size(), 2u);
  // Longest first: 16 9 7 3 2 2 2 1 1 (samples 1 3 6 0 4 5 8 2 7).
  EXPECT_EQ(planned->steps[0].order, (SmallVector<int64_t>{1, 6, 4, 8, 7}));
  EXPECT_EQ(planned->steps[1].order, (SmallVector<int64_t>{3, 0, 5, 2}));
  // Each replica's cut is the dynamic program's on its own samples.
  MicrobatchPlanProblem cut;
  cut.numStages = 2;
  cut.shapes = getShapes();
  for (auto [replica, own] : llvm::enumerate(
           SmallVector<SmallVector<int64_t>>{{16, 7, 2, 2, 1}, {9, 3, 2, 1}})) {
    llvm::Expected<MicrobatchPlan> expected = planMicrobatches(own, cut);
    ASSERT_TRUE(static_cast<bool>(expected));
    EXPECT_EQ(planned->steps[replica].microbatches.begin, expected->begin);
    EXPECT_EQ(planned->steps[replica].microbatches.shape, expected->shape);
  }
  SmallVector<SmallVector<int64_t>> bad = {{4, 2}, {4, 2, 17, 1}};
  llvm::Expected<PlannedSteps> refused =
      planSteps(bad, 2, problem, *lookupScheduleGenerator("1f1b"));
  ASSERT_FALSE(static_cast<bool>(refused));
  EXPECT_EQ(toString(refused.takeError()),
            "step 1 (replica 0): sample 2 has 17 tokens, more than the "
            "longest micro-batch shape holds (16)");
}

TEST(StepPlanner, NamesTheStepAndSampleNoShapeHolds) {
  StepPlanProblem problem = getStepProblem();
  SmallVector<SmallVector<int64_t>> steps = {{3, 1}, {4, 2, 17, 1}};
  llvm::Expected<PlannedSteps> planned =
      planSteps(steps, 1, problem, *lookupScheduleGenerator("1f1b"));
  ASSERT_FALSE(static_cast<bool>(planned));
  EXPECT_EQ(toString(planned.takeError()),
            "step 1: sample 2 has 17 tokens, more than the longest "
            "micro-batch shape holds (16)");
}

TEST(StepPlanner, SchedulesEachPlanUnderTheMemoryCaps) {
  StepPlanProblem problem = getStepProblem();
  // Eight samples of 2 tokens, 8 x 2 holding 64 and the others 32: a cap
  // of 40 rules out 8 x 2 and holds one micro-batch of the others.
  problem.shapes[2].costs.activation.assign(2, 64.0);
  SmallVector<SmallVector<int64_t>> lines = {{2, 2, 2, 2, 2, 2, 2, 2}};
  const ScheduleGenerator *greedy = lookupScheduleGenerator("greedy");
  problem.memoryCap = {40.0, 40.0};
  llvm::Expected<PlannedSteps> planned = planSteps(lines, 1, problem, *greedy);
  ASSERT_TRUE(static_cast<bool>(planned)) << toString(planned.takeError());
  // The planner cuts at 4 x 8 instead of 8 x 2, and the schedule holds
  // one micro-batch (32) per rank at a time.
  EXPECT_EQ(planned->shapeSequences[0], (SmallVector<int64_t>{1, 1}));
  ScheduleProblem check{2, 2, 2};
  check.cost = getShapeSequenceCosts(planned->shapeSequences[0], problem);
  check.memoryCap = problem.memoryCap;
  EXPECT_FALSE(static_cast<bool>(verify(check, planned->schedules[0])));
  llvm::Expected<Evaluation> eval = simulate(check, planned->schedules[0]);
  ASSERT_TRUE(static_cast<bool>(eval));
  EXPECT_LE(eval->peak(), 40.0);
  // Uncapped, rank 0 holds both 4 x 8 micro-batches' forwards at once.
  problem.memoryCap.clear();
  llvm::Expected<GeneratedSchedule> free =
      scheduleShapeSequence({1, 1}, problem, *greedy);
  ASSERT_TRUE(static_cast<bool>(free)) << toString(free.takeError());
  check.memoryCap.clear();
  llvm::Expected<Evaluation> freeEval = simulate(check, *free);
  ASSERT_TRUE(static_cast<bool>(freeEval));
  EXPECT_EQ(freeEval->peak(), 64.0);
  // Under GPipe, which runs every forward before the backwards, no
  // schedule fits 40: the error names the step and the plan.
  problem.memoryCap = {40.0, 40.0};
  llvm::Expected<PlannedSteps> refused =
      planSteps(lines, 1, problem, *lookupScheduleGenerator("gpipe"));
  ASSERT_FALSE(static_cast<bool>(refused));
  std::string message = toString(refused.takeError());
  EXPECT_TRUE(StringRef(message).starts_with("step 0: plan 0: ")) << message;
}

TEST(StepPlanner, CutsInterleavedStepsIntoGroupsOfTheRanks) {
  // 4 stages on 2 ranks: interleaved-1f1b runs micro-batches in pairs.
  StepPlanProblem problem = getStepProblem(4, 2);
  const ScheduleGenerator &interleaved =
      *lookupScheduleGenerator("interleaved-1f1b");
  problem.microbatchMultiple = getMicrobatchMultiple(interleaved, 2);
  EXPECT_EQ(problem.microbatchMultiple, 2);
  EXPECT_EQ(getMicrobatchMultiple(*lookupScheduleGenerator("greedy"), 2), 1);
  // Eight short samples fill one 8 x 2 micro-batch, which has no pair.
  SmallVector<SmallVector<int64_t>> lines = {{2, 2, 2, 2, 2, 2, 2, 2},
                                             {16, 9, 7, 2, 1}};
  llvm::Expected<PlannedSteps> planned =
      planSteps(lines, 1, problem, interleaved);
  ASSERT_TRUE(static_cast<bool>(planned)) << toString(planned.takeError());
  for (const StepPlan &plan : planned->steps)
    EXPECT_EQ(plan.microbatches.getNumMicrobatches() % 2, 0);
  for (auto [shapes, schedule] :
       llvm::zip(planned->shapeSequences, planned->schedules)) {
    ScheduleProblem check{4, int64_t(shapes.size()), 2};
    check.cost = getShapeSequenceCosts(shapes, problem);
    EXPECT_FALSE(static_cast<bool>(verify(check, schedule)));
  }
}

TEST(StepPlanner, CapsHoldEveryStageOfARank) {
  // 4 stages on 2 ranks: hanayo holds one micro-batch's activations of
  // both of a rank's stages, 2 x 32 at 4 x 8, 2 x 16 at 2 x 16.
  StepPlanProblem problem = getStepProblem(4, 2);
  problem.shapes[0].costs.activation.assign(4, 16.0);
  problem.memoryCap = {40.0, 40.0};
  EXPECT_EQ(getStepCutProblem(problem).shapes[1].memory, 64.0);
  // 3 stages on 2 ranks: rank 0 holds stages 0 and 2.
  StepPlanProblem uneven = getStepProblem(3, 2);
  uneven.shapes[0].costs.activation.assign(3, 16.0);
  EXPECT_EQ(getStepCutProblem(uneven).shapes[0].memory, 32.0);
  // Four samples of 8 tokens would run at 4 x 8, which alone fits 40 on
  // one stage but not on a rank's two: they run as two 2 x 16.
  SmallVector<SmallVector<int64_t>> lines = {{8, 8, 8, 8}};
  llvm::Expected<PlannedSteps> planned =
      planSteps(lines, 1, problem, *lookupScheduleGenerator("hanayo"));
  ASSERT_TRUE(static_cast<bool>(planned)) << toString(planned.takeError());
  EXPECT_EQ(planned->shapeSequences[0], (SmallVector<int64_t>{0, 0}));
}

TEST(StepPlanner, PacksSamplesIntoRowsOfTheContext) {
  // 3 + 16 + 1 + 9 = 29 tokens: one full row of 16 and 13 left.
  EXPECT_EQ(packSamples({3, 16, 1, 9}, 16), (SmallVector<int64_t>{16, 13}));
  EXPECT_EQ(packSamples({8, 8}, 16), (SmallVector<int64_t>{16}));
  EXPECT_EQ(packSamples({1}, 16), (SmallVector<int64_t>{1}));
}

TEST(StepPlanner, PipelineTimeSumsTheSlowestReplicaOfEachLine) {
  StepPlanProblem problem = getStepProblem();
  SmallVector<SmallVector<int64_t>> lines = {{3, 16, 1, 9, 2, 2, 7, 1},
                                             {2, 1, 2, 2}};
  const ScheduleGenerator *greedy = lookupScheduleGenerator("greedy");
  for (int64_t replicas : {1, 2}) {
    llvm::Expected<PlannedSteps> planned =
        planSteps(lines, replicas, problem, *greedy);
    ASSERT_TRUE(static_cast<bool>(planned)) << toString(planned.takeError());
    double expected = 0.0;
    for (size_t line = 0; line < lines.size(); ++line) {
      double slowest = 0.0;
      for (int64_t r = 0; r < replicas; ++r)
        slowest = std::max(
            slowest,
            planned->steps[line * replicas + r].microbatches.objective);
      EXPECT_GT(slowest, 0.0);
      expected += slowest;
    }
    EXPECT_DOUBLE_EQ(getPipelineTime(*planned, replicas), expected);
  }
}

} // namespace
