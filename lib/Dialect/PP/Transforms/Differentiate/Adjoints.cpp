//===- Adjoints.cpp - reverse-mode rules of pp-derive-backward ------------===//
//
// Gradients of operands from gradients of results. Every linalg op shares
// one rule over its indexing maps and scalar payload; the tensor ops that
// only move data (reshapes, slices, concatenation, padding) have their
// adjoint data movement.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Differentiate/Adjoints.h"
#include "pp/Dialect/PP/Transforms/Differentiate/ScalarDerivative.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pp;

Value mlir::pp::createZeros(OpBuilder &builder, Location loc, Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  Value empty = tensor::EmptyOp::create(builder, loc, tensorType.getShape(),
                                        tensorType.getElementType());
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getZeroAttr(tensorType.getElementType()));
  return linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
}

static Value floatConstant(OpBuilder &builder, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(builder, loc,
                                   builder.getFloatAttr(type, value));
}

//===----------------------------------------------------------------------===//
// Linalg ops
//===----------------------------------------------------------------------===//

namespace {

/// How a linalg op folds its payload into one result.
enum class Combiner {
  None,    // no reduction loops: the result is the payload value
  Sum,     // out + f(ins)
  Extremum // max(out, f(ins)) or min(out, f(ins))
};

/// One result of an operand's indexing map that slides a window, as a
/// convolution or pooling reads its input: `stride * outer + dilation *
/// inner + offset`, where `outer` is a loop the op's results index (the
/// window's position) and `inner` an optional one they do not (the place in
/// the window).
struct WindowDim {
  unsigned position; // in the operand's indexing map
  AffineExpr expr;
  std::optional<unsigned> outer;
  int64_t stride = 0;
  std::optional<unsigned> inner;
  int64_t dilation = 0;
  int64_t innerRange = 1;
  int64_t offset = 0;
  int64_t extent = 0; // the operand's size at `position`

  /// Where the spread result gradient places position 0 of the window, so
  /// that `coordinate - dilation * inner + spreadOffset` stays in bounds.
  int64_t spreadOffset() const { return dilation * (innerRange - 1) + offset; }
  int64_t spreadSize() const { return extent + dilation * (innerRange - 1); }
};

/// What the rule knows about one result of the op.
struct ResultAdjoint {
  OpResult result;
  Combiner combiner = Combiner::None;
  Value payloadValue; // in the op's body: the value folded into the result
  Value grad;         // the result's gradient; null if it has none
  // Extremum only: the gradient divided by the number of iterations that
  // attain the extremum, so that ties share it.
  Value tieWeight;
};

/// The gradient rule shared by all linalg ops. With f the payload and
/// g the gradient of a result, the gradient of operand x is, for every
/// point of the iteration space, g * df/dx summed over the loops that x
/// does not index: one linalg.generic over the op's loops with those loops
/// made reductions. A max or min reduction routes g to the iterations that
/// attain the extremum, split evenly between ties.
class LinalgAdjoint {
public:
  LinalgAdjoint(OpBuilder &builder, linalg::LinalgOp op, int64_t stage)
      : builder(builder), op(op), loc(op.getLoc()), stage(stage) {}

  LogicalResult build(ArrayRef<Value> resultGrads,
                      function_ref<bool(Value)> needsGradient,
                      function_ref<void(Value, Value)> accumulate);

private:
  InFlightDiagnostic emitError() {
    return op->emitOpError("in stage ")
           << stage << " cannot be differentiated: ";
  }
  FailureOr<ResultAdjoint> analyzeResult(OpResult result);
  SmallVector<BlockArgument> argumentsUsedBy(ArrayRef<Value> values);
  void appendOperands(ArrayRef<BlockArgument> args, SmallVector<Value> &inputs,
                      SmallVector<AffineMap> &maps);
  void bindAllLoops(SmallVector<Value> &inputs, SmallVector<AffineMap> &maps,
                    AffineMap outputMap);
  Value countTies(const ResultAdjoint &result);
  FailureOr<SmallVector<WindowDim>> findWindows(AffineMap map,
                                                ArrayRef<int64_t> shape);
  LogicalResult slideOperands(ArrayRef<WindowDim> windows,
                              SmallVector<Value> &inputs,
                              SmallVector<AffineMap> &maps);
  FailureOr<Value> operandGradient(OpOperand &target);
  bool readsForwardResult(const ResultAdjoint &result);
  bool isBroadcastDenominator(BlockArgument arg);
  Value reciprocalOf(BlockArgument arg);
  FailureOr<SmallVector<WindowDim>> windowsOf(OpOperand &target);

