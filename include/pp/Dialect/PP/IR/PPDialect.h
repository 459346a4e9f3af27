//===- PPDialect.h - pp dialect declaration ---------------------*- C++ -*-===//
//
// Declares the pp dialect and its attributes.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPDIALECT_H
#define PP_DIALECT_PP_IR_PPDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "pp/Dialect/PP/IR/PPOpsDialect.h.inc"

#include "pp/Dialect/PP/IR/PPEnums.h.inc"

#include "pp/Dialect/PP/IR/Slot.h"

#define GET_ATTRDEF_CLASSES
#include "pp/Dialect/PP/IR/PPAttrs.h.inc"

namespace mlir::pp {
/// Attributes tagging a derived stage function with its stage and phase.
inline constexpr llvm::StringLiteral kStageAttr = "pp.stage";
inline constexpr llvm::StringLiteral kPhaseAttr = "pp.phase";
/// Argument/result attribute (a SlotAttr) naming the runtime buffer a
/// stage-function value lives in.
inline constexpr llvm::StringLiteral kSlotAttr = "pp.slot";
} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_PPDIALECT_H
