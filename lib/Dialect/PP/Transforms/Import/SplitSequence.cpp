//===- SplitSequence.cpp - compute a training step in sequence slices -----===//
//
// Rewrites a training step so that it computes each of k slices of the
// sequence on its own, as Seq1F1B runs them: token-wise ops on the slice's
// tokens, causal attention of a slice's queries over the keys and values of
// the slices before it and its own, and sums over the sequence (the loss)
// as the sum of the slices' parts.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Import/Passes.h"
#include "pp/Scheduling/SequenceSlices.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSPLITSEQUENCE
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;
using sched::SequenceCost;

namespace {

/// What a dimension (of a value) or a loop (of a linalg.generic) is along
/// the sequence. Slice j of a query dimension is the slice's own positions
/// [start_j, end_j); of a key dimension, the prefix [0, end_j) that the
/// slice's queries attend to.
enum class SeqRole { None, Query, Key };

/// A value computed in slices: one piece per slice, or (`partialSum`) parts
/// whose sum is the value, for a sum over the sequence.
struct SlicedValue {
  SmallVector<SeqRole> dims;
  SmallVector<Value> pieces;
  bool partialSum = false;
};

/// The loops (key, query) of a causal mask `index(key) <= index(query)`
/// (or `<`) in the body of `op`, if it has one.
static std::optional<std::pair<unsigned, unsigned>>
findCausalMask(linalg::GenericOp op) {
  std::optional<std::pair<unsigned, unsigned>> mask;
  op.getBody()->walk([&](arith::CmpIOp cmp) {
    auto lhs = cmp.getLhs().getDefiningOp<linalg::IndexOp>();
    auto rhs = cmp.getRhs().getDefiningOp<linalg::IndexOp>();
    if (!lhs || !rhs || lhs.getDim() == rhs.getDim())
      return;
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::ule:
    case arith::CmpIPredicate::ult:
    case arith::CmpIPredicate::sle:
    case arith::CmpIPredicate::slt:
      mask = {lhs.getDim(), rhs.getDim()};
      break;
    case arith::CmpIPredicate::uge:
    case arith::CmpIPredicate::ugt:
    case arith::CmpIPredicate::sge:
    case arith::CmpIPredicate::sgt:
      mask = {rhs.getDim(), lhs.getDim()};
      break;
    default:
      break;
    }
  });
  return mask;
}

/// The loop that `map` reads dimension `dim` with, if it is a plain loop.
static std::optional<unsigned> loopOf(AffineMap map, unsigned dim) {
  if (auto expr = dyn_cast<AffineDimExpr>(map.getResult(dim)))
    return expr.getPosition();
  return std::nullopt;
}

static std::string exprString(AffineExpr expr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  expr.print(os);
  return text;
}

/// Whether `value` is a zero-filled `tensor.empty` (a sum's start).
static bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) &&
         fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

/// Whether `op` sums into its output (its yield adds to the output).
static bool isSum(linalg::GenericOp op) {
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  Value out = op.getBody()->getArgument(op.getNumDpsInputs());
  return add && (add.getLhs() == out || add.getRhs() == out);
}

/// Rewrites one function into slices.
class SequenceSlicer {
public:
  SequenceSlicer(ArrayRef<int64_t> bounds, unsigned seqDim)
      : bounds(bounds), seqDim(seqDim) {}

  LogicalResult run(func::FuncOp func);
  /// The cost of the ops sliced by `run`, from their whole-sequence forms.
  const SequenceCost &getCost() const { return cost; }

private:
  unsigned numSlices() const { return bounds.size() - 1; }
  int64_t start(unsigned j) const { return bounds[j]; }
  int64_t end(unsigned j) const { return bounds[j + 1]; }
  int64_t extent(SeqRole role, unsigned j) const {
    return role == SeqRole::Query ? end(j) - start(j) : end(j);
  }
  int64_t offset(SeqRole role, unsigned j) const {
    return role == SeqRole::Query ? start(j) : 0;
  }

