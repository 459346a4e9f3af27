//===- ScalarDerivative.h - derivatives of linalg payloads ------*- C++ -*-===//
//
// Forward-mode differentiation of the scalar body of a linalg op, the core
// of pp-derive-backward's one rule for every linalg op.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCALARDERIVATIVE_H
#define PP_DIALECT_PP_TRANSFORMS_SCALARDERIVATIVE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::pp {

/// Clones `payload` (a linalg body, without its yield) at the builder using
/// `mapping` for its arguments, and returns the derivative of the yielded
/// value with respect to `wrt`: a null Value when it is identically zero,
/// failure when the body holds an op without a derivative rule.
FailureOr<Value> differentiatePayload(OpBuilder &builder, Block &payload,
                                      BlockArgument wrt, IRMapping &mapping);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_SCALARDERIVATIVE_H
