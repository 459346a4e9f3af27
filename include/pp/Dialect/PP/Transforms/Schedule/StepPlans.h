//===- StepPlans.h - a schedule per distinct step plan ----------*- C++ -*-===//
//
// Plans every step of a length index ahead of the run, for a program with
// shape variants: each step's samples (per data-parallel replica) cut at
// the variants' shapes by the dynamic program, and one schedule per
// distinct sequence of micro-batch shapes, generated from those
// micro-batches' costs (docs/VariableLength.md).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULE_STEPPLANS_H
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULE_STEPPLANS_H

#include "pp/Scheduling/StepPlanner.h"

#include "pp/Dialect/PP/Analysis/CostProfile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::pp {

/// The micro-batch shapes of `module`'s variants (0, the untagged stage
/// functions, then 1, 2, ...): rows and positions of stage 0's data
/// argument, and per stage the FLOPs of its forward and backward functions
/// as F, B and W (B the fused backward unless `splitBackward`) and the
/// bytes its forward returns as activation memory.
FailureOr<std::vector<sched::StepShape>>
getVariantShapes(ModuleOp module, bool splitBackward, Location loc);

/// Replaces the F, B, W (in seconds), activation and stash of `shapes` by
/// the per-variant costs `profile` (read from `path`) measured. Errors,
/// at `loc`, where it lacks one of the program's variants or names one the
/// program lacks, or has another number of stages.
LogicalResult setMeasuredVariantCosts(const CostProfile &profile,
                                      StringRef path,
                                      std::vector<sched::StepShape> &shapes,
                                      Location loc);

/// Replaces `module`'s schedule with one per schedule of `planned` (compute
/// actions only, each calling its micro-batch's variant's stage functions,
/// tagged `pp.step_plan`), and sets the module's step table for `lines`
/// lines of `numReplicas` replicas.
LogicalResult addStepPlans(ModuleOp module, const sched::PlannedSteps &planned,
                           const sched::StepPlanProblem &problem, int64_t lines,
                           int64_t numReplicas);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULE_STEPPLANS_H