  LogicalResult sliceArgument(OpBuilder &b, BlockArgument arg);
  LogicalResult visitGeneric(linalg::GenericOp op);
  LogicalResult visitReturn(func::ReturnOp op);
  FailureOr<SmallVector<SeqRole>> loopRoles(linalg::GenericOp op);
  FailureOr<unsigned> keyLoopFromUsers(linalg::GenericOp op);
  FailureOr<Value> inputPiece(OpBuilder &b, linalg::GenericOp op,
                              OpOperand &operand, ArrayRef<SeqRole> roles,
                              unsigned j);
  Value slicePart(OpBuilder &b, Location loc, Value value,
                  ArrayRef<std::pair<unsigned, SeqRole>> dims, unsigned j);
  Value prefix(OpBuilder &b, Location loc, Value value, unsigned dim,
               unsigned j);
  Value freshInit(OpBuilder &b, Value init, RankedTensorType type);
  Value sumParts(OpBuilder &b, Location loc, ArrayRef<Value> parts);
  LogicalResult materializeSums(Operation *op);

  void addCost(linalg::GenericOp op, ArrayRef<SeqRole> roles);

  ArrayRef<int64_t> bounds;
  unsigned seqDim;
  SequenceCost cost;
  DenseMap<Value, SlicedValue> sliced;
  DenseMap<std::pair<Value, unsigned>, Value> prefixes;
};

} // namespace

/// `value` restricted along `dims` to slice `j`'s part of each role.
Value SequenceSlicer::slicePart(OpBuilder &b, Location loc, Value value,
                                ArrayRef<std::pair<unsigned, SeqRole>> dims,
                                unsigned j) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(b.getContext(), type.getShape());
  SmallVector<int64_t> shape(type.getShape());
  for (auto [dim, role] : dims) {
    offsets[dim] = b.getIndexAttr(offset(role, j));
    sizes[dim] = b.getIndexAttr(extent(role, j));
    shape[dim] = extent(role, j);
  }
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      offsets, sizes,
      SmallVector<OpFoldResult>(type.getRank(), b.getIndexAttr(1)));
}

/// Data arguments are cut along the sequence into their slices.
LogicalResult SequenceSlicer::sliceArgument(OpBuilder &b, BlockArgument arg) {
  auto type = cast<RankedTensorType>(arg.getType());
  SlicedValue &value = sliced[arg];
  value.dims.assign(type.getRank(), SeqRole::None);
  value.dims[seqDim] = SeqRole::Query;
  // Each piece says its slice: the ops that read it are that slice's
  // (pp-split-slice-stages cuts the stages along these marks).
  for (unsigned j = 0; j < numSlices(); ++j) {
    Value piece =
        slicePart(b, arg.getLoc(), arg, {{seqDim, SeqRole::Query}}, j);
    piece.getDefiningOp()->setAttr(kSliceAttr, b.getI64IntegerAttr(j));
    value.pieces.push_back(piece);
  }
  return success();
}

/// The keys of slices 0..j of `value` (sliced along `dim` as queries)
/// concatenated: what slice j's queries attend to.
Value SequenceSlicer::prefix(OpBuilder &b, Location loc, Value value,
                             unsigned dim, unsigned j) {
  Value &cached = prefixes[{value, j}];
  if (cached)
    return cached;
  ArrayRef<Value> pieces = ArrayRef(sliced[value].pieces).take_front(j + 1);
  cached = pieces.size() == 1
               ? pieces[0]
               : tensor::ConcatOp::create(b, loc, dim, pieces).getResult();
  return cached;
}

/// A destination like `init` (a `tensor.empty`, maybe filled) of `type`.
Value SequenceSlicer::freshInit(OpBuilder &b, Value init,
                                RankedTensorType type) {
  Location loc = init.getLoc();
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return linalg::FillOp::create(b, loc, fill.getInputs()[0], empty)
        .getResult(0);
  return empty;
}

/// The sum of `parts`, added in slice order.
Value SequenceSlicer::sumParts(OpBuilder &b, Location loc,
                               ArrayRef<Value> parts) {
  Value sum = parts.front();
  auto type = cast<RankedTensorType>(sum.getType());
  auto identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  for (Value part : parts.drop_front()) {
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    sum = linalg::GenericOp::create(
              b, loc, type, ValueRange{sum, part}, init,
              SmallVector<AffineMap>(3, identity), iterators,
              [](OpBuilder &nb, Location nloc, ValueRange args) {
                Value add = arith::AddFOp::create(nb, nloc, args[0], args[1]);
                linalg::YieldOp::create(nb, nloc, add);
              })
              .getResult(0);
  }
  return sum;
}

/// Replaces the operands of `op` that are sums over slices by the sums.
LogicalResult SequenceSlicer::materializeSums(Operation *op) {
  OpBuilder b(op);
  for (OpOperand &operand : op->getOpOperands()) {
    auto it = sliced.find(operand.get());
    if (it == sliced.end() || !it->second.partialSum)
      continue;
    operand.set(sumParts(b, op->getLoc(), it->second.pieces));
  }
  return success();
}

