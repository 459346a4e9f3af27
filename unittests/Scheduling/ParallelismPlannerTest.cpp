//===- ParallelismPlannerTest.cpp - the layout planner without IR ---------===//
//
// Lays two devices out as pipelines and replicas for a chain of known
// times and sizes: the fastest layout per batch wins, memory caps and fixed
// T, P or R rule layouts out, tensor parallelism needs split weights, and
// the ZeRO stage (and ZeRO-3's unit of gathering) is chosen with the layout
// as brute force would.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ParallelismPlanner.h"

#include "gtest/gtest.h"

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

/// The fastest fitting (T, P, R, ZeRO stage, gather unit) by brute force:
/// each (T, P, R, ZeRO stage) planned alone, every candidate of it that
/// fits (it has a time) compared by the planner's order: batch time, then
/// the lower ZeRO stage, gathers per stage, then the memory.
static std::optional<ParallelismCandidate>
chooseByBruteForce(const FourOps &four) {
  std::optional<ParallelismCandidate> best;
  auto key = [](const ParallelismCandidate &candidate) {
    return std::tuple(candidate.batchTime, candidate.zero,
                      candidate.gatherPerParam, candidate.memory);
  };
  int64_t devices = four.request.devices;
  for (int64_t parts = 1; parts <= devices; ++parts)
    for (int64_t stages = 1; parts * stages <= devices; ++stages) {
      if (devices % (parts * stages) != 0)
        continue;
      int64_t replicas = devices / (parts * stages);
      for (int64_t zero : four.request.zeroLevels) {
        ParallelismRequest alone = four.request;
        alone.fixedTensorParallel = parts;
        alone.fixedStages = stages;
        alone.fixedReplicas = replicas;
        alone.zeroLevels = {zero};
        ParallelismPlan plan = planParallelism(four.chain, four.work, alone);
        for (const ParallelismCandidate &candidate : plan.candidates)
          if (candidate.batchTime > 0.0 &&
              (!best || key(candidate) < key(*best)))
            best = candidate;
        if (replicas == 1)
          break;
      }
    }
  return best;
}

/// A short description of a choice, for failure messages.
static std::string describe(const std::optional<ParallelismCandidate> &c) {
  if (!c)
    return "none";
  return "T " + std::to_string(c->tensorParallel) + " P " +
         std::to_string(c->stages) + " R " + std::to_string(c->replicas) +
         " ZeRO-" + std::to_string(c->zero) +
         (c->gatherPerParam ? "/param" : "");
}

TEST(ParallelismPlanner, ZeroStageIsChosenAsBruteForceWould) {
  // Every cap from roomy to nothing fitting, SGD and Adam, free and slow
  // links, 2 and 4 devices, split weights or not, the ZeRO stages on
  // offer, ZeRO-3 gathered per param or not, and weights each read by one
  // op or by ops far apart (spans that overlap when gathered per param).
  int64_t compared = 0, zero1 = 0, zero3 = 0, perParam = 0;
  for (int64_t devices : {2, 4})
    for (bool split : {false, true})
      for (double optimizer : {0.0, 2.0})
        for (double bandwidth : {0.0, 10.0})
          for (auto levels :
               {SmallVector<int64_t>{0, 1, 3}, SmallVector<int64_t>{0, 3}})
            for (bool paramGathers : {false, true})
              for (bool spread : {false, true})
                for (double cap = 200.0; cap >= 20.0; cap -= 4.0) {
                  FourOps four;
                  four.request.devices = devices;
                  four.request.memoryPerDevice = cap;
                  four.request.optimizerStateCopies = optimizer;
                  four.request.device.linkBandwidth = bandwidth;
                  four.request.zeroLevels = levels;
                  four.request.planParamGathers = paramGathers;
                  if (spread) {
                    // Weight 0 read by ops 0 and 2: no cut between them, and
                    // two weights whole at once at ops 1 and 2.
                    four.chain.weights = {{0}, {1}, {0, 2}, {3}};
                    four.chain.mayCut = {true, false, false, true, true};
                  }
                  if (split) {
                    four.work.splitOps.assign(4, true);
                    four.work.splitWeights.assign(4, true);
                    four.work.splitDims = {{"hidden", 4}};
                  }
                  ParallelismPlan plan =
                      planParallelism(four.chain, four.work, four.request);
                  std::optional<ParallelismCandidate> chosen;
                  if (plan.chosen)
                    chosen = plan.candidates[*plan.chosen];
                  std::optional<ParallelismCandidate> brute =
                      chooseByBruteForce(four);
                  std::string where =
                      "devices " + std::to_string(devices) + " cap " +
                      std::to_string(cap) + " optimizer " +
                      std::to_string(optimizer) + " bandwidth " +
                      std::to_string(bandwidth) + " levels " +
                      std::to_string(levels.size());
                  ASSERT_EQ(describe(chosen), describe(brute)) << where;
                  if (!chosen)
                    continue;
                  EXPECT_EQ(chosen->batchTime, brute->batchTime) << where;
                  EXPECT_EQ(chosen->memory, brute->memory) << where;
                  ++compared;
                  zero1 += chosen->zero == 1;
                  zero3 += chosen->zero == 3 && !chosen->gatherPerParam;
                  perParam += chosen->gatherPerParam;
                }
  // The sweep reaches caps where a ZeRO stage, or gathers per param, is
  // what fits.
  EXPECT_GT(compared, 100);
  EXPECT_GT(zero1, 0);
  EXPECT_GT(zero3, 0);
  EXPECT_GT(perParam, 0);
}

