//===- ParallelismPlannerTest.cpp - the layout planner without IR ---------===//
//
// Lays two devices out as pipelines and replicas for a chain of known
// times and sizes: the fastest layout per batch wins, memory caps and fixed
// T, P or R rule layouts out, and tensor parallelism needs split weights.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ParallelismPlanner.h"

#include "gtest/gtest.h"

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
  four.request.zero = 1;
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

} // namespace