/// The key loop of an op with two query loops and no mask of its own
/// (attention scores): the key loop of the causal mask its users apply.
FailureOr<unsigned> SequenceSlicer::keyLoopFromUsers(linalg::GenericOp op) {
  for (OpOperand &use : op->getResult(0).getUses()) {
    auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
    std::optional<std::pair<unsigned, unsigned>> mask =
        user ? findCausalMask(user) : std::nullopt;
    if (!mask)
      continue;
    AffineMap userMap = user.getMatchingIndexingMap(&use);
    AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
    for (unsigned dim = 0; dim < userMap.getNumResults(); ++dim)
      if (loopOf(userMap, dim) == mask->first)
        if (std::optional<unsigned> loop = loopOf(outMap, dim))
          return *loop;
  }
  return op.emitOpError("mixes two positions of the sequence without a "
                        "causal mask (index(key) <= index(query)) here or in "
                        "its users; only causal attention can be computed in "
                        "sequence slices");
}

/// What each loop of `op` is along the sequence, from its sliced operands.
FailureOr<SmallVector<SeqRole>>
SequenceSlicer::loopRoles(linalg::GenericOp op) {
  SmallVector<SeqRole> roles(op.getNumLoops(), SeqRole::None);
  // Keys first: a query slice read by a key loop attends over the prefix.
  for (SeqRole pass : {SeqRole::Key, SeqRole::Query}) {
    for (OpOperand *operand : op.getDpsInputOperands()) {
      auto it = sliced.find(operand->get());
      if (it == sliced.end())
        continue;
      AffineMap map = op.getMatchingIndexingMap(operand);
      for (auto [dim, role] : llvm::enumerate(it->second.dims)) {
        if (role != pass)
          continue;
        std::optional<unsigned> loop = loopOf(map, dim);
        if (!loop)
          return op.emitOpError("reads the sequence dimension ")
                 << dim << " of operand #" << operand->getOperandNumber()
                 << " through " << exprString(map.getResult(dim))
                 << "; sequence slices need a plain loop there";
        if (roles[*loop] == SeqRole::None)
          roles[*loop] = role;
      }
    }
  }
  SmallVector<unsigned> queries;
  for (auto [loop, role] : llvm::enumerate(roles))
    if (role == SeqRole::Query)
      queries.push_back(loop);
  if (queries.size() > 2)
    return op.emitOpError("mixes more than two positions of the sequence");
  if (queries.size() == 2) {
    std::optional<std::pair<unsigned, unsigned>> own = findCausalMask(op);
    FailureOr<unsigned> key =
        own ? FailureOr<unsigned>(own->first) : keyLoopFromUsers(op);
    if (failed(key))
      return failure();
    if (!llvm::is_contained(queries, *key))
      return op.emitOpError("has a causal mask over loop ")
             << *key << ", which does not run over the sequence";
    roles[*key] = SeqRole::Key;
  }
  return roles;
}

/// Input `operand` of `op` as slice `j` of the op reads it.
FailureOr<Value> SequenceSlicer::inputPiece(OpBuilder &b, linalg::GenericOp op,
                                            OpOperand &operand,
                                            ArrayRef<SeqRole> roles,
                                            unsigned j) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  Value value = operand.get();
  auto it = sliced.find(value);
  if (it != sliced.end()) {
    const SlicedValue &known = it->second;
    for (auto [dim, role] : llvm::enumerate(known.dims)) {
      if (role == SeqRole::None)
        continue;
      SeqRole loopRole = roles[*loopOf(map, dim)];
      if (role == loopRole)
        continue;
      // Queries of earlier slices read as keys: the cached prefix.
      if (role == SeqRole::Query && loopRole == SeqRole::Key &&
          llvm::count(known.dims, SeqRole::Query) == 1 &&
          !llvm::is_contained(known.dims, SeqRole::Key))
        return prefix(b, op.getLoc(), value, dim, j);
      return op.emitOpError("reads operand #")
             << operand.getOperandNumber()
             << " in a way sequence slices cannot express";
    }
    return known.pieces[j];
  }
  // A whole-sequence value (learned positions, a mask table): its part.
  SmallVector<std::pair<unsigned, SeqRole>> dims;
  for (unsigned dim = 0; dim < map.getNumResults(); ++dim) {
    std::optional<unsigned> loop = loopOf(map, dim);
    if (loop && roles[*loop] != SeqRole::None)
      dims.push_back({dim, roles[*loop]});
    else if (!loop && llvm::any_of(llvm::enumerate(roles), [&](auto loopRole) {
               return loopRole.value() != SeqRole::None &&
                      map.getResult(dim).isFunctionOfDim(loopRole.index());
             }))
      return op.emitOpError("reads operand #")
             << operand.getOperandNumber() << " at "
             << exprString(map.getResult(dim))
             << "; sequence slices need a plain loop there";
  }
  return dims.empty() ? value : slicePart(b, op.getLoc(), value, dims, j);
}

