//===- ParallelismPlannerTest.cpp - the layout planner without IR ---------===//
//
// Lays devices out as pipelines and replicas for chains of known times and
// sizes: the fastest layout per batch wins, memory caps and fixed T, P or R
// rule layouts out, tensor parallelism needs split weights, and each
// stage's ZeRO level (and ZeRO-3's unit of gathering) is chosen with the
// layout as brute force over every assignment of levels to stages would.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ParallelismPlanner.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <random>
#include <tuple>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// Four ops of F 1, B 1 and W 2, each reading its own weight of 10 bytes
/// and holding one activation byte, on a device with free links.
struct FourOps {
  LayoutChain chain;
  TensorParallelWork work;
  ParallelismRequest request;

  FourOps() {
    chain.forward = {1, 1, 1, 1};
    chain.compute = {4, 4, 4, 4};
    chain.weights = {{0}, {1}, {2}, {3}};
    chain.weightBytes = {10, 10, 10, 10};
    chain.mayCut.assign(5, true);
    chain.transferTime.assign(5, 0.0);
    chain.activationBytes = activationBytes;
    work.splitOps.assign(4, false);
    work.allReduceBytes.assign(4, 0.0);
    work.splitWeights.assign(4, false);
    request.devices = 2;
    request.numMicrobatches = 4;
    request.schedule = ScheduleChoice::get("gpipe");
    request.device.memoryCapacity = 1e9;
    request.maxStages = 16;
  }

  static double activationBytes(int64_t begin, int64_t end) {
    return end - begin;
  }

  /// The candidate with T = 1 and P = `stages`.
  static const ParallelismCandidate &find(const ParallelismPlan &plan,
                                          int64_t stages) {
    for (const ParallelismCandidate &candidate : plan.candidates)
      if (candidate.tensorParallel == 1 && candidate.stages == stages)
        return candidate;
    ADD_FAILURE() << "no layout with P = " << stages;
    return plan.candidates.front();
  }
};

TEST(ParallelismPlanner, ReplicasWinWhenTheModelFitsOneDevice) {
  FourOps four;
  ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_EQ(plan.candidates.size(), 3u);
  // T = 2 splits no weight.
  EXPECT_EQ(plan.candidates.back().tensorParallel, 2);
  EXPECT_NE(plan.candidates.back().reason.find("no weight splits"),
            std::string::npos);
  ASSERT_TRUE(plan.chosen.has_value());
  const ParallelismCandidate &replicas = FourOps::find(plan, 1);
  EXPECT_EQ(&plan.candidates[*plan.chosen], &replicas);
  EXPECT_EQ(replicas.replicas, 2);
  // Four micro-batches of 16 on one device, one batch per replica.
  EXPECT_DOUBLE_EQ(replicas.stepTime, 64.0);
  EXPECT_DOUBLE_EQ(replicas.batchTime, 32.0);
  // Weights and gradients (2 x 40) and four micro-batches' activations.
  EXPECT_DOUBLE_EQ(replicas.memory, 80.0 + 16.0);
  const ParallelismCandidate &pipeline = FourOps::find(plan, 2);
  EXPECT_GT(pipeline.batchTime, replicas.batchTime);
  EXPECT_EQ(pipeline.reason.rfind("slower", 0), 0u) << pipeline.reason;
}

TEST(ParallelismPlanner, MemoryAndFixedCountsRuleLayoutsOut) {
  FourOps four;
  four.request.memoryPerDevice = 60.0;
  ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
  const ParallelismCandidate &replicas = FourOps::find(plan, 1);
  EXPECT_EQ(replicas.reason.rfind("memory: needs 96", 0), 0u)
      << replicas.reason;
  ASSERT_TRUE(plan.chosen.has_value());
  const ParallelismCandidate &pipeline = plan.candidates[*plan.chosen];
  EXPECT_EQ(pipeline.stages, 2);
  EXPECT_DOUBLE_EQ(pipeline.memory, 2.0 * 20.0 + 4.0 * 2.0);

  // Adam's moments under ZeRO-1 are spread over the replicas.
  four.request.memoryPerDevice = 0.0;
  four.request.optimizerStateCopies = 2.0;
  four.request.zeroLevels = {1};
  EXPECT_DOUBLE_EQ(
      FourOps::find(planParallelism(four.chain, four.work, four.request), 1)
          .memory,
      (2.0 + 2.0 / 2) * 40.0 + 16.0);

  four.request.fixedReplicas = 1;
  plan = planParallelism(four.chain, four.work, four.request);
  EXPECT_EQ(FourOps::find(plan, 1).reason, "R is fixed at 1");
  EXPECT_EQ(plan.candidates[*plan.chosen].stages, 2);

  four.request.memoryPerDevice = 1.0;
  EXPECT_FALSE(
      planParallelism(four.chain, four.work, four.request).chosen.has_value());
}

