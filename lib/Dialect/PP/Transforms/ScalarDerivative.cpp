//===- ScalarDerivative.cpp - derivatives of linalg payloads --------------===//
//
// Forward-mode derivative rules for the arith and math ops of linalg bodies.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScalarDerivative.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

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

/// The tangent of `op`'s result from its operands' tangents `t`; `orig` are
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
      .Default([](Operation *) { return failure(); });
}

FailureOr<Value> mlir::pp::differentiatePayload(OpBuilder &builder,
                                                Block &payload,
                                                BlockArgument wrt,
                                                IRMapping &mapping) {
  TangentBuilder tb{builder, wrt.getLoc()};
  DenseMap<Value, Value> tangent;
  tangent[wrt] = tb.constant(wrt.getType(), 1.0);
  for (Operation &op : payload.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    if (clone->getNumResults() != 1)
      return failure();
    SmallVector<Value> x(clone->getOperands());
    SmallVector<Value> t = llvm::map_to_vector(
        op.getOperands(), [&](Value v) { return tangent.lookup(v); });
    // Comparisons and other non-float results carry no derivative.
    if (llvm::none_of(t, [](Value v) { return bool(v); }) ||
        !isa<FloatType>(clone->getResult(0).getType()))
      continue;
    FailureOr<Value> dt = tangentOf(tb, clone, x, t, clone->getResult(0));
    if (failed(dt)) {
      emitError(op.getLoc())
          << "no derivative rule for '" << op.getName() << "'";
      return failure();
    }
    tangent[op.getResult(0)] = *dt;
  }
  return tangent.lookup(payload.getTerminator()->getOperand(0));
}
