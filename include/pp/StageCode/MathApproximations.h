//===- MathApproximations.h - cheaper f32 math ------------------*- C++ -*-===//
//
// Rewrites of f32 math that stage code vectorizes more cheaply than
// upstream MLIR's approximations: erf as one rational polynomial, and a
// division by a constant as a multiplication by its reciprocal.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_MATHAPPROXIMATIONS_H
#define PP_STAGECODE_MATHAPPROXIMATIONS_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::pp {

/// `math.erf` on f32 scalars and vectors as x * P(x^2) / Q(x^2) on x
/// clamped to +-3.8325 (past which erf rounds to 1 in f32), the rational
/// approximation of Eigen and XLA: 10 FMAs, a clamp and one division, no
/// selects between intervals. Against libm's erf it is within 3.7e-7.
void populateRationalErfPattern(RewritePatternSet &patterns);

/// `arith.divf %x, %c` on f32 with a constant (splat) divisor whose
/// reciprocal is a normal f32 as `arith.mulf %x, 1/c`: within one ulp of
/// the quotient, without the division's latency (PyTorch's GELU multiplies
/// by 1/sqrt(2) where the exported graph divides by sqrt(2)).
void populateReciprocalDivisionPattern(RewritePatternSet &patterns);

} // namespace mlir::pp

#endif // PP_STAGECODE_MATHAPPROXIMATIONS_H
