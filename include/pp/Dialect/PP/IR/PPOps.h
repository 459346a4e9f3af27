//===- PPOps.h - pp dialect operations --------------------------*- C++ -*-===//
//
// Declares the ops of the pp dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPOPS_H
#define PP_DIALECT_PP_IR_PPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "pp/Dialect/PP/IR/PPDialect.h"

#define GET_OP_CLASSES
#include "pp/Dialect/PP/IR/PPOps.h.inc"

namespace mlir::pp {
/// Whether `op` is a transfer posted in one exchange group with the transfer
/// before it (`grouped`).
bool isGroupedWithPrevious(Operation *op);

/// The step part of a compute, send or receive; `every` for other ops.
StepPart getStepPart(Operation *op);
} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_PPOPS_H