TEST(ParallelismPlanner, TensorParallelismSplitsWeightsAndWork) {
  FourOps four;
  four.work.splitOps.assign(4, true);
  four.work.splitWeights.assign(4, true);
  four.work.splitDims = {{"hidden", 6}};
  four.request.fixedTensorParallel = 2;
  ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  const ParallelismCandidate &split = plan.candidates[*plan.chosen];
  EXPECT_EQ(split.tensorParallel, 2);
  // Half of each op on each device, over free links.
  EXPECT_DOUBLE_EQ(split.stepTime, 32.0);
  EXPECT_DOUBLE_EQ(split.memory, 2.0 * 20.0 + 16.0);

  four.work.splitDims = {{"hidden", 5}};
  plan = planParallelism(four.chain, four.work, four.request);
  EXPECT_FALSE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates.back().reason,
            "T = 2 does not divide hidden (size 5)");
}

/// A short description of a choice, for failure messages.
static std::string describe(const std::optional<ParallelismCandidate> &c) {
  if (!c)
    return "none";
  std::string text = "T " + std::to_string(c->tensorParallel) + " P " +
                     std::to_string(c->stages) + " R " +
                     std::to_string(c->replicas) + " ZeRO";
  for (int64_t level : c->zero)
    text += " " + std::to_string(level);
  return text + (c->gatherPerParam ? " /param" : "");
}

/// A chain of random times and sizes, each op reading its own weight, and
/// a request with random devices, optimizer, link, cap and ZeRO levels on
/// offer.
struct RandomProblem {
  LayoutChain chain;
  TensorParallelWork work;
  ParallelismRequest request;
  SmallVector<double> activations;
  /// What `chain.activationBytes` refers to.
  std::function<double(int64_t, int64_t)> activationBytes;

  RandomProblem(const RandomProblem &) = delete;
  explicit RandomProblem(std::mt19937 &random) {
    auto uniform = [&](double low, double high) {
      return std::uniform_real_distribution<double>(low, high)(random);
    };
    auto pick = [&](int64_t count) {
      return std::uniform_int_distribution<int64_t>(0, count - 1)(random);
    };
    int64_t size = 2 + pick(4);
    for (int64_t op = 0; op < size; ++op) {
      double forward = uniform(0.5, 2.0);
      chain.forward.push_back(forward);
      chain.compute.push_back(forward * uniform(2.0, 4.0));
      chain.weights.push_back({op});
      chain.weightBytes.push_back(uniform(1.0, 60.0));
      activations.push_back(uniform(0.5, 4.0));
    }
    chain.mayCut.assign(size + 1, true);
    for (int64_t cut = 0; cut <= size; ++cut)
      chain.transferTime.push_back(uniform(0.0, 0.5));
    activationBytes = [this](int64_t begin, int64_t end) {
      double sum = 0.0;
      for (int64_t op = begin; op < end; ++op)
        sum += activations[op];
      return sum;
    };
    chain.activationBytes = activationBytes;
    bool split = pick(2);
    work.splitOps.assign(size, split);
    work.allReduceBytes.assign(size, 0.0);
    work.splitWeights.assign(size, split);
    if (split)
      work.splitDims = {{"hidden", 4}};
    request.devices = pick(3) ? 4 : 2;
    request.numMicrobatches = 1 + pick(4);
    request.schedule = ScheduleChoice::get(pick(2) ? "1f1b" : "gpipe");
    request.device.memoryCapacity = 1e9;
    request.device.linkBandwidth = pick(2) ? 0.0 : uniform(5.0, 50.0);
    request.maxStages = 16;
    request.optimizerStateCopies = pick(2) ? 2.0 : 0.0;
    SmallVector<int64_t> offers[] = {{0, 1, 3}, {0, 3}, {1, 3}, {0, 1}};
    request.zeroLevels = offers[pick(4)];
    request.planParamGathers = pick(2);
    // From most layouts fitting to few: the whole model's weights, their
    // gradients and the optimizer's state on one device is the most.
    double weights = 0.0;
    for (double bytes : chain.weightBytes)
      weights += bytes;
    request.memoryPerDevice =
        uniform(0.3, 1.1) * (2.0 + request.optimizerStateCopies) * weights;
  }
};

