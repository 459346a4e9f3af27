//===- ScheduleTest.cpp - the scheduling library without IR ---------------===//
//
// Generators, the timing model, the searches and `verify` on plain data:
// closed forms and known optima, and the schedules `verify` must reject.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ExactScheduleSearch.h"
#include "pp/Scheduling/PartitionPlanner.h"
#include "pp/Scheduling/ScheduleEvaluator.h"
#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/TransferOrder.h"
#include "pp/Scheduling/ZeroBubbleGreedy.h"

#include "gtest/gtest.h"

#include <functional>
#include <numeric>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// The schedule `name` generates for `problem`; fails the test if none.
GeneratedSchedule generate(llvm::StringRef name,
                           const ScheduleProblem &problem) {
  const ScheduleGenerator *generator = lookupScheduleGenerator(name);
  EXPECT_NE(generator, nullptr) << name.str();
  llvm::Expected<GeneratedSchedule> schedule = generator->generate(problem);
  if (!schedule) {
    ADD_FAILURE() << llvm::toString(schedule.takeError());
    return {};
  }
  return std::move(*schedule);
}

/// The message of `error`, or "" if it is success.
std::string message(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

TEST(ScheduleTiming, OneFOneBMakespanIsClosedForm) {
  // (m + p - 1)(F + B) with the fused backward B = 2 under unit costs.
  for (int64_t p : {2, 4, 8})
    for (int64_t m : {4, 8, 16}) {
      ScheduleProblem problem{p, m, p};
      GeneratedSchedule schedule = generate("1f1b", problem);
      llvm::Expected<Evaluation> eval = simulate(problem, schedule);
      ASSERT_TRUE(static_cast<bool>(eval));
      EXPECT_DOUBLE_EQ(eval->makespan, double((m + p - 1) * 3))
          << "p = " << p << ", m = " << m;
      // Rank r holds p - r micro-batches at its peak, all m if fewer.
      for (int64_t r = 0; r < p; ++r)
        EXPECT_DOUBLE_EQ(eval->rankPeak[r], double(std::min(p - r, m)));
    }
}

TEST(TransferOrder, AsyncProgramTimesAsTheComputeOnlyRun) {
  // Each receive right before its consumer, sends that never block: the
  // program's makespan is the compute-only run's, inputs arriving the
  // transfer time late.
  ScheduleProblem problem{4, 8, 4, /*splitBackward=*/true};
  problem.cost = StageCosts::getUnit(4);
  problem.cost->forward = {1.0, 2.0, 1.0, 1.5};
  problem.cost->transfer = 0.7;
  ActionCosts costs(*problem.cost);
  for (llvm::StringRef name : {"1f1b", "zb-h1", "zb-h2", "gpipe"}) {
    GeneratedSchedule schedule = generate(name, problem);
    RankActions program = insertTransfers(schedule);
    // One receive and one send per boundary, micro-batch and direction.
    EXPECT_EQ(program.actions.size(), size_t(3 * 4 * 8 + 4 * 3 * 8));
    ScheduleTiming timing(4, 8);
    ASSERT_TRUE(succeeded(
        runProgram(schedule, costs, TransferSemantics::async, timing)));
    llvm::Expected<Evaluation> eval = simulate(problem, schedule);
    ASSERT_TRUE(static_cast<bool>(eval));
    EXPECT_DOUBLE_EQ(timing.getMakespan(), eval->makespan) << name.str();
  }
}

TEST(TransferOrder, RendezvousOrderRunsAndCostsNoLess) {
  // Every built-in's program runs to the end with sends that wait for
  // their receives, no faster than with sends that never block; the
  // evaluator times a rendezvous problem as that program.
  for (llvm::StringRef name : {"1f1b", "zb-h1", "zb-h2", "gpipe"}) {
    ScheduleProblem problem{4, 8, 4, /*splitBackward=*/true};
    problem.cost = StageCosts::getUnit(4);
    problem.cost->transfer = 0.5;
    ActionCosts costs(*problem.cost);
    GeneratedSchedule schedule = generate(name, problem);
    ScheduleTiming timing(4, 8);
    ASSERT_TRUE(succeeded(
        runProgram(schedule, costs, TransferSemantics::rendezvous, timing)))
        << name.str();
    double rendezvous = timing.getMakespan();
    llvm::Expected<Evaluation> async = simulate(problem, schedule);
    ASSERT_TRUE(static_cast<bool>(async));
    EXPECT_GE(rendezvous, async->makespan - 1e-9) << name.str();
    problem.semantics = TransferSemantics::rendezvous;
    llvm::Expected<Evaluation> eval = simulate(problem, schedule);
    ASSERT_TRUE(static_cast<bool>(eval));
    EXPECT_DOUBLE_EQ(eval->makespan, rendezvous) << name.str();
  }
}

TEST(TransferOrder, StampsMoveTransfersIntoSafeGroups) {
  // ZB-H2's receives right before their consumers deadlock with sends that
  // wait for their receives, even grouped; posted in the order of their
  // async send times, every transfer completes. Compute actions keep their
  // order.
  ScheduleProblem problem{4, 8, 4, /*splitBackward=*/true};
  GeneratedSchedule schedule = generate("zb-h2", problem);
  ActionCosts costs(StageCosts::getUnit(4));
  RankActions program = insertTransfers(schedule);
  ScheduleTiming timing(4, 8);
  for (int64_t rank = 0; rank < 4; ++rank)
    groupAdjacentTransfers(program.getRank(rank));
  timing.setActions(program.actions, program.rankBegin);
  EXPECT_TRUE(failed(timing.run(costs, TransferSemantics::rendezvous)));
  RankActions ordered = program;
  std::vector<int64_t> order;
  ASSERT_TRUE(succeeded(orderForRendezvous(ordered, 4, 8, costs, &order)));
  std::vector<int64_t> unmoved(order.size());
  std::iota(unmoved.begin(), unmoved.end(), 0);
  EXPECT_NE(order, unmoved);
  for (int64_t rank = 0; rank < 4; ++rank) {
    SmallVector<TimedAction> computes;
    for (int64_t i = program.rankBegin[rank]; i < program.rankBegin[rank + 1];
         ++i) {
      EXPECT_GE(order[i], program.rankBegin[rank]);
      EXPECT_LT(order[i], program.rankBegin[rank + 1]);
      if (ordered.actions[i].kind == TimedAction::Kind::compute)
        computes.push_back(ordered.actions[i]);
    }
    ASSERT_EQ(computes.size(), schedule.ranks[rank].size());
    for (auto [timed, action] : llvm::zip(computes, schedule.ranks[rank]))
      EXPECT_TRUE(timed.phase == action.phase && timed.mb == action.mb);
  }
  timing.setActions(ordered.actions, ordered.rankBegin);
  EXPECT_TRUE(succeeded(timing.run(costs, TransferSemantics::rendezvous)));
}

TEST(ScheduleTiming, ZeroBubbleH1Bubble) {
  // Each rank idles (p - 1)(F + B - W) = p - 1 under unit costs.
  ScheduleProblem problem{4, 16, 4};
  GeneratedSchedule schedule = generate("zb-h1", problem);
  llvm::Expected<Evaluation> eval = simulate(problem, schedule);
  ASSERT_TRUE(static_cast<bool>(eval));
  EXPECT_DOUBLE_EQ(eval->makespan, 51.0);
  for (double busy : eval->rankBusy)
    EXPECT_DOUBLE_EQ(eval->makespan - busy, 3.0);
  EXPECT_NEAR(eval->bubble(), 12.0 / (51.0 * 4), 1e-12);
}

TEST(ScheduleTiming, TransferTimeDelaysOtherRanksOnly) {
  // GPipe on 2 stages, 1 micro-batch: F0, (t), F1, B1, (t), B0.
  ScheduleProblem problem{2, 1, 2};
  StageCosts costs = StageCosts::getUnit(2);
  costs.transfer = 0.5;
  problem.cost = costs;
  GeneratedSchedule schedule = generate("gpipe", problem);
  llvm::Expected<Evaluation> eval = simulate(problem, schedule);
  ASSERT_TRUE(static_cast<bool>(eval));
  EXPECT_DOUBLE_EQ(eval->makespan, 1 + 0.5 + 1 + 2 + 0.5 + 2);
}

TEST(ScheduleVerify, AcceptsEveryBuiltin) {
  for (llvm::StringRef name : {"gpipe", "1f1b", "zb-h1", "zb-h2"})
    for (bool split : {false, true}) {
      ScheduleProblem problem{4, 8, 4, split};
      EXPECT_EQ(message(verify(problem, generate(name, problem))), "")
          << name.str();
    }
  ScheduleProblem looped{8, 8, 4};
  for (llvm::StringRef name : {"interleaved-1f1b", "zbv", "looped-bfs"})
    EXPECT_EQ(message(verify(looped, generate(name, looped))), "")
        << name.str();
  ScheduleProblem noFlush{4, 8, 4};
  EXPECT_EQ(message(verify(noFlush, generate("pipedream-2bw", noFlush))), "");
}

TEST(ScheduleVerify, RejectsMissingAction) {
  ScheduleProblem problem{2, 2, 2};
  GeneratedSchedule schedule = generate("1f1b", problem);
  schedule.ranks[1].pop_back(); // the last backward of stage 1
  EXPECT_EQ(message(verify(problem, schedule)),
            "missing backward of stage 1 micro-batch 1");
}

TEST(ScheduleVerify, RejectsDuplicateAction) {
  ScheduleProblem problem{2, 2, 2};
  GeneratedSchedule schedule = generate("gpipe", problem);
  schedule.ranks[0].push_back(schedule.ranks[0].front());
  EXPECT_EQ(message(verify(problem, schedule)),
            "duplicate forward of stage 0 micro-batch 0");
}

TEST(ScheduleVerify, RejectsDependencyViolation) {
  // Stage 1 runs the backward of micro-batch 0 before its forward.
  ScheduleProblem problem{2, 1, 2};
  GeneratedSchedule schedule = generate("gpipe", problem);
  std::swap(schedule.ranks[1][0], schedule.ranks[1][1]);
  EXPECT_EQ(message(verify(problem, schedule)),
            "backward of stage 1 micro-batch 0 runs before the forward of "
            "stage 1 micro-batch 0 it depends on");
}

TEST(ScheduleVerify, RejectsRanksWaitingForEachOther) {
  // Stages 0 and 2 on rank 0, stage 1 on rank 1: rank 0 runs the forward of
  // stage 2 first, whose input stage 1 computes from stage 0's forward.
  ScheduleProblem problem{3, 1, 2};
  GeneratedSchedule schedule;
  schedule.stageRank = {0, 1, 0};
  schedule.ranks = {{{Phase::forward, 2, 0},
                     {Phase::forward, 0, 0},
                     {Phase::backward, 2, 0},
                     {Phase::backward, 0, 0}},
                    {{Phase::forward, 1, 0}, {Phase::backward, 1, 0}}};
  EXPECT_EQ(message(verify(problem, schedule)),
            "the ranks wait forever: rank 0 at forward of stage 2 "
            "micro-batch 0, rank 1 at forward of stage 1 micro-batch 0, "
            "whose inputs are never computed before them");
  std::swap(schedule.ranks[0][0], schedule.ranks[0][1]);
  EXPECT_EQ(message(verify(problem, schedule)), "");
}

TEST(ScheduleVerify, RejectsActionOffItsRank) {
  ScheduleProblem problem{2, 1, 2};
  GeneratedSchedule schedule = generate("gpipe", problem);
  schedule.stageRank = {0, 0};
  EXPECT_EQ(message(verify(problem, schedule)),
            "forward of stage 1 micro-batch 0 is on rank 1, but stage 1 is "
            "placed on rank 0");
}

TEST(ScheduleVerify, RejectsMemoryOverCap) {
  // GPipe holds all 4 micro-batches on rank 0; its cap of 2 is passed at
  // the third.
  ScheduleProblem problem{2, 4, 2};
  GeneratedSchedule schedule = generate("gpipe", problem);
  problem.memoryCap = {2.0, 4.0};
  EXPECT_EQ(message(verify(problem, schedule)),
            "leaves rank 0 holding 3 units of activation memory, above the "
            "schedule's memory_cap of 2");
}

TEST(ScheduleGenerators, RejectProblemsWithReasons) {
  ScheduleProblem looped{8, 8, 4};
  llvm::Expected<GeneratedSchedule> schedule =
      lookupScheduleGenerator("1f1b")->generate(looped);
  ASSERT_FALSE(static_cast<bool>(schedule));
  EXPECT_EQ(llvm::toString(schedule.takeError()),
            "schedule '1f1b' runs one stage per rank, but there are 8 stages "
            "on 4 ranks");
  EXPECT_EQ(lookupScheduleGenerator("1f1bx"), nullptr);
}

/// A problem of p stages and m micro-batches cut into k slices of equal
/// cost: F = 1, B = 1.5 and W = 0.5 per micro-batch, one unit of activation
/// per micro-batch, each divided among the slices.
ScheduleProblem getSlicedProblem(int64_t p, int64_t m, int64_t k,
                                 bool split = false) {
  ScheduleProblem problem{p, m * k, p, split};
  problem.numSlices = k;
  StageCosts costs = StageCosts::getUnit(p);
  for (int64_t s = 0; s < p; ++s) {
    costs.forward[s] = 1.0 / k;
    costs.backwardInput[s] = 1.5 / k;
    costs.backwardWeight[s] = 0.5 / k;
    costs.activation[s] = 1.0 / k;
  }
  problem.cost = costs;
  return problem;
}

TEST(Seq1F1B, MakespanAndPeakAreClosedForms) {
  // With fused backwards: (m k + p - 1)(F + B + W) / k, and p - r + k - 1
  // slices on rank r while the schedule has that many (m k >= p + k - 1).
  // Split, each gradient leaves after B: no slower, the same peak.
  int64_t cases[][3] = {{4, 8, 2}, {4, 8, 4}, {8, 16, 4}, {2, 3, 2},
                        {2, 4, 4}, {3, 2, 3}, {4, 2, 2}};
  for (auto [p, m, k] : cases)
    for (bool split : {false, true}) {
      ScheduleProblem problem = getSlicedProblem(p, m, k, split);
      GeneratedSchedule schedule = generate("seq1f1b", problem);
      EXPECT_EQ(message(verify(problem, schedule)), "");
      llvm::Expected<Evaluation> eval = simulate(problem, schedule);
      ASSERT_TRUE(static_cast<bool>(eval));
      double closedForm = double(m * k + p - 1) * 3.0 / k;
      if (split)
        EXPECT_LE(eval->makespan, closedForm + 1e-9);
      else
        EXPECT_NEAR(eval->makespan, closedForm, 1e-9)
            << "p = " << p << ", m = " << m << ", k = " << k;
      for (int64_t r = 0; r < p; ++r)
        EXPECT_NEAR(eval->rankPeak[r] * k,
                    double(std::min(p - r + k - 1, m * k)), 1e-9)
            << "p = " << p << ", m = " << m << ", k = " << k << ", r = " << r;
    }
}

TEST(Seq1F1B, WarmsUpThenRunsSlicesInOrderAndBackwardsInReverse) {
  // p = 3, m = 2, k = 2: stage s runs min(p - s - 2 + k, m k) = 3 - s
  // warm-up forwards (all 4 units at most).
  ScheduleProblem problem = getSlicedProblem(3, 2, 2);
  GeneratedSchedule schedule = generate("seq1f1b", problem);
  auto spell = [](ArrayRef<ScheduledAction> actions) {
    std::string text;
    for (const ScheduledAction &action : actions)
      text += (action.phase == Phase::forward ? "F" : "B") +
              std::to_string(action.mb) + " ";
    return text;
  };
  EXPECT_EQ(spell(schedule.ranks[0]), "F0 F1 F2 F3 B1 B0 B3 B2 ");
  EXPECT_EQ(spell(schedule.ranks[1]), "F0 F1 F2 B1 F3 B0 B3 B2 ");
  EXPECT_EQ(spell(schedule.ranks[2]), "F0 F1 B1 F2 B0 F3 B3 B2 ");
}

TEST(Seq1F1B, RejectsProblemsItCannotSlice) {
  ScheduleProblem unsliced{4, 8, 4};
  llvm::Expected<GeneratedSchedule> schedule =
      lookupScheduleGenerator("seq1f1b")->generate(unsliced);
  ASSERT_FALSE(static_cast<bool>(schedule));
  EXPECT_EQ(llvm::toString(schedule.takeError()),
            "schedule 'seq1f1b' slices the sequence: it needs at least 2 "
            "slices per micro-batch (with one slice it is 1f1b)");
  ScheduleProblem partial = getSlicedProblem(2, 2, 2);
  partial.numMicrobatches = 3;
  schedule = lookupScheduleGenerator("seq1f1b")->generate(partial);
  ASSERT_FALSE(static_cast<bool>(schedule));
  EXPECT_EQ(llvm::toString(schedule.takeError()),
            "seq1f1b: 3 units are not 2 slices of whole micro-batches");
}

TEST(ScheduleVerify, RejectsSlicesOutOfOrder) {
  ScheduleProblem problem = getSlicedProblem(2, 2, 2);
  // 1F1B over the units runs slice 0's backward before slice 1's.
  GeneratedSchedule oneFOneB = generate("1f1b", problem);
  EXPECT_EQ(message(verify(problem, oneFOneB)),
            "backward of stage 0 mb 0 (micro-batch 0 slice 0) runs before the "
            "backward of stage 0 mb 1 (micro-batch 0 slice 1), which yields "
            "its keys' and values' gradients");
  // Stage 1 forwards slice 1 before slice 0: F1 F0 B1 ...
  GeneratedSchedule schedule = generate("seq1f1b", problem);
  std::swap(schedule.ranks[1][0], schedule.ranks[1][1]);
  EXPECT_EQ(message(verify(problem, schedule)),
            "forward of stage 1 mb 1 (micro-batch 0 slice 1) runs before the "
            "forward of stage 1 mb 0 (micro-batch 0 slice 0), whose keys and "
            "values its attention reads");
}

TEST(ExactSearch, FindsKnownOptimum) {
  // 3 stages, 4 micro-batches, unit costs, split backwards: the last rank
  // starts at 2 and has 12 units of work, so 14 is optimal.
  ScheduleProblem problem{3, 4, 3, /*splitBackward=*/true};
  ActionCosts costs(problem.getCostOrUnit());
  ExactSearchResult found =
      searchFastestSchedule(problem, costs, {0, 1, 2},
                            std::numeric_limits<double>::infinity(), 100000);
  ASSERT_TRUE(found.schedule.has_value());
  EXPECT_TRUE(found.exhaustive);
  EXPECT_DOUBLE_EQ(found.makespan, 14.0);
  EXPECT_EQ(message(verify(problem, *found.schedule)), "");
  // `auto` finds the same optimum.
  GeneratedSchedule best = generate("auto", problem);
  llvm::Expected<Evaluation> eval = simulate(problem, best);
  ASSERT_TRUE(static_cast<bool>(eval));
  EXPECT_DOUBLE_EQ(eval->makespan, 14.0);
}

/// The actions of `schedule` on `rank` as "F0 B0 W0 ...".
std::string formatRank(const GeneratedSchedule &schedule, int64_t rank) {
  std::string text;
  for (const ScheduledAction &a : schedule.ranks[rank]) {
    if (!text.empty())
      text += ' ';
    text += a.phase == Phase::forward          ? 'F'
            : a.phase == Phase::backward_input ? 'B'
                                               : 'W';
    text += std::to_string(a.mb);
  }
  return text;
}

TEST(ZeroBubbleGreedy, WarmsUpThenFillsWaitsWithWeightGradients) {
  // p = 2, m = 2, unit costs: rank 0 runs a second forward while micro-batch
  // 0's backward comes back, then W0 fills its wait for B1's gradient; the
  // makespan is the bound 3m + p - 1.
  ScheduleProblem problem{2, 2, 2, /*splitBackward=*/true};
  ActionCosts costs(problem.getCostOrUnit());
  FailureOr<GeneratedSchedule> schedule =
      buildZeroBubbleGreedy(problem, costs, ZeroBubblePolicy());
  ASSERT_TRUE(succeeded(schedule));
  EXPECT_EQ(formatRank(*schedule, 0), "F0 F1 B0 W0 B1 W1");
  EXPECT_EQ(formatRank(*schedule, 1), "F0 B0 F1 B1 W0 W1");
  llvm::Expected<Evaluation> eval = simulate(problem, *schedule);
  ASSERT_TRUE(static_cast<bool>(eval));
  EXPECT_DOUBLE_EQ(eval->makespan, 7.0);
}

TEST(ZeroBubbleGreedy, EveryVariantRunsWithinTheCaps) {
  // Heterogeneous costs, transfers, stashes and per-rank caps below what
  // 1F1B holds: every variant that succeeds is a valid schedule within the
  // caps, with the transfers charged to the compute actions or not.
  for (double comm : {0.0, 0.7})
    for (bool capped : {false, true}) {
      ScheduleProblem problem{5, 9, 5, /*splitBackward=*/true};
      StageCosts cost = StageCosts::getUnit(5);
      cost.forward = {1.0, 1.5, 0.8, 1.2, 1.0};
      cost.backwardInput = {1.4, 2.0, 1.1, 0.9, 1.6};
      cost.backwardWeight = {0.2, 1.5, 0.4, 1.0, 0.3};
      cost.stash = {0.3, 0.5, 0.1, 0.0, 0.4};
      cost.transfer = comm;
      problem.cost = cost;
      if (capped)
        problem.memoryCap = {4.0, 3.0, 3.0, 2.0, 2.0};
      int succeeded = 0;
      for (double charge : {0.0, 1.0}) {
        StageCosts charged = cost;
        for (double &f : charged.forward)
          f += charge * comm;
        ActionCosts costs(charged);
        for (const ZeroBubblePolicy &policy : getZeroBubblePolicies()) {
          FailureOr<GeneratedSchedule> schedule =
              buildZeroBubbleGreedy(problem, costs, policy);
          if (failed(schedule))
            continue;
          ++succeeded;
          EXPECT_EQ(message(verify(problem, *schedule)), "")
              << "comm " << comm << ", capped " << capped;
        }
      }
      EXPECT_GT(succeeded, 0) << "comm " << comm << ", capped " << capped;
    }
  // Several stages per rank are not its problem.
  ScheduleProblem looped{8, 8, 4, /*splitBackward=*/true};
  EXPECT_TRUE(failed(buildZeroBubbleGreedy(
      looped, ActionCosts(looped.getCostOrUnit()), ZeroBubblePolicy())));
}

TEST(ZeroBubbleGreedy, FailsWhenACapStopsAStage) {
  // A cap below one activation leaves rank 0 no forward.
  ScheduleProblem problem{3, 4, 3, /*splitBackward=*/true};
  problem.memoryCap = {0.5, 3.0, 3.0};
  for (const ZeroBubblePolicy &policy : getZeroBubblePolicies())
    EXPECT_TRUE(failed(buildZeroBubbleGreedy(
        problem, ActionCosts(problem.getCostOrUnit()), policy)));
}

/// A chain of ops of the given times, cut anywhere into stages placed as
/// `stageRank` says.
struct TimedChain {
  TimedChain(SmallVector<double> times, SmallVector<int64_t> stageRank)
      : times(std::move(times)) {
    problem.numOps = this->times.size();
    problem.stageRank = std::move(stageRank);
    problem.mayCut.assign(problem.numOps + 1, true);
    problem.mustCut.assign(problem.numOps + 1, false);
    problem.load = load;
  }

  StageLoad getLoad(int64_t begin, int64_t end) const {
    StageLoad stage;
    for (int64_t op = begin; op < end; ++op)
      stage.time += times[op];
    return stage;
  }

  SmallVector<double> times;
  std::function<StageLoad(int64_t, int64_t, int64_t)> load =
      [this](int64_t, int64_t begin, int64_t end) {
        return getLoad(begin, end);
      };
  PartitionProblem problem;
};

TEST(PartitionPlanner, BalancesContiguousStages) {
  // Ops of times 1..6 in 3 stages: {1,2,3} {4,5} {6} (6, 9, 6) has the
  // least bottleneck; any other cut puts 10 or more on one stage.
  TimedChain chain({1, 2, 3, 4, 5, 6}, {0, 1, 2});
  std::optional<Partition> plan = planPartition(chain.problem);
  ASSERT_TRUE(plan.has_value());
  EXPECT_DOUBLE_EQ(plan->bottleneck, 9.0);
  EXPECT_EQ(plan->starts, (SmallVector<int64_t>{0, 3, 5}));
}

TEST(PartitionPlanner, WeighsInterleavedStagesByTheirFill) {
  // Ops 9 6 2 8 9 2 in 4 stages on 2 ranks (stages 0 and 2 on rank 0):
  // {9} {6 2 8} {9} {2} balances the ranks at 18 but leaves a stage of
  // 16; the stage-balanced plans have stages of at most 11 and ranks of
  // 19. M x bottleneck + (ranks - 1) x largest stage: 2 x 18 + 16 = 52
  // against 2 x 19 + 11 = 49 for 2 micro-batches, 160 against 163 for 8.
  TimedChain chain({9, 6, 2, 8, 9, 2}, {0, 1, 0, 1});
  SmallVector<int64_t> leastBottleneck = {0, 1, 4, 5};
  for (int64_t microbatches : {0, 8}) {
    chain.problem.numMicrobatches = microbatches;
    std::optional<Partition> plan = planPartition(chain.problem);
    ASSERT_TRUE(plan.has_value());
    EXPECT_DOUBLE_EQ(plan->bottleneck, 18.0);
    EXPECT_EQ(plan->starts, leastBottleneck);
  }
  chain.problem.numMicrobatches = 2;
  std::optional<Partition> plan = planPartition(chain.problem);
  ASSERT_TRUE(plan.has_value());
  EXPECT_DOUBLE_EQ(plan->bottleneck, 19.0);
  EXPECT_NE(plan->starts, leastBottleneck);
}

} // namespace
