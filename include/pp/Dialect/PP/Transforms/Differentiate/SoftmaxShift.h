//===- SoftmaxShift.h - the max a softmax subtracts -------------*- C++ -*-===//
//
// Recognises the row max that a numerically stable softmax subtracts, whose
// gradient is exactly zero.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SOFTMAXSHIFT_H
#define PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SOFTMAXSHIFT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pp {

/// Whether `shift` is the `m` of `x - m` (or `exp(x - m)`) computed by the
/// elementwise `op`, with `m` broadcast along a row, that reaches the loss
/// only through `exp(x - m) / sum_row exp(x - m)`: the exps feed one sum
/// from zero over exactly the row and divisions by that sum, and nothing
/// else: no other op uses them and none `escapes` (leaves the stage).
/// Softmax is shift-invariant (the quotient equals `exp(x) / sum_row exp(x)`
/// for every `m`), so the gradient of `m` through `op` is zero exactly, in
/// real arithmetic. So is log-softmax, `(x - m) - log(sum_row exp(x - m))`:
/// there `m` must also be the max of the same `x` over the same row, and
/// `x - m` reach the loss only through its one exp (summed over the row,
/// the sum only logged) and subtractions of that log. The uses are those of the
/// forward: ask before the backward reads its values.
bool isSoftmaxShift(linalg::LinalgOp op, OpOperand &shift,
                    llvm::function_ref<bool(Value)> escapes);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SOFTMAXSHIFT_H