  OpBuilder &builder;
  linalg::LinalgOp op;
  Location loc;
  int64_t stage;
  SmallVector<ResultAdjoint> results;
  // Per broadcast denominator, the tensor of its reciprocals.
  DenseMap<BlockArgument, Value> reciprocals;
};

} // namespace

/// Whether `out` enters float values only through `combine`: its other
/// uses may compute integers alone, such as the index of a max beside it.
static bool onlyCombinedOrIndexed(BlockArgument out, Operation *combine) {
  SmallVector<Operation *> worklist;
  for (Operation *user : out.getUsers())
    if (user != combine)
      worklist.push_back(user);
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!seen.insert(op).second || isa<linalg::YieldOp>(op))
      continue;
    for (Value result : op->getResults()) {
      if (isa<FloatType>(result.getType()))
        return false;
      llvm::append_range(worklist, result.getUsers());
    }
  }
  return true;
}

FailureOr<ResultAdjoint> LinalgAdjoint::analyzeResult(OpResult result) {
  Block *body = op.getBlock();
  unsigned index = result.getResultNumber();
  Value yielded = body->getTerminator()->getOperand(index);
  if (op.getNumReductionLoops() == 0)
    return ResultAdjoint{result, Combiner::None, yielded};
  BlockArgument out = op.getMatchingBlockArgument(op.getDpsInitOperand(index));
  Operation *combine = yielded.getDefiningOp();
  Value other;
  if (combine && combine->getNumOperands() == 2 &&
      onlyCombinedOrIndexed(out, combine))
    other = combine->getOperand(0) == out   ? combine->getOperand(1)
            : combine->getOperand(1) == out ? combine->getOperand(0)
                                            : Value();
  if (other && isa<arith::AddFOp>(combine))
    return ResultAdjoint{result, Combiner::Sum, other};
  if (other && isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                   arith::MinNumFOp>(combine))
    return ResultAdjoint{result, Combiner::Extremum, other};
  return emitError() << "result #" << index
                     << " must reduce by a sum or a max or min (yield `out + "
                        "f(ins)` or `max(out, f(ins))`)";
}

/// The block arguments that computing `values` reads, in order.
SmallVector<BlockArgument>
LinalgAdjoint::argumentsUsedBy(ArrayRef<Value> values) {
  Block *body = op.getBlock();
  llvm::SetVector<BlockArgument> used;
  SmallVector<Value> worklist(values);
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == body)
        used.insert(arg);
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (def->getBlock() != body || !seen.insert(def).second)
      continue;
    def->walk([&](Operation *nested) {
      llvm::append_range(worklist, nested->getOperands());
    });
  }
  SmallVector<BlockArgument> args = used.takeVector();
  llvm::sort(args, [](BlockArgument a, BlockArgument b) {
    return a.getArgNumber() < b.getArgNumber();
  });
  return args;
}

/// Appends the operands that block arguments `args` stand for, with their
/// indexing maps.
void LinalgAdjoint::appendOperands(ArrayRef<BlockArgument> args,
                                   SmallVector<Value> &inputs,
                                   SmallVector<AffineMap> &maps) {
  for (BlockArgument arg : args) {
    OpOperand *operand = op.getMatchingOpOperand(arg);
    inputs.push_back(operand->get());
    maps.push_back(op.getMatchingIndexingMap(operand));
  }
}

