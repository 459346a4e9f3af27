//===- StepPlanner.h - a plan and a schedule per training step --*- C++ -*-===//
//
// Plans every step of a run ahead of it, as DynaPipe does: the step's
// samples sorted longest first and cut into micro-batches by the dynamic
// program (MicrobatchPlanner.h), each micro-batch run at the quickest
// compiled shape that holds it, and the step's schedule generated from those
// micro-batches' own costs. Steps whose micro-batches run at the same shapes
// in the same order share one schedule.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_STEPPLANNER_H
#define PP_SCHEDULING_STEPPLANNER_H

#include "pp/Scheduling/MicrobatchPlanner.h"
#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleProblem.h"

#include <vector>

namespace mlir::pp::sched {

/// A compiled micro-batch shape (a shape variant) and what one micro-batch
/// at it costs on each stage (per-stage values, no tables).
struct StepShape {
  int64_t rows = 0, length = 0;
  StageCosts costs;
};

/// What every step is planned for.
struct StepPlanProblem {
  int64_t numStages = 1, numRanks = 1;
  bool splitBackward = false;
  TransferSemantics semantics = TransferSemantics::async;
  std::vector<StepShape> shapes;
  /// Activation memory each rank may hold (one per rank; none when empty).
  llvm::SmallVector<double> memoryCap;
  /// Each step's micro-batch count is a multiple of this (what the schedule
  /// generator needs, getMicrobatchMultiple).
  int64_t microbatchMultiple = 1;
};

/// One step's plan: which sample of the step (index in the order given)
/// each sorted position holds, and the micro-batches cut from the sorted
/// lengths, each with its shape.
struct StepPlan {
  llvm::SmallVector<int64_t> order;
  MicrobatchPlan microbatches;
};

/// Every step's plan, and one schedule per distinct sequence of
/// micro-batch shapes.
struct PlannedSteps {
  std::vector<StepPlan> steps;
  /// Per step: the index of its schedule (and shape sequence).
  llvm::SmallVector<int64_t> scheduleOfStep;
  llvm::SmallVector<llvm::SmallVector<int64_t>> shapeSequences;
  std::vector<GeneratedSchedule> schedules;
};

/// The step's samples, longest first, ties in the order given.
llvm::SmallVector<int64_t> sortLongestFirst(llvm::ArrayRef<int64_t> lengths);

/// What planStep minimises on a step's sorted samples: the dynamic
/// program's problem at `problem`'s shapes, each taking its slowest stage's
/// F + B + W and holding, on a rank, its largest stage activation once per
/// stage of the rank, no shape over the smallest memory cap.
MicrobatchPlanProblem getStepCutProblem(const StepPlanProblem &problem);

/// Cuts one step's samples (lengths in tokens, in file order) into
/// micro-batches at the problem's shapes, minimising (p - 1) x the slowest
/// micro-batch + the sum of all, at no shape whose micro-batch alone holds
/// more than the smallest memory cap. Errors name the sample (its index in
/// `lengths`).
llvm::Expected<StepPlan> planStep(llvm::ArrayRef<int64_t> lengths,
                                  const StepPlanProblem &problem);

/// The per-(stage, micro-batch) costs of micro-batches run at `shapes`.
StageCosts getShapeSequenceCosts(llvm::ArrayRef<int64_t> shapes,
                                 const StepPlanProblem &problem);

/// A verified schedule by `generator` for micro-batches run at `shapes`.
llvm::Expected<GeneratedSchedule>
scheduleShapeSequence(llvm::ArrayRef<int64_t> shapes,
                      const StepPlanProblem &problem,
                      const ScheduleGenerator &generator);

/// Plans every step of `lines` (each a step's sample lengths in file
/// order) for each of `numReplicas` data-parallel replicas, replica r
/// taking the samples at positions r, r + D, r + 2D, ... of the step's
/// longest-first order; schedules each distinct shape sequence by
/// `generator`. `steps` holds the plans in (line, replica) order, each
/// plan's `order` the samples of the line its replica holds, longest
/// first. Errors name the line, the replica (with several) and the sample
/// (its index in the line), or the plan no schedule fits under the memory
/// caps.
llvm::Expected<PlannedSteps>
planSteps(llvm::ArrayRef<llvm::SmallVector<int64_t>> lines, int64_t numReplicas,
          const StepPlanProblem &problem, const ScheduleGenerator &generator);

/// Packing (docs/VariableLength.md): a step's samples back to back in rows
/// of `context` tokens, a sample running on into the next row where one
/// fills, the last row holding the rest. The rows' lengths, which the
/// planner then cuts like samples.
llvm::SmallVector<int64_t> packSamples(llvm::ArrayRef<int64_t> lengths,
                                       int64_t context);

/// The rows packing lays samples into: the longest shape's positions.
int64_t getPackingContext(const StepPlanProblem &problem);

/// What `planned` costs a run of its index once: per line, the slowest
/// replica's pipeline time ((p - 1) x slowest micro-batch + the sum), summed
/// over the lines, in the shapes' cost units.
double getPipelineTime(const PlannedSteps &planned, int64_t numReplicas);

/// `--packing=auto`'s rule: whether `packed` (the index's packed rows'
/// plans) runs quicker than `plans` by getPipelineTime; a tie keeps the
/// plans, which keep documents apart.
bool isPackingQuicker(const PlannedSteps &plans, const PlannedSteps &packed,
                      int64_t numReplicas);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_STEPPLANNER_H