/// Adds `op`'s work (iterations times body ops) per token, or per pair of
/// query and key where it runs over keys.
void SequenceSlicer::addCost(linalg::GenericOp op, ArrayRef<SeqRole> roles) {
  double work = std::max<size_t>(op.getBody()->getOperations().size() - 1, 1);
  for (int64_t range : op.getStaticLoopRanges())
    work *= range;
  double length = bounds.back();
  if (llvm::is_contained(roles, SeqRole::Key))
    cost.perPair += work / (length * length);
  else
    cost.perToken += work / length;
}

LogicalResult SequenceSlicer::visitGeneric(linalg::GenericOp op) {
  if (llvm::none_of(op.getDpsInputs(),
                    [&](Value input) { return sliced.count(input); }))
    return success();
  for (Value init : op.getDpsInits())
    if (sliced.count(init) || !(init.getDefiningOp<tensor::EmptyOp>() ||
                                init.getDefiningOp<linalg::FillOp>()))
      return op.emitOpError("has a destination that is not a tensor.empty "
                            "or a fill; sequence slices cannot split it");
  FailureOr<SmallVector<SeqRole>> roles = loopRoles(op);
  if (failed(roles))
    return failure();
  addCost(op, *roles);
  // Result roles; a reduction over queries leaves per-slice parts of a sum.
  SmallVector<SlicedValue> results(op->getNumResults());
  for (OpResult result : op->getResults()) {
    AffineMap map = op.getIndexingMapMatchingResult(result);
    SlicedValue &out = results[result.getResultNumber()];
    for (unsigned dim = 0; dim < map.getNumResults(); ++dim) {
      std::optional<unsigned> loop = loopOf(map, dim);
      out.dims.push_back(loop ? (*roles)[*loop] : SeqRole::None);
    }
    for (auto [loop, role] : llvm::enumerate(*roles)) {
      if (role != SeqRole::Query ||
          op.getIteratorTypesArray()[loop] != utils::IteratorType::reduction)
        continue;
      if (op->getNumResults() != 1 || !isSum(op) ||
          !isZeroFill(op.getDpsInits()[0]) ||
          llvm::is_contained(out.dims, SeqRole::Key))
        return op.emitOpError("reduces over the sequence other than by a "
                              "sum from zero; sequence slices cannot split "
                              "it");
      out.partialSum = true;
    }
  }
  OpBuilder b(op);
  for (unsigned j = 0; j < numSlices(); ++j) {
    // Operands by position: one value may be read as queries and as keys.
    SmallVector<Value> operands;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      FailureOr<Value> piece = inputPiece(b, op, *operand, *roles, j);
      if (failed(piece))
        return failure();
      operands.push_back(*piece);
    }
    SmallVector<Type> types;
    for (auto [i, init] : llvm::enumerate(op.getDpsInits())) {
      auto type = cast<RankedTensorType>(init.getType());
      SmallVector<int64_t> shape(type.getShape());
      for (auto [dim, role] : llvm::enumerate(results[i].dims))
        if (role != SeqRole::None)
          shape[dim] = extent(role, j);
      auto sliceType = RankedTensorType::get(shape, type.getElementType());
      operands.push_back(freshInit(b, init, sliceType));
      types.push_back(sliceType);
    }
    Operation *clone = b.clone(*op);
    clone->setOperands(operands);
    for (auto [result, type] : llvm::zip(clone->getResults(), types))
      result.setType(type);
    // Positions of queries are the slice's own, offset by its start.
    clone->walk([&](linalg::IndexOp index) {
      if ((*roles)[index.getDim()] != SeqRole::Query || start(j) == 0)
        return;
      OpBuilder ib(index->getContext());
      ib.setInsertionPointAfter(index);
      Value shifted = arith::AddIOp::create(
          ib, index.getLoc(), index,
          arith::ConstantIndexOp::create(ib, index.getLoc(), start(j)));
      index.getResult().replaceAllUsesExcept(shifted, shifted.getDefiningOp());
    });
    for (auto [i, result] : llvm::enumerate(clone->getResults()))
      results[i].pieces.push_back(result);
  }
  for (auto [result, value] : llvm::zip(op->getResults(), results))
    sliced[result] = std::move(value);
  return success();
}