/// Appends operands of the op that bound the loops that neither `maps` nor
/// `outputMap` index: a derived generic must span every loop of the op even
/// where the payload ignores the operand that sets a loop's range.
void LinalgAdjoint::bindAllLoops(SmallVector<Value> &inputs,
                                 SmallVector<AffineMap> &maps,
                                 AffineMap outputMap) {
  llvm::SmallBitVector bound(op.getNumLoops());
  auto bind = [&](AffineMap map) {
    for (AffineExpr expr : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        bound.set(dim.getPosition());
  };
  llvm::for_each(maps, bind);
  bind(outputMap);
  for (OpOperand &operand : op->getOpOperands()) {
    if (bound.all())
      return;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (llvm::none_of(map.getResults(), [&](AffineExpr expr) {
          auto dim = dyn_cast<AffineDimExpr>(expr);
          return dim && !bound.test(dim.getPosition());
        }))
      continue;
    inputs.push_back(operand.get());
    maps.push_back(map);
    bind(map);
  }
}

//===----------------------------------------------------------------------===//
// Sliding windows
//===----------------------------------------------------------------------===//

/// Adds `scale` times the linear form of `expr` (a sum of constants and
/// loops times constants) to `coefficients` (one per loop) and `constant`.
static bool addLinearForm(AffineExpr expr, int64_t scale,
                          SmallVectorImpl<int64_t> &coefficients,
                          int64_t &constant) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    coefficients[dim.getPosition()] += scale;
    return true;
  }
  if (auto value = dyn_cast<AffineConstantExpr>(expr)) {
    constant += scale * value.getValue();
    return true;
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return false;
  if (binary.getKind() == AffineExprKind::Add)
    return addLinearForm(binary.getLHS(), scale, coefficients, constant) &&
           addLinearForm(binary.getRHS(), scale, coefficients, constant);
  auto factor = dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (binary.getKind() == AffineExprKind::Mul && factor)
    return addLinearForm(binary.getLHS(), scale * factor.getValue(),
                         coefficients, constant);
  return false;
}

FailureOr<SmallVector<WindowDim>>
LinalgAdjoint::findWindows(AffineMap map, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> loopRanges = op.getStaticLoopRanges();
  auto indexedByResults = [&](unsigned loop) {
    return llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
      return op.getMatchingIndexingMap(&init).isFunctionOfDim(loop);
    });
  };
  SmallVector<WindowDim> windows;
  llvm::SmallBitVector used(op.getNumLoops());
  for (auto [position, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (used.test(dim.getPosition()))
        return failure();
      used.set(dim.getPosition());
      continue;
    }
    if (auto value = dyn_cast<AffineConstantExpr>(expr)) {
      if (value.getValue() != 0) // a constant 0 indexes a unit dimension
        return failure();
      continue;
    }
    SmallVector<int64_t> coefficients(op.getNumLoops(), 0);
    int64_t constant = 0;
    if (!addLinearForm(expr, 1, coefficients, constant) || constant < 0)
      return failure();
    WindowDim window{static_cast<unsigned>(position), expr};
    window.offset = constant;
    window.extent = shape[position];
    for (auto [loop, coefficient] : llvm::enumerate(coefficients)) {
      if (coefficient == 0)
        continue;
      if (coefficient < 0 || used.test(loop))
        return failure();
      used.set(loop);
      if (indexedByResults(loop) && !window.outer) {
        window.outer = loop;
        window.stride = coefficient;
      } else if (!window.inner) {
        window.inner = loop;
        window.dilation = coefficient;
        window.innerRange = loopRanges[loop];
      } else {
        return failure();
      }
    }
    if (!window.outer || ShapedType::isDynamic(window.innerRange))
      return failure();
    windows.push_back(window);
  }
  return windows;
}

/// `map` over the loops of the derived generic, in which each window's
/// outer loop runs over the coordinate of the operand it reads: the window
/// expression becomes that loop; the plain outer loop (how the results
/// index it) becomes the place in the spread result gradient, `outer -
/// dilation * inner + spreadOffset`. Appends the positions to spread, per
/// window, to `spread`; fails where `map` reads an outer loop otherwise.
static FailureOr<AffineMap>
slideMap(AffineMap map, ArrayRef<WindowDim> windows,
         SmallVectorImpl<std::pair<unsigned, const WindowDim *>> &spread) {
  MLIRContext *context = map.getContext();
  SmallVector<AffineExpr> results;
  for (auto [position, expr] : llvm::enumerate(map.getResults())) {
    const WindowDim *match = nullptr;
    for (const WindowDim &window : windows)
      if (expr == window.expr)
        match = &window;
    if (match) {
      results.push_back(getAffineDimExpr(*match->outer, context));
      continue;
    }
    for (const WindowDim &window : windows)
      if (expr == getAffineDimExpr(*window.outer, context))
        match = &window;
    if (match) {
      AffineExpr place = expr + match->spreadOffset();
      if (match->inner)
        place =
            place - getAffineDimExpr(*match->inner, context) * match->dilation;
      results.push_back(place);
      spread.emplace_back(position, match);
      continue;
    }
    if (llvm::any_of(windows, [&](const WindowDim &window) {
          return expr.isFunctionOfDim(*window.outer);
        }))
      return failure();
    results.push_back(expr);
  }
  return AffineMap::get(map.getNumDims(), 0, results, context);
}