/// The planner's choice by brute force: for each layout (T, P, R) and
/// ZeRO-3 unit, every assignment of the levels on offer to the P stages
/// planned alone (fixed); per layout and unit the one that fits with the
/// least bottleneck (the time the stages are cut to balance), then the
/// least sum of levels; among those, the planner's order: batch time, the
/// least sum of levels, gathers per stage, then the memory.
static std::optional<ParallelismCandidate>
chooseByBruteForce(const RandomProblem &problem) {
  std::optional<ParallelismCandidate> best;
  auto key = [](const ParallelismCandidate &candidate) {
    return std::tuple(candidate.batchTime, getZeroSum(candidate),
                      candidate.gatherPerParam, candidate.memory);
  };
  int64_t devices = problem.request.devices;
  ArrayRef<int64_t> levels = problem.request.zeroLevels;
  for (int64_t parts = 1; parts <= devices; ++parts)
    for (int64_t stages = 1; parts * stages <= devices; ++stages) {
      if (devices % (parts * stages) != 0)
        continue;
      for (bool perParam : {false, true}) {
        std::optional<ParallelismCandidate> layout;
        SmallVector<int64_t> assignment(stages, 0);
        for (int64_t code = 0; code < std::pow(levels.size(), stages); ++code) {
          for (int64_t stage = 0, rest = code; stage < stages; ++stage) {
            assignment[stage] = levels[rest % levels.size()];
            rest /= levels.size();
          }
          ParallelismRequest alone = problem.request;
          alone.fixedTensorParallel = parts;
          alone.fixedStages = stages;
          alone.fixedReplicas = devices / (parts * stages);
          alone.fixedZero = assignment;
          for (const ParallelismCandidate &candidate :
               planParallelism(problem.chain, problem.work, alone).candidates)
            if (candidate.reason.empty() &&
                candidate.gatherPerParam == perParam &&
                (!layout ||
                 std::tuple(candidate.bottleneck, getZeroSum(candidate)) <
                     std::tuple(layout->bottleneck, getZeroSum(*layout))))
              layout = candidate;
        }
        if (layout && (!best || key(*layout) < key(*best)))
          best = layout;
      }
    }
  return best;
}

TEST(ParallelismPlanner, ZeroLevelsPerStageAreChosenAsBruteForceWould) {
  // Random chains, devices, optimizers, links, caps and levels on offer,
  // seeded: the planner's layout, stages' levels, unit, time and memory
  // equal brute force's over every assignment of levels to stages.
  std::mt19937 random(39);
  int64_t compared = 0, mixed = 0, zero3 = 0, perParam = 0;
  for (int64_t trial = 0; trial < 1000; ++trial) {
    RandomProblem problem(random);
    ParallelismPlan plan =
        planParallelism(problem.chain, problem.work, problem.request);
    std::optional<ParallelismCandidate> chosen;
    if (plan.chosen)
      chosen = plan.candidates[*plan.chosen];
    std::optional<ParallelismCandidate> brute = chooseByBruteForce(problem);
    ASSERT_EQ(describe(chosen), describe(brute)) << "trial " << trial;
    if (!chosen)
      continue;
    EXPECT_EQ(chosen->batchTime, brute->batchTime) << "trial " << trial;
    EXPECT_EQ(chosen->memory, brute->memory) << "trial " << trial;
    ++compared;
    mixed += !llvm::all_equal(chosen->zero);
    zero3 += llvm::is_contained(chosen->zero, 3);
    perParam += chosen->gatherPerParam;
  }
  // The sweep reaches choices of several levels in one pipeline, ZeRO-3
  // and gathers per param.
  EXPECT_GT(compared, 150);
  EXPECT_GT(mixed, 10);
  EXPECT_GT(zero3, 0);
  EXPECT_GT(perParam, 0);
}

