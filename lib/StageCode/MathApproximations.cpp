//===- MathApproximations.cpp - cheaper f32 math --------------------------===//

#include "pp/StageCode/MathApproximations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

/// A constant of `type` (f32 or a vector of f32) with every element `value`.
static Value splat(OpBuilder &b, Location loc, Type type, double value) {
  auto element = FloatAttr::get(b.getF32Type(), value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc,
                                     SplatElementsAttr::get(vector, element));
  return arith::ConstantOp::create(b, loc, element);
}

/// sum(c[i] * x^i) by Horner's rule, highest coefficient first in `c`.
static Value horner(OpBuilder &b, Location loc, Value x,
                    ArrayRef<double> coefficients) {
  Type type = x.getType();
  Value sum = splat(b, loc, type, coefficients.front());
  for (double c : coefficients.drop_front())
    sum = math::FmaOp::create(b, loc, x, sum, splat(b, loc, type, c));
  return sum;
}

/// `x` clamped to [-bound, bound]; NaN stays NaN (the unordered comparisons
/// hold for it).
static Value clamp(OpBuilder &b, Location loc, Value x, double bound) {
  Type type = x.getType();
  Value lo = splat(b, loc, type, -bound), hi = splat(b, loc, type, bound);
  Value aboveLo =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGE, x, lo);
  x = arith::SelectOp::create(b, loc, aboveLo, x, lo);
  Value belowHi =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ULE, x, hi);
  return arith::SelectOp::create(b, loc, belowHi, x, hi);
}

namespace {

/// erf(x) = x * P(x^2) / Q(x^2) on x in [-3.8325, 3.8325].
struct RationalErf : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    // erf(3.8325...) rounds to 1 in f32 (XLA's kErfInvOneMinusHalfULP).
    Value x = clamp(rewriter, loc, op.getOperand(), 3.832506856900711);
    Value x2 = arith::MulFOp::create(rewriter, loc, x, x);
    // Odd numerator and even denominator, monomial coefficients from the
    // highest power down (Eigen's generic_fast_erf_float).
    Value p = horner(rewriter, loc, x2,
                     {-2.72614225801306e-10, 2.77068142495902e-08,
                      -2.10102402082508e-06, -5.69250639462346e-05,
                      -7.34990630326855e-04, -2.95459980854025e-03,
                      -1.60960333262415e-02});
    Value q = horner(rewriter, loc, x2,
                     {-1.45660718464996e-05, -2.13374055278905e-04,
                      -1.68282697438203e-03, -7.37332916720468e-03,
                      -1.42647390514189e-02});
    p = arith::MulFOp::create(rewriter, loc, x, p);
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, p, q);
    return success();
  }
};

/// x / c as x * (1/c) where 1/c is a normal f32.
struct ReciprocalDivision : OpRewritePattern<arith::DivFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::DivFOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getType()).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Attribute divisor;
    if (!matchPattern(op.getRhs(), m_Constant(&divisor)))
      return rewriter.notifyMatchFailure(op, "divisor not a constant");
    if (auto splatDivisor = dyn_cast<SplatElementsAttr>(divisor))
      divisor = splatDivisor.getSplatValue<Attribute>();
    auto c = dyn_cast<FloatAttr>(divisor);
    if (!c)
      return rewriter.notifyMatchFailure(op, "divisor not a splat");
    APFloat reciprocal(1.0f);
    reciprocal.divide(c.getValue(), APFloat::rmNearestTiesToEven);
    if (!reciprocal.isNormal())
      return rewriter.notifyMatchFailure(op, "1/divisor not a normal f32");
    Value factor =
        splat(rewriter, op.getLoc(), op.getType(), reciprocal.convertToFloat());
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, op.getLhs(), factor,
                                               op.getFastmathAttr());
    return success();
  }
};

} // namespace

void mlir::pp::populateRationalErfPattern(RewritePatternSet &patterns) {
  patterns.add<RationalErf>(patterns.getContext());
}

void mlir::pp::populateReciprocalDivisionPattern(RewritePatternSet &patterns) {
  patterns.add<ReciprocalDivision>(patterns.getContext());
}