/// `value` spread along the given dimensions: each element moved from `p`
/// to `spreadOffset + stride * p`, zeros between and around.
static Value
spreadValue(OpBuilder &builder, Location loc, Value value,
            ArrayRef<std::pair<unsigned, const WindowDim *>> spread) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
  for (auto [position, window] : spread) {
    shape[position] = window->spreadSize();
    offsets[position] = builder.getIndexAttr(window->spreadOffset());
    strides[position] = builder.getIndexAttr(window->stride);
  }
  Value zeros = createZeros(builder, loc, type.clone(shape));
  return tensor::InsertSliceOp::create(
      builder, loc, value, zeros, offsets,
      getAsIndexOpFoldResult(builder.getContext(), type.getShape()), strides);
}

LogicalResult LinalgAdjoint::slideOperands(ArrayRef<WindowDim> windows,
                                           SmallVector<Value> &inputs,
                                           SmallVector<AffineMap> &maps) {
  for (auto [input, map] : llvm::zip(inputs, maps)) {
    SmallVector<std::pair<unsigned, const WindowDim *>> spread;
    FailureOr<AffineMap> slid = slideMap(map, windows, spread);
    if (failed(slid))
      return emitError() << "an operand reads the position of a sliding "
                            "window otherwise than through the window";
    if (!spread.empty())
      input = spreadValue(builder, loc, input, spread);
    map = *slid;
  }
  return success();
}

/// For an extremum result: how many iterations attain it, per element.
Value LinalgAdjoint::countTies(const ResultAdjoint &result) {
  OpResult value = result.result;
  SmallVector<BlockArgument> args = argumentsUsedBy(result.payloadValue);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  appendOperands(args, inputs, maps);
  AffineMap resultMap = op.getIndexingMapMatchingResult(value);
  inputs.push_back(value);
  maps.push_back(resultMap);
  bindAllLoops(inputs, maps, resultMap);
  maps.push_back(resultMap);
  Value init = createZeros(builder, loc, value.getType());
  Block *payload = op.getBlock();
  auto count = linalg::GenericOp::create(
      builder, loc, init.getType(), inputs, init, maps,
      op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location bodyLoc, ValueRange blockArgs) {
        IRMapping mapping;
        for (auto [arg, local] : llvm::zip(args, blockArgs))
          mapping.map(arg, local);
        clonePayload(b, *payload, result.payloadValue, mapping);
        Value attains = arith::CmpFOp::create(
            b, bodyLoc, arith::CmpFPredicate::OEQ,
            mapping.lookup(result.payloadValue), blockArgs[args.size()]);
        Type type = blockArgs.back().getType();
        Value one = arith::SelectOp::create(
            b, bodyLoc, attains, floatConstant(b, bodyLoc, type, 1.0),
            floatConstant(b, bodyLoc, type, 0.0));
        linalg::YieldOp::create(
            b, bodyLoc,
            arith::AddFOp::create(b, bodyLoc, blockArgs.back(), one)
                .getResult());
      });
  return count.getResult(0);
}

/// The gradient of operand `target` from the results' gradients: null when
/// it is identically zero.
/// `generic`'s result, computed without the inputs its body does not read:
/// the derivative of a sum reads none of its terms, but the payload
/// differentiated reads them all. Every input of a derivative is a value
/// the forward saves for the backward (and copies out on every call), so
/// such inputs go (with the payload's ops the derivative left dead), unless
/// one binds a loop no other operand indexes.
static Value withoutUnreadInputs(OpBuilder &builder,
                                 linalg::GenericOp generic) {
  // The payload's ops the derivative does not need are left dead.
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(*generic.getBlock())))
    if (isOpTriviallyDead(&op))
      op.erase();
  SmallVector<OpOperand *> unread;
  for (OpOperand *input : generic.getDpsInputOperands())
    if (generic.getMatchingBlockArgument(input).use_empty()) {
      unread.push_back(input);
      if (!generic.canOpOperandsBeDropped(unread))
        unread.pop_back();
    }
  if (unread.empty())
    return generic.getResult(0);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  BitVector erased(generic.getBlock()->getNumArguments());
  for (OpOperand &operand : generic->getOpOperands()) {
    if (llvm::is_contained(unread, &operand)) {
      erased.set(generic.getMatchingBlockArgument(&operand).getArgNumber());
      continue;
    }
    if (generic.isDpsInput(&operand))
      inputs.push_back(operand.get());
    maps.push_back(generic.getMatchingIndexingMap(&operand));
  }
  auto pruned = linalg::GenericOp::create(
      builder, generic.getLoc(), generic.getResultTypes(), inputs,
      generic.getDpsInits(), maps, generic.getIteratorTypesArray());
  pruned.getRegion().takeBody(generic.getRegion());
  pruned.getBlock()->eraseArguments(erased);
  generic.erase();
  return pruned.getResult(0);
}

