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
#include "llvm/Support/FormatVariadic.h"

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
/// (by default the ranks and schedule the program runs), and schedules it
/// does not know (plugins) leave it at its default.
static PPPartitionStagesOptions
getPlannerOptions(const SchedulePipelineOptions &options) {
  PPPartitionStagesOptions planner;
  planner.function = options.function;
  planner.numStages = options.numStages;
  planner.numRanks =
      options.planRanks >= 0 ? options.planRanks : options.numRanks;
  std::string schedule =
      options.planSchedule.empty() ? options.schedule : options.planSchedule;
  if (lookupScheduleGenerator(schedule))
    planner.schedule = schedule;
  planner.device.assign(options.device.begin(), options.device.end());
  planner.deviceFile = options.deviceFile;
  planner.costFile = options.costFile;
  planner.memoryCap.assign(options.memoryCap.begin(), options.memoryCap.end());
  planner.recompute = options.recompute;
  return planner;
}

/// pp-schedule with only the options the pipeline sets: an options struct
/// would mark every option as given, and the cost options (comm-cost,
/// memory-cap) must stay unset so that a cost file or the default applies.
static std::unique_ptr<Pass>
createScheduler(const SchedulePipelineOptions &options) {
  std::unique_ptr<Pass> pass = createPPSchedule();
  std::string text =
      llvm::formatv(
          "schedule={0} num-microbatches={1} num-ranks={2} "
          "split-backward={3} function={4}",
          options.schedule.getValue(), options.numMicrobatches.getValue(),
          options.numRanks.getValue(), options.splitBackward ? "true" : "false",
          options.function.getValue())
          .str();
  // The values come from typed options, so they always parse.
  (void)pass->initializeOptions(text, [](const Twine &) { return failure(); });
  return pass;
}

void pp::buildSchedulePipeline(OpPassManager &pm,
                               const SchedulePipelineOptions &options) {
  // PyTorch's f64 statistics (layer norm, cross-entropy) computed in f32.
  pm.addNestedPass<func::FuncOp>(createPPDemoteF64());
  // The argmax PyTorch's max returns beside the max a softmax uses.
  pm.addNestedPass<func::FuncOp>(createPPDropUnusedResults());
  // Embedding and cross-entropy gathers, with their tables as operands.
  pm.addNestedPass<func::FuncOp>(createPPLowerGathers());
  PPSplitMicrobatchesOptions split;
  split.numMicrobatches = options.numMicrobatches;
  split.function = options.function;
  pm.addPass(createPPSplitMicrobatches(split));
  pm.addPass(createPPPartitionStages(getPlannerOptions(options)));
  PPDeriveBackwardOptions derive;
  derive.function = options.function;
  pm.addPass(createPPDeriveBackward(derive));
  pm.addPass(createScheduler(options));
  PPInsertTransfersOptions transfers;
  transfers.numReplicas = options.numReplicas;
  pm.addPass(createPPInsertTransfers(transfers));
  pm.addPass(createPPVerifySchedule());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}
