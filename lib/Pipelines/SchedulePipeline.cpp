//===- SchedulePipeline.cpp - from a model to a verified schedule ---------===//
//
// Builds pp-schedule-pipeline, which splits, partitions, differentiates,
// schedules and verifies a training step, and the preludes that bring TOSA
// and elementwise tensor models to the linalg ops it reads.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/Pipelines/Passes.h"
#include "pp/Scheduling/ScheduleGenerators.h"

#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

void pp::buildTosaToLinalgPipeline(OpPassManager &pm) {
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions());
  pm.addNestedPass<func::FuncOp>(createTosaToTensorPass());
  pm.addNestedPass<func::FuncOp>(createTosaToArithPass());
  pm.addPass(createCanonicalizerPass());
}

void pp::buildElementwiseToLinalgPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
}

/// The planner's options: it plans for `plan-ranks` and `plan-schedule`
/// (by default the ranks and schedule the program runs).
static PPPartitionStagesOptions
getPlannerOptions(const SchedulePipelineOptions &options) {
  PPPartitionStagesOptions planner;
  planner.function = options.function;
  planner.numStages = options.numStages;
  planner.numRanks =
      options.planRanks >= 0 ? options.planRanks : options.numRanks;
  planner.schedule = options.planSchedule.getValue()
                         ? options.planSchedule.getValue()
                         : options.schedule.getValue();
  // The planner orders whole micro-batches: a sliced schedule's stages are
  // planned as 1F1B's, whose order seq1f1b runs on slices.
  if (options.slices > 1 && planner.schedule.getName() == "seq1f1b")
    planner.schedule = sched::ScheduleChoice::get("1f1b");
  planner.device.assign(options.device.begin(), options.device.end());
  planner.deviceFile = options.deviceFile;
  planner.costFile = options.costFile;
  planner.memoryCap.assign(options.memoryCap.begin(), options.memoryCap.end());
  planner.recompute = options.recompute;
  // pp-schedule schedules by the planner's costs and memory budgets.
  planner.recordCosts = true;
  return planner;
}

/// pp-schedule with the pipeline's schedule and shape; its cost options
/// keep their defaults, so that a cost file or unit costs apply.
static PPScheduleOptions
getSchedulerOptions(const SchedulePipelineOptions &options) {
  PPScheduleOptions scheduler;
  scheduler.schedule = options.schedule.getValue();
  scheduler.numMicrobatches = options.numMicrobatches;
  scheduler.numRanks = options.numRanks;
  scheduler.splitBackward = options.splitBackward;
  scheduler.semantics = options.semantics;
  scheduler.numSlices = options.slices;
  scheduler.function = options.function;
  return scheduler;
}

/// The training step as the planners read it.
static void addStepPreparation(OpPassManager &pm) {
  // PyTorch's f64 statistics (layer norm, cross-entropy) computed in f32.
  pm.addNestedPass<func::FuncOp>(createPPDemoteF64());
  // The argmax PyTorch's max returns beside the max a softmax uses.
  pm.addNestedPass<func::FuncOp>(createPPDropUnusedResults());
  // nn.Linear's transposed weight read through the matmul's map.
  pm.addNestedPass<func::FuncOp>(createPPFoldTransposes());
  // Embedding and cross-entropy gathers, with their tables as operands.
  pm.addNestedPass<func::FuncOp>(createPPLowerGathers());
  // Dropout's seed per op, step, replica and micro-batch.
  pm.addPass(createPPLowerRandomSeeds());
}

void pp::buildPlanParallelismPipeline(OpPassManager &pm,
                                      const SchedulePipelineOptions &options) {
  addStepPreparation(pm);
  PPSplitMicrobatchesOptions split;
  split.numMicrobatches = options.numMicrobatches;
  split.function = options.function;
  pm.addPass(createPPSplitMicrobatches(split));
  PPPlanParallelismOptions plan;
  plan.function = options.function;
  plan.devices = options.devices;
  if (!options.memoryCap.empty())
    plan.memoryPerDevice = options.memoryCap.front();
  plan.numMicrobatches = options.numMicrobatches;
  plan.schedule = options.schedule.getValue();
  plan.slices = options.slices;
  plan.device.assign(options.device.begin(), options.device.end());
  plan.deviceFile = options.deviceFile;
  plan.optimizer = options.planOptimizer;
  plan.zero = options.zero;
  // What the user gave stays.
  if (options.tensorParallel.hasValue())
    plan.tensorParallel = options.tensorParallel;
  if (options.numStages.hasValue())
    plan.numStages = options.numStages;
  if (options.numReplicas.hasValue())
    plan.numReplicas = options.numReplicas;
  pm.addPass(createPPPlanParallelism(plan));
}

void pp::buildSchedulePipeline(OpPassManager &pm,
                               const SchedulePipelineOptions &options) {
  addStepPreparation(pm);
  // Megatron's splits for the weights the user did not split.
  if (options.tensorParallel > 1) {
    PPPlanTensorParallelOptions plan;
    plan.function = options.function;
    plan.tensorParallel = options.tensorParallel;
    plan.vocabulary = options.vocabularyParallel;
    pm.addPass(createPPPlanTensorParallel(plan));
  }
  // Seq1F1B: the step in sequence slices, before its micro-batches.
  if (options.slices > 1) {
    PPSplitSequenceOptions sequence;
    sequence.function = options.function;
    sequence.numSlices = options.slices;
    sequence.split = options.sliceSplit;
    pm.addPass(createPPSplitSequence(sequence));
  }
  PPSplitMicrobatchesOptions split;
  split.numMicrobatches = options.numMicrobatches;
  split.function = options.function;
  pm.addPass(createPPSplitMicrobatches(split));
  pm.addPass(createPPPartitionStages(getPlannerOptions(options)));
  if (options.slices > 1) {
    PPSplitSliceStagesOptions slices;
    slices.function = options.function;
    pm.addPass(createPPSplitSliceStages(slices));
  }
  PPDeriveBackwardOptions derive;
  derive.function = options.function;
  pm.addPass(createPPDeriveBackward(derive));
  pm.addPass(createPPSchedule(getSchedulerOptions(options)));
  PPInsertTransfersOptions transfers;
  transfers.numReplicas = options.numReplicas;
  transfers.zero = options.zero;
  pm.addPass(createPPInsertTransfers(transfers));
  PPShardStagesOptions shard;
  shard.tensorParallel = options.tensorParallel;
  pm.addPass(createPPShardStages(shard));
  pm.addPass(createPPVerifySchedule());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}
