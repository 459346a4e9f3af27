//===- Adjoints.h - reverse-mode rules of pp-derive-backward ----*- C++ -*-===//
//
// From the gradients of an op's results, the gradients of its operands: one
// rule for every linalg op, and rules for the tensor ops that move data.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_ADJOINTS_H
#define PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_ADJOINTS_H

#include "mlir/IR/Builders.h"

namespace mlir::pp {

/// A zero tensor of `type`, built from tensor.empty and linalg.fill.
Value createZeros(OpBuilder &builder, Location loc, Type type);

/// Builds at the builder the gradients of the operands of `op` that
/// `needsGradient` selects, given the gradients of its results (null where
/// a result has none), and hands each to `accumulate` (an operand may get
/// several). Fails after an error naming the op and `stage` when no rule
/// covers `op`.
LogicalResult
buildAdjoint(OpBuilder &builder, Operation *op, ArrayRef<Value> resultGrads,
             llvm::function_ref<bool(Value)> needsGradient,
             llvm::function_ref<void(Value operand, Value grad)> accumulate,
             int64_t stage);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_ADJOINTS_H
