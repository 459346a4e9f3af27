//===- SoftmaxShift.h - the max a softmax subtracts -------------*- C++ -*-===//
//
// Recognises the row max that a numerically stable softmax or log-softmax
// subtracts, whose gradient is exactly zero.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SOFTMAXSHIFT_H
#define PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SOFTMAXSHIFT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pp {

/// Whether `shift` is the `m` of `x - m` (or `exp(x - m)`) computed by the
/// elementwise `op`, with `m` broadcast along a row, that reaches the loss
/// only through a softmax or a log-softmax of the row:
/// - `exp(x - m) / sum_row exp(x - m)`: the exps feed one sum from zero
///   over exactly the row and divisions by that sum, and nothing else;
/// - `(x - m) - log(sum_row exp(x - m))`: `x - m` feeds its one exp and
///   subtractions of the log, the exps only that sum, the sum only its log,
///   the log only those subtractions;
/// and none of these values `escapes` (leaves the stage). Both are
/// shift-invariant: for every `c` constant along the row, `m + c` gives
/// `exp(x - m) exp(-c) / (exp(-c) sum_row exp(x - m))`, the same quotient,
/// and `(x - m) - c - (log(sum_row exp(x - m)) - c)`, the same difference.
/// So the gradient of `m` through `op` is zero exactly, in real arithmetic
/// (for the log-softmax, `-1` through `x - m` and
/// `sum_row exp(x - m) / sum_row exp(x - m) = 1` through the log). The
/// uses are those of the forward: ask before the backward reads its
/// values.
bool isSoftmaxShift(linalg::LinalgOp op, OpOperand &shift,
                    llvm::function_ref<bool(Value)> escapes);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_SOFTMAXSHIFT_H