/// The sliding windows `target` is read through; none for an operand
/// indexed by a projected permutation.
FailureOr<SmallVector<WindowDim>> LinalgAdjoint::windowsOf(OpOperand &target) {
  AffineMap targetMap = op.getMatchingIndexingMap(&target);
  if (targetMap.isProjectedPermutation(/*allowZeroInResults=*/true))
    return SmallVector<WindowDim>();
  FailureOr<SmallVector<WindowDim>> found = findWindows(
      targetMap, cast<RankedTensorType>(target.get().getType()).getShape());
  if (failed(found) || found->empty())
    return emitError() << "operand #" << target.getOperandNumber()
                       << " is not indexed by a projected permutation or "
                          "sliding windows";
  if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
    return emitError() << "its body reads loop indices while operand #"
                       << target.getOperandNumber()
                       << " is read through sliding windows";
  return found;
}

/// Whether the derivative of `result` reads the forward's result instead of
/// recomputing it: for a transcendental whose rule is written with its own
/// value (d exp(x) = exp(x) dx), computed by an elementwise op from values
/// of the stage. Those values were saved only to recompute it, and the one
/// result takes their place (the forward's exp(x - max) of a softmax, which
/// its normalisation's derivative reads anyway, instead of x and max). An
/// op reading stage arguments (data, parameters) recomputes: they are at
/// hand in the backward without saving.
bool LinalgAdjoint::readsForwardResult(const ResultAdjoint &result) {
  if (result.combiner != Combiner::None)
    return false;
  Operation *def = result.payloadValue.getDefiningOp();
  if (!isa_and_nonnull<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::TanhOp,
                       math::SqrtOp, math::RsqrtOp>(def))
    return false;
  return llvm::none_of(
      argumentsUsedBy(result.payloadValue), [&](BlockArgument arg) {
        return isa<BlockArgument>(op.getMatchingOpOperand(arg)->get());
      });
}

/// Whether the payload divides by `arg`, an input broadcast along some
/// loop (a softmax's row sums): fewer elements than iterations.
bool LinalgAdjoint::isBroadcastDenominator(BlockArgument arg) {
  OpOperand *operand = op.getMatchingOpOperand(arg);
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (!op.isDpsInput(operand) || !isa<FloatType>(arg.getType()) ||
      !map.isProjectedPermutation(/*allowZeroInResults=*/true) ||
      llvm::all_of(llvm::seq(op.getNumLoops()),
                   [&](unsigned loop) { return map.isFunctionOfDim(loop); }))
    return false;
  return llvm::any_of(arg.getUsers(), [&](Operation *user) {
    auto div = dyn_cast<arith::DivFOp>(user);
    return div && div.getRhs() == arg;
  });
}

/// `1 / r` for the operand `r` that `arg` stands for, built once per op:
/// the derivatives of `x / r` multiply by it, one division per element of
/// `r` instead of two per iteration.
Value LinalgAdjoint::reciprocalOf(BlockArgument arg) {
  Value &reciprocal = reciprocals[arg];
  if (reciprocal)
    return reciprocal;
  Value denominator = op.getMatchingOpOperand(arg)->get();
  auto type = cast<RankedTensorType>(denominator.getType());
  Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                        type.getElementType());
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  reciprocal =
      linalg::GenericOp::create(
          builder, loc, type, denominator, empty,
          ArrayRef<AffineMap>{identity, identity}, parallel,
          [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
            Value one = floatConstant(b, bodyLoc, args[0].getType(), 1.0);
            linalg::YieldOp::create(
                b, bodyLoc,
                Value(arith::DivFOp::create(b, bodyLoc, one, args[0])));
          })
          .getResult(0);
  return reciprocal;
}

