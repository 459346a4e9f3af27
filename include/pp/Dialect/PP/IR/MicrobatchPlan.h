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

/// A program planned per step (pp-compile --step-plans): on each of its
/// schedules, the plan it is (its index); on the module, the table the
/// runtime picks a step's plan from and loads its samples by
/// (pprt_set_step_plans): lines, replicas, then per (line, replica) the
/// plan, its micro-batches m and the samples each holds.
inline constexpr llvm::StringLiteral kStepPlanAttr = "pp.step_plan";
inline constexpr llvm::StringLiteral kStepPlansAttr = "pp.step_plans";

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_MICROBATCHPLAN_H
