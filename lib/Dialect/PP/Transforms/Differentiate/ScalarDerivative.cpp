//===- ScalarDerivative.cpp - derivatives of linalg payloads --------------===//
//
// Forward-mode derivative rules for the arith and math ops of linalg bodies.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Differentiate/ScalarDerivative.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace {

/// Builds tangents; a null Value stands for an exact zero.
struct TangentBuilder {
  OpBuilder &b;
  Location loc;

  Value constant(Type type, double value) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  }
  Value add(Value x, Value y) {
    if (!x || !y)
      return x ? x : y;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    if (!x)
      return arith::NegFOp::create(b, loc, y);
    return arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (!x || !y)
      return Value();
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) {
    if (!x)
      return Value();
    return arith::DivFOp::create(b, loc, x, y);
  }
  /// select(cond, x, y) where either side may be zero.
  Value select(Value cond, Value x, Value y, Type type) {
    if (!x && !y)
      return Value();
    return arith::SelectOp::create(b, loc, cond, x ? x : constant(type, 0),
                                   y ? y : constant(type, 0));
  }
};

} // namespace

/// The tangent of `op`'s result from its operands' tangents `t`; `x` are
/// the cloned operands and `result` the cloned result.
static FailureOr<Value> tangentOf(TangentBuilder &tb, Operation *op,
                                  ArrayRef<Value> x, ArrayRef<Value> t,
                                  Value result) {
  Type type = result.getType();
  OpBuilder &b = tb.b;
  Location loc = tb.loc;
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case<arith::ConstantOp>([](auto) { return Value(); })
      .Case<arith::AddFOp>([&](auto) { return tb.add(t[0], t[1]); })
      .Case<arith::SubFOp>([&](auto) { return tb.sub(t[0], t[1]); })
      .Case<arith::MulFOp>(
          [&](auto) { return tb.add(tb.mul(t[0], x[1]), tb.mul(x[0], t[1])); })
      .Case<arith::DivFOp>([&](auto) {
        // d(x/y) = dx/y - (x/y) * dy/y
        return tb.sub(tb.div(t[0], x[1]), tb.div(tb.mul(result, t[1]), x[1]));
      })
      .Case<arith::NegFOp>([&](auto) { return tb.sub(Value(), t[0]); })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](auto) {
        Value cond = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                           x[0], x[1]);
        return tb.select(cond, t[0], t[1], type);
      })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](auto) {
        Value cond = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                           x[0], x[1]);
        return tb.select(cond, t[0], t[1], type);
      })
      .Case<arith::SelectOp>(
          [&](auto) { return tb.select(x[0], t[1], t[2], type); })
      .Case<math::TanhOp>([&](auto) {
        Value one = tb.constant(type, 1.0);
        return tb.mul(t[0], tb.sub(one, tb.mul(result, result)));
      })
      .Case<math::ExpOp>([&](auto) { return tb.mul(t[0], result); })
      .Case<math::LogOp>([&](auto) { return tb.div(t[0], x[0]); })
      .Case<math::SqrtOp>([&](auto) {
        return tb.div(t[0], tb.mul(tb.constant(type, 2.0), result));
      })
      .Case<math::RsqrtOp>([&](auto) {
        // d(x^-1/2) = -1/2 x^-3/2 dx
        Value cube = tb.mul(result, tb.mul(result, result));
        return tb.mul(t[0], tb.mul(tb.constant(type, -0.5), cube));
      })
      .Case<math::ErfOp>([&](auto) {
        // d erf(x) = 2/sqrt(pi) exp(-x^2) dx
        Value gauss = math::ExpOp::create(
            b, loc, arith::NegFOp::create(b, loc, tb.mul(x[0], x[0])));
        return tb.mul(t[0], tb.mul(tb.constant(type, M_2_SQRTPI), gauss));
      })
      .Case<math::AbsFOp>([&](auto) {
        Value negative = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OLT, x[0], tb.constant(type, 0.0));
        return tb.select(negative, tb.sub(Value(), t[0]), t[0], type);
      })
      .Case<math::PowFOp>([&](auto) {
        // d(x^y) = y x^(y-1) dx + log(x) x^y dy
        Value lowered = math::PowFOp::create(
            b, loc, x[0], tb.sub(x[1], tb.constant(type, 1.0)));
        Value dx = t[0] ? tb.mul(t[0], tb.mul(x[1], lowered)) : Value();
        Value dy = t[1] ? tb.mul(t[1], tb.mul(math::LogOp::create(b, loc, x[0]),
                                              result))
                        : Value();
        return tb.add(dx, dy);
      })
      .Case<math::FPowIOp>([&](math::FPowIOp pow) {
        // d(x^n) = n x^(n-1) dx for an integer n (`(y - t)**2` in PyTorch).
        Value n = pow.getRhs();
        Value one =
            arith::ConstantOp::create(b, loc, b.getIntegerAttr(n.getType(), 1));
        Value lowered = math::FPowIOp::create(
            b, loc, x[0], arith::SubIOp::create(b, loc, n, one));
        Value factor = arith::SIToFPOp::create(b, loc, type, n);
        return tb.mul(t[0], tb.mul(factor, lowered));
      })
      .Case<arith::ExtFOp>([&](auto) {
        return Value(arith::ExtFOp::create(b, loc, type, t[0]));
      })
      .Case<arith::TruncFOp>([&](auto) {
        return Value(arith::TruncFOp::create(b, loc, type, t[0]));
      })
      .Case<math::SinOp>(
          [&](auto) { return tb.mul(t[0], math::CosOp::create(b, loc, x[0])); })
      .Case<math::CosOp>([&](auto) {
        return tb.sub(Value(), tb.mul(t[0], math::SinOp::create(b, loc, x[0])));
      })
      .Case<math::AtanOp>([&](auto) {
        // d atan(x) = dx / (1 + x^2)
        return tb.div(t[0], tb.add(tb.constant(type, 1.0), tb.mul(x[0], x[0])));
      })
      .Case<math::Exp2Op>([&](auto) {
        return tb.mul(t[0], tb.mul(tb.constant(type, M_LN2), result));
      })
      .Case<math::Log2Op>([&](auto) {
        return tb.div(t[0], tb.mul(tb.constant(type, M_LN2), x[0]));
      })
      .Case<math::Log1pOp>([&](auto) {
        return tb.div(t[0], tb.add(x[0], tb.constant(type, 1.0)));
      })
      .Case<math::ExpM1Op>([&](auto) {
        return tb.mul(t[0], tb.add(result, tb.constant(type, 1.0)));
      })
      .Case<math::FmaOp>([&](auto) {
        return tb.add(tb.add(tb.mul(t[0], x[1]), tb.mul(x[0], t[1])), t[2]);
      })
      .Default([](Operation *) { return failure(); });
}