/// The candidate of 2 replicas of one stage with the stage's ZeRO level
/// fixed.
static ParallelismCandidate planReplicas(FourOps four, int64_t zero) {
  four.request.fixedZero = {zero};
  ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
  for (const ParallelismCandidate &candidate : plan.candidates)
    if (candidate.stages == 1 && candidate.replicas == 2 &&
        !candidate.gatherPerParam)
      return candidate;
  ADD_FAILURE() << "no 2 replicas under ZeRO-" << zero;
  return ParallelismCandidate();
}

TEST(ParallelismPlanner, CapsThatOnlyAZeroStageFits) {
  // Adam on 2 devices: 2 replicas hold 4 x 40 weight bytes and 16 of
  // activations without ZeRO, (2 + 2/2) x 40 + 16 under ZeRO-1, and
  // (2 + 2/2 + 1/2) x 40 + 16 under ZeRO-3.
  FourOps four;
  four.request.optimizerStateCopies = 2.0;
  four.request.zeroLevels = {0, 1, 3};
  EXPECT_DOUBLE_EQ(planReplicas(four, 0).memory, 4.0 * 40.0 + 16.0);
  EXPECT_DOUBLE_EQ(planReplicas(four, 1).memory, 3.0 * 40.0 + 16.0);
  EXPECT_DOUBLE_EQ(planReplicas(four, 3).memory, 3.5 * 40.0 + 16.0);

  // Room for all: the first level fits, so no sharding.
  ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].zero, SmallVector<int64_t>{0});
  EXPECT_EQ(plan.candidates[*plan.chosen].replicas, 2);

  // 140 bytes: only ZeRO-1's replicas (and the slower pipeline) fit.
  four.request.memoryPerDevice = 140.0;
  plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].zero, SmallVector<int64_t>{1});
  EXPECT_EQ(plan.candidates[*plan.chosen].replicas, 2);

  // ZeRO-3 holds more than ZeRO-1 at its peak; offered without ZeRO-1, a
  // cap of 160 bytes fits only ZeRO-3's replicas.
  four.request.memoryPerDevice = 160.0;
  four.request.zeroLevels = {0, 3};
  plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].zero, SmallVector<int64_t>{3});
  EXPECT_EQ(plan.candidates[*plan.chosen].replicas, 2);
  EXPECT_EQ(planReplicas(four, 0).reason,
            "memory: needs 176 bytes per device, above 160: stage 0 fits "
            "under no ZeRO level offered");

  // Gathered per param, 2 replicas hold their blocks (1 + 2/2 + 1/2) x 40,
  // one 10-byte weight whole at once and 16 of activations: a cap of 130
  // bytes fits them (and the pipeline of 2 stages, slower).
  four.request.memoryPerDevice = 130.0;
  four.request.zeroLevels = {0, 1, 3};
  plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].replicas, 1);
  four.request.planParamGathers = true;
  plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  const ParallelismCandidate &chosen = plan.candidates[*plan.chosen];
  EXPECT_EQ(chosen.replicas, 2);
  EXPECT_EQ(chosen.zero, SmallVector<int64_t>{3});
  EXPECT_TRUE(chosen.gatherPerParam);
  EXPECT_DOUBLE_EQ(chosen.memory, 2.5 * 40.0 + 10.0 + 16.0);

  // pipedream-2bw keeps two weight versions; ZeRO-3 gathers one.
  four.request.schedule = ScheduleChoice::get("pipedream-2bw");
  EXPECT_EQ(planReplicas(four, 3).reason,
            "ZeRO-3 gathers one weight version per step");
}