/// Returned values are whole again: sums added, query slices concatenated.
LogicalResult SequenceSlicer::visitReturn(func::ReturnOp op) {
  OpBuilder b(op);
  for (OpOperand &operand : op->getOpOperands()) {
    auto it = sliced.find(operand.get());
    if (it == sliced.end())
      continue;
    const SlicedValue &value = it->second;
    if (value.partialSum) {
      operand.set(sumParts(b, op.getLoc(), value.pieces));
      continue;
    }
    auto query = llvm::find(value.dims, SeqRole::Query);
    if (llvm::count(value.dims, SeqRole::None) + 1 !=
            static_cast<int64_t>(value.dims.size()) ||
        query == value.dims.end())
      return op.emitOpError("returns result #")
             << operand.getOperandNumber()
             << " with keys of the sequence; sequence slices cannot return it";
    operand.set(tensor::ConcatOp::create(
        b, op.getLoc(), query - value.dims.begin(), value.pieces));
  }
  return success();
}

LogicalResult SequenceSlicer::run(func::FuncOp func) {
  SmallVector<Operation *> ops = llvm::map_to_vector(
      func.front().getOperations(), [](Operation &op) { return &op; });
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  for (BlockArgument arg : func.getArguments())
    if (!isParameter(func, arg.getArgNumber()))
      if (failed(sliceArgument(b, arg)))
        return failure();
  for (Operation *op : ops) {
    bool readsSlices = llvm::any_of(op->getOperands(), [&](Value operand) {
      return sliced.count(operand);
    });
    if (!readsSlices)
      continue;
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case([&](linalg::GenericOp generic) {
              if (failed(materializeSums(generic)))
                return failure();
              return visitGeneric(generic);
            })
            .Case([&](func::ReturnOp ret) { return visitReturn(ret); })
            .Default([](Operation *other) {
              return other->emitOpError(
                  "reads the sequence, and pp-split-sequence computes only "
                  "linalg.generic ops in sequence slices");
            });
    if (failed(result))
      return failure();
  }
  // The whole-sequence ops are now dead.
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  return success();
}

namespace {
struct SplitSequencePass : pp::impl::PPSplitSequenceBase<SplitSequencePass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = lookupTrainingStep(getOperation(), function);
    if (!func)
      return signalPassFailure();
    if (numSlices < 1) {
      func.emitError("slices must be at least 1, got ") << numSlices.getValue();
      return signalPassFailure();
    }
    if (numSlices == 1)
      return;
    std::optional<int64_t> length;
    for (BlockArgument arg : func.getArguments()) {
      if (isParameter(func, arg.getArgNumber()))
        continue;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() <= seqDim || type.isDynamicDim(seqDim) ||
          (length && type.getDimSize(seqDim) != *length)) {
        func.emitError("data argument #")
            << arg.getArgNumber() << " (" << arg.getType()
            << ") has no static sequence dimension " << seqDim.getValue()
            << (length ? " of length " + std::to_string(*length) : "");
        return signalPassFailure();
      }
      length = type.getDimSize(seqDim);
    }
    if (!length || *length < numSlices) {
      func.emitError("a sequence of length ")
          << length.value_or(0) << " cannot be cut into "
          << numSlices.getValue() << " slices";
      return signalPassFailure();
    }
    SmallVector<int64_t> bounds =
        sched::getUniformSliceBounds(*length, numSlices);
    if (split == "balanced") {
      // The costs come from slicing a copy into one slice.
      auto copy = cast<func::FuncOp>(func->clone());
      SmallVector<int64_t> whole = {0, *length};
      SequenceSlicer analysis(whole, seqDim);
      LogicalResult analyzed = analysis.run(copy);
      copy->erase();
      if (failed(analyzed))
        return signalPassFailure();
      bounds =
          sched::getBalancedSliceBounds(*length, numSlices, analysis.getCost());
    } else if (split != "uniform") {
      func.emitError("split must be uniform or balanced, got '")
          << split.getValue() << "'";
      return signalPassFailure();
    }
    if (failed(SequenceSlicer(bounds, seqDim).run(func)))
      return signalPassFailure();
  }
};
} // namespace
