//===- MicrobatchPlan.h - a micro-batch plan on the module ---*- C++ -*-===//
//
// The names of the module attributes pp-plan-microbatches leaves for
// pp-schedule and the data loader (docs/VariableLength.md).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_MICROBATCHPLAN_H
#define PP_DIALECT_PP_IR_MICROBATCHPLAN_H

#include "llvm/ADT/StringRef.h"

namespace mlir::pp {

/// The planned micro-batches' costs (a #pp.cost with per-micro-batch
/// tables), the step's sample indices in micro-batch order, where each
/// micro-batch starts in that list, and the length each is padded to.
inline constexpr llvm::StringLiteral kMicrobatchCostAttr = "pp.microbatch_cost";
inline constexpr llvm::StringLiteral kMicrobatchSamplesAttr =
    "pp.microbatch_samples";
inline constexpr llvm::StringLiteral kMicrobatchBeginAttr =
    "pp.microbatch_begin";
inline constexpr llvm::StringLiteral kMicrobatchLengthAttr =
    "pp.microbatch_length";

/// The stage planner's costs of the stages it planned (a #pp.cost in
/// seconds and bytes) and, under a memory cap, the bytes of activations
/// each rank may hold beside its weights, gradients and optimizer state
/// (an array<f64>): what pp-schedule schedules by without a cost file.
inline constexpr llvm::StringLiteral kPlannedCostAttr = "pp.planned_cost";
inline constexpr llvm::StringLiteral kPlannedActivationCapAttr =
    "pp.planned_activation_cap";

/// The identity of the model pp-compile read (a string, CostProfile.h's
/// getModelFingerprint), which cost profiles measured on it record: the
/// stage planner and pp-schedule refuse a profile of another model.
inline constexpr llvm::StringLiteral kModelFingerprintAttr =
    "pp.model_fingerprint";

/// A program planned per step (pp-compile --step-plans): on each of its
/// schedules, the plan it is (its index); on the module, the table the
/// runtime picks a step's plan from and loads its samples by
/// (pprt_set_step_plans): lines, replicas, then per (line, replica) the
/// plan, its micro-batches m and the samples each holds.
inline constexpr llvm::StringLiteral kStepPlanAttr = "pp.step_plan";
inline constexpr llvm::StringLiteral kStepPlansAttr = "pp.step_plans";

/// A program planned per step whose plans' "samples" are packed rows
/// (pp-compile --packing): the tokens a row holds, the longest shape's
/// positions. The runtime packs each step's samples into rows of it
/// (pprt_set_packing).
inline constexpr llvm::StringLiteral kPackedRowsAttr = "pp.packed_rows";

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_MICROBATCHPLAN_H