FailureOr<Value> LinalgAdjoint::operandGradient(OpOperand &target) {
  AffineMap targetMap = op.getMatchingIndexingMap(&target);
  // An operand read through sliding windows (a convolution's or pooling's
  // input) gets its gradient over loops in which each window's position is
  // replaced by the operand's coordinate; the result gradient is spread by
  // the stride and padded, so the sum runs over the window's offsets.
  FailureOr<SmallVector<WindowDim>> windows = windowsOf(target);
  if (failed(windows))
    return failure();
  SmallVector<std::pair<unsigned, const WindowDim *>> unused;
  AffineMap gradMap =
      windows->empty() ? targetMap : *slideMap(targetMap, *windows, unused);
  SmallVector<const ResultAdjoint *> seeded;
  SmallVector<Value> values;
  for (const ResultAdjoint &result : results)
    if (result.grad) {
      seeded.push_back(&result);
      values.push_back(result.payloadValue);
    }
  SmallVector<BlockArgument> args = argumentsUsedBy(values);
  BlockArgument wrt = op.getMatchingBlockArgument(&target);
  if (!llvm::is_contained(args, wrt))
    return Value();

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  appendOperands(args, inputs, maps);
  // Per seeded result: its gradient, and for an extremum the result and the
  // tie-split gradient, all indexed like the result.
  for (const ResultAdjoint *result : seeded) {
    AffineMap resultMap = op.getIndexingMapMatchingResult(result->result);
    if (result->combiner == Combiner::Extremum) {
      inputs.append({result->result, result->tieWeight});
      maps.append({resultMap, resultMap});
    } else {
      inputs.push_back(result->grad);
      maps.push_back(resultMap);
    }
  }
  // Results whose derivative reads them: the forward's, not a recompute.
  SmallVector<std::pair<Value, unsigned>> forwardResults;
  if (windows->empty())
    for (const ResultAdjoint *result : seeded)
      if (readsForwardResult(*result)) {
        forwardResults.push_back({result->payloadValue, inputs.size()});
        inputs.push_back(result->result);
        maps.push_back(op.getIndexingMapMatchingResult(result->result));
      }
  // Reciprocals of broadcast denominators, indexed like them.
  SmallVector<std::pair<Value, unsigned>> inverted;
  if (windows->empty())
    for (BlockArgument arg : args)
      if (isBroadcastDenominator(arg)) {
        inverted.push_back({arg, inputs.size()});
        inputs.push_back(reciprocalOf(arg));
        maps.push_back(op.getMatchingIndexingMap(op.getMatchingOpOperand(arg)));
      }
  bindAllLoops(inputs, maps, gradMap);
  if (!windows->empty() && failed(slideOperands(*windows, inputs, maps)))
    return failure();
  maps.push_back(gradMap);
  SmallVector<utils::IteratorType> iterators;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    iterators.push_back(gradMap.isFunctionOfDim(loop)
                            ? utils::IteratorType::parallel
                            : utils::IteratorType::reduction);
  Value init = createZeros(builder, loc, target.get().getType());
  Block *payload = op.getBlock();
  LogicalResult status = success();
  bool isZero = true;
  auto generic = linalg::GenericOp::create(
      builder, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange blockArgs) {
        IRMapping mapping;
        for (auto [arg, local] : llvm::zip(args, blockArgs))
          mapping.map(arg, local);
        Value acc = blockArgs.back();
        DenseMap<Value, Value> forward;
        for (auto [value, position] : forwardResults)
          forward[value] = blockArgs[position];
        DenseMap<Value, Value> reciprocalArgs;
        for (auto [value, position] : inverted)
          reciprocalArgs[value] = blockArgs[position];
        FailureOr<SmallVector<Value>> derivatives = differentiatePayload(
            b, *payload, wrt, values, mapping, forward, reciprocalArgs);
        if (failed(derivatives)) {
          status = failure();
          linalg::YieldOp::create(b, bodyLoc, acc);
          return;
        }
        unsigned next = args.size();
        for (auto [result, derivative] : llvm::zip(seeded, *derivatives)) {
          bool isExtremum = result->combiner == Combiner::Extremum;
          Value weight = blockArgs[next];
          next += isExtremum ? 2 : 1;
          if (!derivative)
            continue;
          if (isExtremum) {
            Value attains = arith::CmpFOp::create(
                b, bodyLoc, arith::CmpFPredicate::OEQ,
                mapping.lookup(result->payloadValue), weight);
            weight = arith::SelectOp::create(
                b, bodyLoc, attains, blockArgs[next - 1],
                floatConstant(b, bodyLoc, weight.getType(), 0.0));
          }
          isZero = false;
          Value term = arith::MulFOp::create(b, bodyLoc, weight, derivative);
          acc = arith::AddFOp::create(b, bodyLoc, acc, term);
        }
        linalg::YieldOp::create(b, bodyLoc, acc);
      });
  if (failed(status))
    return emitError() << "its body uses an operation pp-derive-backward has "
                          "no rule for";
  if (isZero) {
    generic.erase();
    return Value();
  }
  return withoutUnreadInputs(builder, generic);
}

