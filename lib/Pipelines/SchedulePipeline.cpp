//===- SchedulePipeline.cpp - from a model to a verified schedule ---------===//
//
// Builds pp-schedule-pipeline, which splits, partitions, differentiates,
// schedules and verifies a training step, and the preludes that bring TOSA
// and elementwise tensor models to the linalg ops it reads. Each pass gets
// the pipeline's options of the same name (forwardOptions); only options
// named differently, or meaning something else, are set here.
//
//===----------------------------------------------------------------------===//

#include "ForwardOptions.h"

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

/// The stage planner: it plans for `plan-ranks` and `plan-schedule` (by
/// default the ranks and schedule the program runs).
static std::unique_ptr<Pass>
createPlanner(const SchedulePipelineOptions &options) {
  PPPartitionStagesOptions planner;
  planner.numRanks =
      options.planRanks >= 0 ? options.planRanks : options.numRanks;
  planner.schedule = options.planSchedule.getValue()
                         ? options.planSchedule.getValue()
                         : options.schedule.getValue();
  // The planner orders whole micro-batches: a sliced schedule's stages are
  // planned as 1F1B's, whose order seq1f1b runs on slices.
  if (options.slices > 1 && planner.schedule.getName() == "seq1f1b")
    planner.schedule = sched::ScheduleChoice::get("1f1b");
  // pp-schedule schedules by the planner's costs and memory budgets; the
  // planner reads the micro-batches from pp-split-microbatches.
  planner.recordCosts = true;
  return forwardOptions(options, createPPPartitionStages(planner),
                        {"num-ranks", "schedule", "num-microbatches"});
}

/// pp-schedule with the pipeline's schedule and shape; its cost options
/// (the planner's memory cap and cost file mean other things there) keep
/// their defaults, so that the planner's costs or unit costs apply.
static std::unique_ptr<Pass>
createScheduler(const SchedulePipelineOptions &options) {
  return forwardOptions(options, createPPSchedule(),
                        {"num-stages", "memory-cap", "cost-file", "recompute"});
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
                                      const SchedulePipelineOptions &options,
                                      ArrayRef<int64_t> zeroLevels,
                                      bool paramGathers) {
  addStepPreparation(pm);
  pm.addPass(forwardOptions(options, createPPSplitMicrobatches()));
  PPPlanParallelismOptions plan;
  if (!options.memoryCap.empty())
    plan.memoryPerDevice = options.memoryCap.front();
  plan.optimizer = options.planOptimizer;
  // What the user gave stays; the planner chooses the rest, each stage's
  // ZeRO level among `zeroLevels`.
  if (options.zero.hasValue())
    plan.fixedZero.assign(options.zero.begin(), options.zero.end());
  plan.zero.assign(zeroLevels.begin(), zeroLevels.end());
  plan.paramGathers = paramGathers;
  SmallVector<StringRef> chosen = {"zero", "param-gathers"};
  for (auto [name, given] :
       {std::pair{"tensor-parallel", options.tensorParallel.hasValue()},
        {"num-stages", options.numStages.hasValue()},
        {"num-replicas", options.numReplicas.hasValue()}})
    if (!given)
      chosen.push_back(name);
  pm.addPass(forwardOptions(options, createPPPlanParallelism(plan), chosen));
}

void pp::buildSchedulePipeline(OpPassManager &pm,
                               const SchedulePipelineOptions &options) {
  addStepPreparation(pm);
  // Megatron's splits for the weights the user did not split.
  if (options.tensorParallel > 1) {
    PPPlanTensorParallelOptions plan;
    plan.vocabulary = options.vocabularyParallel;
    pm.addPass(forwardOptions(options, createPPPlanTensorParallel(plan)));
  }
  // Seq1F1B: the step in sequence slices, before its micro-batches.
  if (options.slices > 1) {
    PPSplitSequenceOptions sequence;
    sequence.split = options.sliceSplit;
    pm.addPass(forwardOptions(options, createPPSplitSequence(sequence)));
  }
  pm.addPass(forwardOptions(options, createPPSplitMicrobatches()));
  pm.addPass(createPlanner(options));
  if (options.slices > 1)
    pm.addPass(forwardOptions(options, createPPSplitSliceStages()));
  pm.addPass(forwardOptions(options, createPPDeriveBackward()));
  pm.addPass(createScheduler(options));
  // The transfers are ordered for the semantics the schedule records.
  pm.addPass(forwardOptions(options, createPPInsertTransfers(), {"semantics"}));
  pm.addPass(forwardOptions(options, createPPShardStages()));
  pm.addPass(createPPVerifySchedule());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}
