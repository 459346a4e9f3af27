//===- PPDialect.h - pp dialect declaration ---------------------*- C++ -*-===//
//
// Declares the pp dialect and its attributes.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPDIALECT_H
#define PP_DIALECT_PP_IR_PPDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include <array>

#include "pp/Dialect/PP/IR/PPOpsDialect.h.inc"

#include "pp/Dialect/PP/IR/PPEnums.h"

#include "pp/Dialect/PP/IR/Slot.h"

#define GET_ATTRDEF_CLASSES
#include "pp/Dialect/PP/IR/PPAttrs.h.inc"

namespace mlir::pp {
// The discardable attributes of the dialect; PPDialect verifies where each
// sits and what it holds (DiscardableAttributes.cpp).

/// On a derived stage function: its stage, its phase, the number of
/// micro-batches pp-split-microbatches split the step into (also on the
/// step), and whether its stage's backward recomputes its forward from the
/// stage inputs (a `recompute` pp.stage).
inline constexpr llvm::StringLiteral kStageAttr = "pp.stage";
inline constexpr llvm::StringLiteral kPhaseAttr = "pp.phase";
inline constexpr llvm::StringLiteral kMicrobatchesAttr = "pp.microbatches";
inline constexpr llvm::StringLiteral kRecomputeAttr = "pp.recompute";
/// On a stage function of a program with shape variants (one set of stage
/// functions per (rows, length) bucket): its variant, >= 1; absent, 0.
inline constexpr llvm::StringLiteral kVariantAttr = "pp.variant";
/// The sequence slice (0 .. k-1) an op of a sequence-sliced step computes
/// (pp-split-sequence), the slice a pp.stage computes
/// (pp-split-slice-stages), and the slice a stage function runs.
inline constexpr llvm::StringLiteral kSliceAttr = "pp.slice";
/// Argument/result attribute (a SlotAttr) naming the runtime buffer a
/// stage-function value lives in.
inline constexpr llvm::StringLiteral kSlotAttr = "pp.slot";
/// On arguments of the training step: a weight, the data argument that holds
/// the training targets, and the name of a weight (its checkpoint key).
inline constexpr llvm::StringLiteral kParamAttr = "pp.param";
inline constexpr llvm::StringLiteral kTargetAttr = "pp.target";
inline constexpr llvm::StringLiteral kNameAttr = "pp.name";
/// Non-trained state the step updates (batch norm's running statistics): a
/// unit attribute on the argument holding its value before the step, and
/// on the result holding its new value, the number of that argument.
inline constexpr llvm::StringLiteral kStateAttr = "pp.state";
/// On an integer data argument of the training step and on the stage-function
/// arguments that hold it: the rows of the smallest table its ids index (an
/// embedding, the classes of a loss), which the runtime checks the training
/// data against.
inline constexpr llvm::StringLiteral kIdBoundAttr = "pp.id_bound";
/// Beside `pp.id_bound`: the one id outside the table the argument may also
/// hold, because the model masks it out before every gather (the
/// `ignore_index` of a cross-entropy loss).
inline constexpr llvm::StringLiteral kIdIgnoredAttr = "pp.id_ignored";
/// On an integer [rows, positions] input of a step: the runtime fills it
/// with each token's document index within its packed row
/// (`"document_ids"`) or position within its document (`"position_ids"`),
/// for a model that masks attention between documents
/// (docs/VariableLength.md).
inline constexpr llvm::StringLiteral kPackedInputAttr = "pp.packed_input";
inline constexpr llvm::StringLiteral kDocumentIds = "document_ids";
inline constexpr llvm::StringLiteral kPositionIds = "position_ids";
/// On a linalg contraction: `pp-select-gemm` chose the runtime's GEMM.
inline constexpr llvm::StringLiteral kGemmAttrName = "pp.gemm";
inline constexpr llvm::StringLiteral kGemmLibrary = "library";
/// On a pp.schedule, what pp-simulate found: the makespan, each rank's idle
/// time and peak activation memory, and a no-flush schedule's time per step.
inline constexpr llvm::StringLiteral kMakespanAttr = "pp.makespan";
inline constexpr llvm::StringLiteral kIdleAttr = "pp.idle";
inline constexpr llvm::StringLiteral kPeakMemoryAttr = "pp.peak_memory";
inline constexpr llvm::StringLiteral kSteadyStepAttr = "pp.steady_step";
} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_PPDIALECT_H