LogicalResult
LinalgAdjoint::build(ArrayRef<Value> resultGrads,
                     function_ref<bool(Value)> needsGradient,
                     function_ref<void(Value, Value)> accumulate) {
  for (OpResult result : op->getResults()) {
    // An integer result (the index of a max beside it) carries no gradient,
    // however it folds.
    if (!isa<FloatType>(getElementTypeOrSelf(result.getType()))) {
      results.push_back(ResultAdjoint{result});
      continue;
    }
    FailureOr<ResultAdjoint> analyzed = analyzeResult(result);
    if (failed(analyzed))
      return failure();
    analyzed->grad = resultGrads[result.getResultNumber()];
    if (analyzed->grad && analyzed->combiner == Combiner::Extremum) {
      Value ties = countTies(*analyzed);
      Value empty = tensor::EmptyOp::create(
          builder, loc, cast<RankedTensorType>(ties.getType()).getShape(),
          cast<RankedTensorType>(ties.getType()).getElementType());
      analyzed->tieWeight =
          linalg::DivOp::create(builder, loc, ties.getType(),
                                ValueRange{analyzed->grad, ties}, empty)
              .getResult(0);
    }
    results.push_back(*analyzed);
  }
  for (OpOperand &operand : op->getOpOperands()) {
    if (!needsGradient(operand.get()))
      continue;
    if (!isa<RankedTensorType>(operand.get().getType()))
      return emitError() << "operand #" << operand.getOperandNumber()
                         << " is a scalar that depends on a weight";
    if (op.isDpsInit(&operand) && op.getNumReductionLoops() > 0) {
      // A reduction's init enters its result once: through a sum as is,
      // through a max or min only where it wins, which is not supported.
      const ResultAdjoint &result =
          results[op.getTiedOpResult(&operand).getResultNumber()];
      if (result.combiner == Combiner::Extremum)
        return emitError() << "it takes a max or min into an init that needs "
                              "a gradient";
      if (result.grad)
        accumulate(operand.get(), result.grad);
      continue;
    }
    FailureOr<Value> grad = operandGradient(operand);
    if (failed(grad))
      return failure();
    if (*grad)
      accumulate(operand.get(), *grad);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

/// Slices must have static offsets, sizes and strides: their adjoints are
/// rebuilt in other functions, which only receive tensors.
static LogicalResult checkStaticSlice(OffsetSizeAndStrideOpInterface slice,
                                      int64_t stage) {
  if (llvm::any_of(llvm::concat<const int64_t>(slice.getStaticOffsets(),
                                               slice.getStaticSizes(),
                                               slice.getStaticStrides()),
                   ShapedType::isDynamic))
    return slice->emitOpError("in stage ")
           << stage
           << " cannot be differentiated: offsets, sizes and strides "
              "must be static";
  return success();
}

/// The adjoint of a tensor op that moves data: the same data moved back.
/// Returns nullopt when `op` is not such an op.
static std::optional<LogicalResult>
buildTensorAdjoint(OpBuilder &b, Operation *op, Value grad,
                   function_ref<bool(Value)> needsGradient,
                   function_ref<void(Value, Value)> accumulate, int64_t stage) {
  Location loc = op->getLoc();
  auto toward = [&](Value operand, llvm::function_ref<Value()> build) {
    if (needsGradient(operand))
      accumulate(operand, build());
  };
  // An expand_shape's gradient is the collapse_shape with the same
  // reassociation, and the other way round.
  auto reshapeBack = [&](auto reshape, auto inverse) {
    toward(reshape.getSrc(), [&] {
      return decltype(inverse)::create(b, loc, reshape.getSrcType(), grad,
                                       reshape.getReassociationIndices());
    });
    return success();
  };
  // `source` written into `dest` where `slice` takes or puts its part.
  auto insertAt = [&](OffsetSizeAndStrideOpInterface slice, Value source,
                      Value dest) -> Value {
    return tensor::InsertSliceOp::create(
        b, loc, source, dest, slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
  };
  // The part of `grad` of type `type` at `offsets`.
  auto gradPart = [&](RankedTensorType type,
                      ArrayRef<OpFoldResult> offsets) -> Value {
    return tensor::ExtractSliceOp::create(
        b, loc, type, grad, offsets,
        getAsIndexOpFoldResult(b.getContext(), type.getShape()),
        SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
  };
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](tensor::ExpandShapeOp expand) {
        return reshapeBack(expand, tensor::CollapseShapeOp());
      })
      .Case([&](tensor::CollapseShapeOp collapse) {
        return reshapeBack(collapse, tensor::ExpandShapeOp());
      })
      .Case([&](tensor::ReshapeOp reshape) {
        toward(reshape.getSource(), [&]() -> Value {
          auto type = cast<RankedTensorType>(reshape.getSource().getType());
          auto shapeType =
              RankedTensorType::get({type.getRank()}, b.getIndexType());
          Value shape = arith::ConstantOp::create(
              b, loc, DenseIntElementsAttr::get(shapeType, type.getShape()));
          return tensor::ReshapeOp::create(b, loc, type, grad, shape);
        });
        return success();
      })
      .Case([&](tensor::ExtractSliceOp slice) -> LogicalResult {
        if (failed(checkStaticSlice(slice, stage)))
          return failure();
        toward(slice.getSource(), [&] {
          return insertAt(slice, grad,
                          createZeros(b, loc, slice.getSourceType()));
        });
        return success();
      })
      .Case([&](tensor::InsertSliceOp slice) -> LogicalResult {
        if (failed(checkStaticSlice(slice, stage)))
          return failure();
        toward(slice.getSource(), [&] {
          return tensor::ExtractSliceOp::create(
              b, loc, slice.getSourceType(), grad, slice.getMixedOffsets(),
              slice.getMixedSizes(), slice.getMixedStrides());
        });
        toward(slice.getDest(), [&] {
          return insertAt(slice, createZeros(b, loc, slice.getSourceType()),
                          grad);
        });
        return success();
      })
      .Case([&](tensor::ConcatOp concat) {
        int64_t offset = 0;
        for (Value input : concat.getInputs()) {
          auto type = cast<RankedTensorType>(input.getType());
          SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
          offsets[concat.getDim()] = b.getIndexAttr(offset);
          toward(input, [&] { return gradPart(type, offsets); });
          offset += type.getDimSize(concat.getDim());
        }
        return success();
      })
      .Case([&](tensor::PadOp pad) -> LogicalResult {
        if (llvm::any_of(llvm::concat<const int64_t>(pad.getStaticLow(),
                                                     pad.getStaticHigh()),
                         ShapedType::isDynamic))
          return pad.emitOpError("in stage ")
                 << stage
                 << " cannot be differentiated: padding must be static";
        toward(pad.getSource(), [&] {
          return gradPart(pad.getSourceType(), pad.getMixedLowPad());
        });
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult mlir::pp::buildAdjoint(
    OpBuilder &builder, Operation *op, ArrayRef<Value> resultGrads,
    function_ref<bool(Value)> needsGradient,
    function_ref<void(Value, Value)> accumulate, int64_t stage) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return LinalgAdjoint(builder, linalgOp, stage)
        .build(resultGrads, needsGradient, accumulate);
  if (op->getNumResults() == 1) {
    std::optional<LogicalResult> moved = buildTensorAdjoint(
        builder, op, resultGrads[0], needsGradient, accumulate, stage);
    if (moved)
      return *moved;
  }
  return emitError(op->getLoc(), "pp-derive-backward cannot differentiate '")
         << op->getName() << "' in stage " << stage
         << " (see docs/Autodiff.md for the supported ops)";
}
