//===- ScalarDerivative.h - derivatives of linalg payloads ------*- C++ -*-===//
//
// Forward-mode differentiation of the scalar body of a linalg op, the core
// of pp-derive-backward's one rule for every linalg op.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SCALARDERIVATIVE_H
#define PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SCALARDERIVATIVE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::pp {

/// Clones at the builder the ops of `payload` (a linalg body) that `values`
/// depend on, using `mapping` for the block arguments, and records the
/// clones in `mapping`.
void clonePayload(OpBuilder &builder, Block &payload, ArrayRef<Value> values,
                  IRMapping &mapping);

/// Like clonePayload, and returns the derivatives of `values` with respect
/// to `wrt`: a null Value where one is identically zero, failure (after an
/// error) when an op on the way has no derivative rule. `forward` maps
/// values of `payload` to their values computed by the forward, which the
/// derivative reads instead of the clones. `reciprocals` maps denominators
/// of `payload`'s divisions to their reciprocals: those divisions become
/// products.
FailureOr<SmallVector<Value>>
differentiatePayload(OpBuilder &builder, Block &payload, BlockArgument wrt,
                     ArrayRef<Value> values, IRMapping &mapping,
                     const DenseMap<Value, Value> &forward,
                     const DenseMap<Value, Value> &reciprocals);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SCALARDERIVATIVE_H