TEST(ParallelismPlanner, CapsThatOnlyAZeroStageFits) {
  // Adam on 2 devices: 2 replicas hold 4 x 40 weight bytes and 16 of
  // activations without ZeRO, (2 + 2/2) x 40 + 16 under ZeRO-1, and
  // (2 + 2/2 + 1/2) x 40 + 16 under ZeRO-3.
  FourOps four;
  four.request.optimizerStateCopies = 2.0;
  four.request.zeroLevels = {0, 1, 3};
  auto replicas = [&](int64_t zero) {
    ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
    for (const ParallelismCandidate &candidate : plan.candidates)
      if (candidate.stages == 1 && candidate.replicas == 2 &&
          candidate.zero == zero)
        return candidate;
    ADD_FAILURE() << "no 2 replicas under ZeRO-" << zero;
    return ParallelismCandidate();
  };
  EXPECT_DOUBLE_EQ(replicas(0).memory, 4.0 * 40.0 + 16.0);
  EXPECT_DOUBLE_EQ(replicas(1).memory, 3.0 * 40.0 + 16.0);
  EXPECT_DOUBLE_EQ(replicas(3).memory, 3.5 * 40.0 + 16.0);

  // Room for all: as fast under every stage, so no sharding.
  ParallelismPlan plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].zero, 0);
  EXPECT_EQ(plan.candidates[*plan.chosen].replicas, 2);
  EXPECT_EQ(replicas(3).reason, "as fast, sharding more (ZeRO-3)");

  // 140 bytes: only ZeRO-1's replicas (and the slower pipeline) fit.
  four.request.memoryPerDevice = 140.0;
  plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].zero, 1);
  EXPECT_EQ(plan.candidates[*plan.chosen].replicas, 2);

  // ZeRO-3 holds more than ZeRO-1 at its peak; offered without ZeRO-1, a
  // cap of 160 bytes fits only ZeRO-3's replicas.
  four.request.memoryPerDevice = 160.0;
  four.request.zeroLevels = {0, 3};
  plan = planParallelism(four.chain, four.work, four.request);
  ASSERT_TRUE(plan.chosen.has_value());
  EXPECT_EQ(plan.candidates[*plan.chosen].zero, 3);
  EXPECT_EQ(plan.candidates[*plan.chosen].replicas, 2);
  EXPECT_EQ(replicas(0).reason.rfind("memory: needs 176", 0), 0u);

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
  EXPECT_EQ(chosen.zero, 3);
  EXPECT_TRUE(chosen.gatherPerParam);
  EXPECT_DOUBLE_EQ(chosen.memory, 2.5 * 40.0 + 10.0 + 16.0);

  // pipedream-2bw keeps two weight versions; ZeRO-3 gathers one.
  four.request.schedule = ScheduleChoice::get("pipedream-2bw");
  EXPECT_EQ(replicas(3).reason, "ZeRO-3 gathers one weight version per step");
}

TEST(ParallelismPlanner, ZeroCollectivesAreTimed) {
  // 2 replicas over a link of 10 bytes per second: a ring all-reduce of
  // the 40 weight bytes takes 2 x 1/2 x 40 / 10 = 4 s, a reduce-scatter or
  // an all-gather half of it.
  FourOps four;
  four.request.device.linkBandwidth = 10.0;
  four.request.zeroLevels = {0, 1, 3};
  auto stepTimes = [&](int64_t stages) {
    four.request.devices = 2 * stages;
    four.request.fixedStages = stages;
    four.request.fixedReplicas = 2;
    SmallVector<double> times;
    for (const ParallelismCandidate &candidate :
         planParallelism(four.chain, four.work, four.request).candidates)
      if (candidate.tensorParallel == 1 && candidate.stages == stages)
        times.push_back(candidate.stepTime);
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