/// The ops of `payload` that `values` depend on, nested uses included.
static DenseSet<Operation *> payloadSlice(Block &payload,
                                          ArrayRef<Value> values) {
  DenseSet<Operation *> slice;
  SmallVector<Value> worklist(values);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op->getBlock() != &payload || !slice.insert(op).second)
      continue;
    op->walk([&](Operation *nested) {
      llvm::append_range(worklist, nested->getOperands());
    });
  }
  return slice;
}

void mlir::pp::clonePayload(OpBuilder &builder, Block &payload,
                            ArrayRef<Value> values, IRMapping &mapping) {
  DenseSet<Operation *> slice = payloadSlice(payload, values);
  for (Operation &op : payload.without_terminator())
    if (slice.contains(&op))
      builder.clone(op, mapping);
}

FailureOr<SmallVector<Value>>
mlir::pp::differentiatePayload(OpBuilder &builder, Block &payload,
                               BlockArgument wrt, ArrayRef<Value> values,
                               IRMapping &mapping,
                               const DenseMap<Value, Value> &forward,
                               const DenseMap<Value, Value> &reciprocals) {
  TangentBuilder tb{builder, wrt.getLoc()};
  DenseMap<Value, Value> tangent;
  tangent[wrt] = tb.constant(wrt.getType(), 1.0);
  DenseSet<Operation *> slice = payloadSlice(payload, values);
  for (Operation &op : payload.without_terminator()) {
    if (!slice.contains(&op))
      continue;
    auto div = dyn_cast<arith::DivFOp>(op);
    if (Value inverse = div ? reciprocals.lookup(div.getRhs()) : Value()) {
      // x / y as x * (1/y): d(x/y) = dx (1/y) - (x/y) dy (1/y).
      Value quotient =
          arith::MulFOp::create(builder, div.getLoc(),
                                mapping.lookupOrDefault(div.getLhs()), inverse);
      mapping.map(div.getResult(), quotient);
      Value dy =
          tb.mul(tb.mul(quotient, tangent.lookup(div.getRhs())), inverse);
      if (Value dt = tb.sub(tb.mul(tangent.lookup(div.getLhs()), inverse), dy))
        tangent[div.getResult()] = dt;
      continue;
    }
    Operation *clone = builder.clone(op, mapping);
    // A value the forward computed is read from it; the clone is left dead.
    Value result = clone->getNumResults() == 1 ? clone->getResult(0) : Value();
    if (Value computed = forward.lookup(op.getResult(0))) {
      mapping.map(op.getResult(0), computed);
      result = computed;
    }
    SmallVector<Value> t = llvm::map_to_vector(
        op.getOperands(), [&](Value v) { return tangent.lookup(v); });
    // Comparisons and other non-float results carry no derivative.
    if (llvm::none_of(t, [](Value v) { return bool(v); }) ||
        llvm::none_of(clone->getResultTypes(),
                      [](Type type) { return isa<FloatType>(type); }))
      continue;
    FailureOr<Value> dt = failure();
    if (result)
      dt = tangentOf(tb, clone, SmallVector<Value>(clone->getOperands()), t,
                     result);
    if (failed(dt)) {
      emitError(op.getLoc())
          << "no derivative rule for '" << op.getName() << "'";
      return failure();
    }
    tangent[op.getResult(0)] = *dt;
  }
  return llvm::map_to_vector(values,
                             [&](Value v) { return tangent.lookup(v); });
}