TEST(ParallelismPlanner, EachStageTakesTheFirstLevelThatFits) {
  // Two stages of 2 replicas, Adam: the first stage's weights are 4 times
  // the second's, so a cap fits the first only under ZeRO-1 and the
  // second without ZeRO; levels given per stage stay.
  FourOps four;
  four.chain.weightBytes = {40, 40, 10, 10};
  four.request.devices = 4;
  four.request.fixedStages = 2;
  four.request.optimizerStateCopies = 2.0;
  four.request.zeroLevels = {0, 1, 3};
  // Under gpipe each stage holds its 4 micro-batches' activations, 2 x 4
  // bytes: the first stage 4 x 80 + 8 without ZeRO, 3 x 80 + 8 under
  // ZeRO-1; the second 4 x 20 + 8.
  four.request.memoryPerDevice = 250.0;
  ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  const ParallelismCandidate &chosen = plan.candidates[*plan.chosen];
  EXPECT_EQ(chosen.replicas, 2);
  EXPECT_EQ(chosen.zero, (SmallVector<int64_t>{1, 0}));
  EXPECT_DOUBLE_EQ(chosen.memory, 3.0 * 80.0 + 8.0);

  four.request.fixedZero = {1, 1};
  plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].zero, (SmallVector<int64_t>{1, 1}));
  // Stage 0 under ZeRO-3 needs 3.5 x 80 + 8 bytes; the least any cut
  // needs is stage 1's 4 x 60 + 12 with ops 1 to 3.
  four.request.fixedZero = {3, 0};
  plan = planParallelism(four.chain, four.work, four.request);
  EXPECT_FALSE(plan.chosen.has_value());
  EXPECT_EQ(FourOps::find(plan, 2).reason,
            "memory: needs 252 bytes per device, above 250: stage 1 fits "
            "under no ZeRO level offered");
  four.request.fixedZero = {3, 0, 1};
  plan = planParallelism(four.chain, four.work, four.request);
  EXPECT_FALSE(plan.chosen.has_value());
  EXPECT_EQ(FourOps::find(plan, 2).reason,
            "the ZeRO levels given are one per stage of 3");
}

TEST(ParallelismPlanner, ZeroCollectivesAreTimed) {
  // 2 replicas over a link of 10 bytes per second: a ring all-reduce of
  // the 40 weight bytes takes 2 x 1/2 x 40 / 10 = 4 s, a reduce-scatter or
  // an all-gather half of it.
  FourOps four;
  four.request.device.linkBandwidth = 10.0;
  auto stepTimes = [&](int64_t stages) {
    four.request.devices = 2 * stages;
    four.request.fixedStages = stages;
    four.request.fixedReplicas = 2;
    SmallVector<double> times;
    for (int64_t zero : {0, 1, 3}) {
      four.request.fixedZero = {zero};
      for (const ParallelismCandidate &candidate :
           planParallelism(four.chain, four.work, four.request).candidates)
        if (candidate.tensorParallel == 1 && candidate.stages == stages &&
            candidate.stepTime > 0.0)
          times.push_back(candidate.stepTime);
    }
    return times;
  };
  // One stage: 4 micro-batches of 16 s, then the all-reduce (ZeRO-0), or
  // the reduce-scatter and the all-gather (ZeRO-1); ZeRO-3 gathers before
  // the first forward and reduce-scatters after the last backward.
  EXPECT_EQ(stepTimes(1), (SmallVector<double>{68.0, 68.0, 68.0}));
  // Two stages of 20 bytes (collectives of 2 s, halves of 1 s) under
  // gpipe: rank 0's last backward ends at 40 s, its collectives follow.
  // Under ZeRO-3 its gather delays the whole step by 1 s, and rank 1's
  // gather runs while rank 1 waits for its first activation.
  EXPECT_EQ(stepTimes(2), (SmallVector<double>{42.0, 42.0, 42.0}));
  // Gathered per param, every forward and backward gathers the stage's 4
  // weights, 0.5 s each: 4 micro-batches of 16 + 2 x 2 s, then the
  // reduce-scatter of 2 s.
  four.request.planParamGathers = true;
  EXPECT_EQ(stepTimes(1), (SmallVector<double>{68.0, 68.0, 68.0, 82.0}));
}

} // namespace
