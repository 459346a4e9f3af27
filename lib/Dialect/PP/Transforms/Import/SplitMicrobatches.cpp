//===- SplitMicrobatches.cpp - run a training step on one micro-batch -----===//
//
// Divides the batch dimension of a training step by the number of
// micro-batches and propagates the new shape through its linalg ops and the
// tensor ops that move data (reshapes, slices, concatenation, padding).
// Values that mix rows of the batch (reductions over it) must flow linearly
// into the loss, whose sum over micro-batches is then the whole batch's: any
// other use (a batch norm's statistics) is an error at the model's line.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Import/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSPLITMICROBATCHES
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {

/// How a value that is not batch data depends on the rows of the batch: a
/// sum over them (linear: the micro-batches' sums add up to the whole
/// batch's), or a ratio of two sums (F.cross_entropy's mean over the
/// targets it counts: each micro-batch's own, as a PyTorch loop computes).
enum class RowMix { Sum, Ratio };

/// A value's RowMix and the op that reduced over the batch to make it.
struct AcrossRows {
  RowMix mix;
  Operation *reduction;
};

/// What a scalar of a linalg body computes from the rows of the batch:
/// nothing (Constant), one row (Row), a RowMix, the destination a reduction
/// accumulates into, or anything else (Other), which does not split.
enum class Term { Constant, Row, Sum, Ratio, Accumulator, Other };

/// Tracks which dimension of each tensor value is the batch dimension, and
/// the product of the dimensions a reshape merged outside the batch into it
/// (nn.MultiheadAttention's [sequence * batch] rows): a micro-batch's part
/// of such a dimension is strided, which is harmless while the dimension
/// is only iterated over, until a reshape splits it where it was merged.
class BatchShapeRewriter {
public:
  explicit BatchShapeRewriter(int64_t numMicrobatches)
      : numMicrobatches(numMicrobatches) {}

  LogicalResult run(func::FuncOp func);

private:
  LogicalResult splitValue(Value value, unsigned dim);
  LogicalResult visitLinalgOp(linalg::LinalgOp op);
  LogicalResult visitDataMovement(Operation *op);
  LogicalResult visitCollapse(tensor::CollapseShapeOp collapse, unsigned dim);
  LogicalResult visitExpand(tensor::ExpandShapeOp expand, unsigned dim);
  LogicalResult visitExtractSlice(tensor::ExtractSliceOp slice, unsigned dim);
  LogicalResult visitInsertSlice(tensor::InsertSliceOp slice);
  LogicalResult visitConcat(tensor::ConcatOp concat);
  LogicalResult visitSoftmax(linalg::SoftmaxOp softmax, unsigned dim);
  LogicalResult visitPad(tensor::PadOp pad, unsigned dim);
  LogicalResult visitBatchShape(Operation *op);
  LogicalResult checkAcrossRows(Operation *op);
  LogicalResult checkLinalgAcrossRows(linalg::LinalgOp op);
  Term getOperandTerm(Value value) const;
  void setBatchDim(Value value, unsigned dim, int64_t outer);
  Value freshInit(OpBuilder &builder, Value init, RankedTensorType type);
  Value freshReshape(OpBuilder &builder, Operation *op, RankedTensorType type);
  int64_t outerOf(Value value) const {
    auto it = outerSize.find(value);
    return it == outerSize.end() ? 1 : it->second;
  }
  void copyBatch(Value from, Value to) {
    batchDim[to] = batchDim.lookup(from);
    outerSize[to] = outerOf(from);
  }

  int64_t numMicrobatches;
  DenseMap<Value, unsigned> batchDim;
  /// Absent: 1, the batch is the outermost part of its dimension.
  DenseMap<Value, int64_t> outerSize;
  /// Values computed from several rows of the batch.
  DenseMap<Value, AcrossRows> acrossRows;
};

} // namespace

/// Gives `value` the micro-batch shape, its batch dimension being `dim`.
LogicalResult BatchShapeRewriter::splitValue(Value value, unsigned dim) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() <= dim || type.isDynamicDim(dim))
    return emitError(value.getLoc(), "batch data must be a ranked tensor with "
                                     "a static batch dimension, got ")
           << value.getType();
  if (type.getDimSize(dim) % numMicrobatches != 0)
    return emitError(value.getLoc(), "batch dimension of size ")
           << type.getDimSize(dim) << " is not divisible into "
           << numMicrobatches << " micro-batches";
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= numMicrobatches;
  value.setType(type.clone(shape));
  batchDim[value] = dim;
  return success();
}

/// Whether a slice takes all of dimension `dim`, of size `size`.
static bool isWholeDim(OffsetSizeAndStrideOpInterface slice, unsigned dim,
                       int64_t size) {
  return slice.getStaticOffsets()[dim] == 0 &&
         slice.getStaticStrides()[dim] == 1 &&
         slice.getStaticSizes()[dim] == size;
}

/// The dimension in which `type` is `old` with a divided size.
static unsigned getDividedDim(RankedTensorType type, RankedTensorType old) {
  for (unsigned d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != old.getDimSize(d))
      return d;
  return 0;
}

/// The splat a constant holds, looking through reshapes (an RNN's zero
/// initial state, [layers, batch, hidden] viewed as [batch, hidden]).
static SplatElementsAttr getSplatConstant(Value value) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  return constant ? dyn_cast<SplatElementsAttr>(constant.getValue()) : nullptr;
}

/// Re-creates, at micro-batch shape, a value computed without batch data,
/// the same in every row of the batch: a tensor.empty, a splat constant
/// (PyTorch's zeros shaped like the batch), a reshape or whole slice of such
/// a value, or a single-result linalg op (a fill, a broadcast of a weight)
/// whose operands along the batch can themselves be re-created.
Value BatchShapeRewriter::freshInit(OpBuilder &builder, Value init,
                                    RankedTensorType type) {
  Operation *def = init.getDefiningOp();
  if (isa_and_nonnull<tensor::EmptyOp>(def))
    return tensor::EmptyOp::create(builder, init.getLoc(), type.getShape(),
                                   type.getElementType());
  if (SplatElementsAttr splat = getSplatConstant(init))
    return arith::ConstantOp::create(builder, init.getLoc(),
                                     splat.resizeSplat(type));
  if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                      tensor::ExtractSliceOp>(def))
    return freshReshape(builder, def, type);
  auto producer = dyn_cast_or_null<linalg::LinalgOp>(def);
  if (!producer || producer->getNumResults() != 1 ||
      llvm::any_of(producer->getOperands(),
                   [&](Value v) { return batchDim.count(v); }))
    return nullptr;
  // The loop of the dimension the micro-batch divides; the operands it
  // indexes (the destination, and the zeros an RNN's first step
  // multiplies) are re-created too.
  unsigned dim = getDividedDim(type, cast<RankedTensorType>(init.getType()));
  auto loop = dyn_cast<AffineDimExpr>(
      producer.getMatchingIndexingMap(producer.getDpsInitOperand(0))
          .getResult(dim));
  // Every micro-batch gets the first rows: they must not depend on the row.
  if (!loop ||
      producer
          ->walk([&](linalg::IndexOp index) {
            return WalkResult(failure(index.getDim() == loop.getPosition()));
          })
          .wasInterrupted())
    return nullptr;
  SmallVector<std::pair<unsigned, Value>> replaced;
  for (OpOperand &operand : producer->getOpOperands()) {
    std::optional<unsigned> pos =
        producer.getMatchingIndexingMap(&operand).getResultPosition(loop);
    if (!pos)
      continue;
    auto operandType = cast<RankedTensorType>(operand.get().getType());
    SmallVector<int64_t> shape(operandType.getShape());
    shape[*pos] /= numMicrobatches;
    Value fresh = freshInit(builder, operand.get(), operandType.clone(shape));
    if (!fresh)
      return nullptr;
    replaced.emplace_back(operand.getOperandNumber(), fresh);
  }
  Operation *clone = builder.clone(*producer);
  for (auto [number, value] : replaced)
    clone->setOperand(number, value);
  clone->getResult(0).setType(type);
  return clone->getResult(0);
}

/// freshInit through a reshape or a slice of a value computed without batch
/// data (the gates of an RNN's first step, from its zero state): the source
/// is re-created with its matching dimension divided.
Value BatchShapeRewriter::freshReshape(OpBuilder &builder, Operation *op,
                                       RankedTensorType type) {
  auto oldType = cast<RankedTensorType>(op->getResult(0).getType());
  unsigned dim = getDividedDim(type, oldType);
  Value source = op->getOperand(0);
  auto sourceType = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> shape(sourceType.getShape());
  std::optional<unsigned> sliceDim;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    for (auto [group, dims] : llvm::enumerate(expand.getReassociationIndices()))
      if (llvm::is_contained(dims, dim))
        shape[group] /= numMicrobatches;
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    ReassociationIndices dims = collapse.getReassociationIndices()[dim];
    auto outer = llvm::find_if(
        dims, [&](int64_t d) { return sourceType.getDimSize(d) != 1; });
    shape[outer == dims.end() ? dims.back() : *outer] /= numMicrobatches;
  } else {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    unsigned sourceDim = 0;
    for (unsigned kept = 0;; ++sourceDim)
      if (!dropped.test(sourceDim) && kept++ == dim)
        break;
    if (!isWholeDim(slice, sourceDim, shape[sourceDim]))
      return nullptr;
    shape[sourceDim] /= numMicrobatches;
    sliceDim = sourceDim;
  }
  Value fresh = freshInit(builder, source, sourceType.clone(shape));
  if (!fresh)
    return nullptr;
  Operation *clone = builder.clone(*op);
  clone->setOperand(0, fresh);
  if (sliceDim) {
    auto slice = cast<tensor::ExtractSliceOp>(clone);
    SmallVector<int64_t> sizes(slice.getStaticSizes());
    sizes[*sliceDim] = shape[*sliceDim];
    slice.setStaticSizes(sizes);
  }
  clone->getResult(0).setType(type);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(clone))
    expand.setStaticOutputShape(type.getShape());
  return clone->getResult(0);
}

LogicalResult BatchShapeRewriter::visitLinalgOp(linalg::LinalgOp op) {
  // Find the loop that iterates over the batch, from any batched operand.
  std::optional<unsigned> loop;
  int64_t outer = 1;
  for (OpOperand &operand : op->getOpOperands()) {
    auto it = batchDim.find(operand.get());
    if (it == batchDim.end())
      continue;
    AffineExpr expr = op.getMatchingIndexingMap(&operand).getResult(it->second);
    auto dimExpr = dyn_cast<AffineDimExpr>(expr);
    if (!dimExpr)
      return op->emitOpError("indexes the batch dimension with a non-trivial "
                             "affine expression");
    loop = dimExpr.getPosition();
    outer = outerOf(operand.get());
    break;
  }
  if (!loop)
    return success();
  OpBuilder builder(op);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<unsigned> pos =
        map.getResultPosition(getAffineDimExpr(*loop, op->getContext()));
    auto it = batchDim.find(operand.get());
    if (!pos) {
      if (it != batchDim.end())
        return op->emitOpError("mixes batch dimensions of its operands");
      continue;
    }
    if (it != batchDim.end()) {
      if (it->second != *pos)
        return op->emitOpError("reads the batch dimension at position ")
               << *pos << " of operand #" << operand.getOperandNumber()
               << ", which is batched along " << it->second;
      if (outerOf(operand.get()) != outer)
        return op->emitOpError("operand #")
               << operand.getOperandNumber()
               << " merges its batch dimension with outer dimensions of "
                  "another size than the other operands'";
      continue;
    }
    auto type = cast<RankedTensorType>(operand.get().getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[*pos] /= numMicrobatches;
    Value init = freshInit(builder, operand.get(), type.clone(shape));
    if (!init)
      return op->emitOpError("operand #")
             << operand.getOperandNumber()
             << " is indexed by the batch dimension but is neither batch "
                "data nor the same in every row of the batch (zeros, a "
                "broadcast weight)";
    operand.set(init);
    batchDim[init] = *pos;
    outerSize[init] = outer;
  }
  for (OpResult result : op->getResults()) {
    Value init = op.getDpsInitOperand(result.getResultNumber())->get();
    auto it = batchDim.find(init);
    if (it == batchDim.end())
      continue;
    result.setType(init.getType());
    copyBatch(init, result);
  }
  return success();
}

/// Gives `value`, whose batch dimension `dim` kept the whole-batch size,
/// the micro-batch size; `outer` dimensions are merged outside the batch.
void BatchShapeRewriter::setBatchDim(Value value, unsigned dim, int64_t outer) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= numMicrobatches;
  value.setType(type.clone(shape));
  batchDim[value] = dim;
  if (outer != 1)
    outerSize[value] = outer;
}

/// A collapse merges the batch dimension with its group: the dimensions
/// merged outside it multiply its outer size.
LogicalResult
BatchShapeRewriter::visitCollapse(tensor::CollapseShapeOp collapse,
                                  unsigned dim) {
  for (auto [group, dims] :
       llvm::enumerate(collapse.getReassociationIndices())) {
    if (!llvm::is_contained(dims, dim))
      continue;
    int64_t outer = outerOf(collapse.getSrc());
    for (int64_t d : dims) {
      if (d == dim)
        break;
      outer *= collapse.getSrcType().getDimSize(d);
    }
    setBatchDim(collapse.getResult(), group, outer);
  }
  return success();
}

/// An expansion splits the batch dimension: the batch is the first
/// non-unit part after the dimensions that were merged outside it.
LogicalResult BatchShapeRewriter::visitExpand(tensor::ExpandShapeOp expand,
                                              unsigned dim) {
  RankedTensorType type = expand.getResultType();
  ReassociationIndices group = expand.getReassociationIndices()[dim];
  int64_t outer = outerOf(expand.getSrc()), before = 1;
  std::optional<unsigned> batch;
  for (int64_t d : group) {
    if (before == outer && type.getDimSize(d) != 1) {
      batch = d;
      break;
    }
    before *= type.getDimSize(d);
  }
  if (!batch && outer == 1)
    batch = group.back();
  if (!batch)
    return expand.emitOpError("splits a dimension that merges the batch with "
                              "outer dimensions of size ")
           << outer << " elsewhere than between them";
  if (type.getDimSize(*batch) % numMicrobatches != 0)
    return expand.emitOpError("splits the batch dimension into an outer "
                              "dimension of size ")
           << type.getDimSize(*batch) << ", not divisible into "
           << numMicrobatches << " micro-batches";
  setBatchDim(expand.getResult(), *batch, 1);
  expand.setStaticOutputShape(expand.getResultType().getShape());
  return success();
}

/// Slices must take the whole batch: each micro-batch then takes its part.
LogicalResult
BatchShapeRewriter::visitExtractSlice(tensor::ExtractSliceOp slice,
                                      unsigned dim) {
  int64_t size = slice.getSourceType().getDimSize(dim);
  if (!isWholeDim(slice, dim, size * numMicrobatches))
    return slice.emitOpError("must take the whole batch dimension");
  SmallVector<int64_t> sizes(slice.getStaticSizes());
  sizes[dim] = size;
  slice.setStaticSizes(sizes);
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  unsigned resultDim = dim;
  for (unsigned d = 0; d < dim; ++d)
    resultDim -= dropped.test(d);
  setBatchDim(slice.getResult(), resultDim, outerOf(slice.getSource()));
  return success();
}

/// Inserting batch data into a whole-batch destination: the destination
/// is re-created at micro-batch size if it is not batch data itself.
LogicalResult
BatchShapeRewriter::visitInsertSlice(tensor::InsertSliceOp slice) {
  auto source = batchDim.find(slice.getSource());
  auto dest = batchDim.find(slice.getDest());
  if (slice.getSourceType().getRank() != slice.getDestType().getRank() ||
      source == batchDim.end() ||
      (dest != batchDim.end() && dest->second != source->second))
    return slice.emitOpError("must insert batch data along the batch "
                             "dimension of its destination, without rank "
                             "reduction");
  unsigned dim = source->second;
  int64_t size = slice.getSourceType().getDimSize(dim);
  int64_t destSize = slice.getDestType().getDimSize(dim) *
                     (dest == batchDim.end() ? 1 : numMicrobatches);
  if (!isWholeDim(slice, dim, size * numMicrobatches) ||
      destSize != size * numMicrobatches)
    return slice.emitOpError("must fill the whole batch dimension");
  if (dest == batchDim.end()) {
    OpBuilder builder(slice);
    SmallVector<int64_t> shape(slice.getDestType().getShape());
    shape[dim] = size;
    Value init =
        freshInit(builder, slice.getDest(), slice.getDestType().clone(shape));
    if (!init)
      return slice.emitOpError("inserts batch data into a destination that "
                               "is not built from a tensor.empty");
    slice.getDestMutable().set(init);
    copyBatch(slice.getSource(), init);
  }
  SmallVector<int64_t> sizes(slice.getStaticSizes());
  sizes[dim] = size;
  slice.setStaticSizes(sizes);
  // getDestType() is the result's type, which is still the old one.
  slice.getResult().setType(slice.getDest().getType());
  copyBatch(slice.getSource(), slice.getResult());
  return success();
}

/// Concatenation along another dimension than the batch, of batch data
/// and of values computed without it at the batch's shape (a ViT's class
/// token broadcast to the batch), which are re-created at micro-batch size.
LogicalResult BatchShapeRewriter::visitConcat(tensor::ConcatOp concat) {
  Value batched = *llvm::find_if(concat.getInputs(),
                                 [&](Value v) { return batchDim.count(v); });
  unsigned dim = batchDim.lookup(batched);
  if (dim == concat.getDim())
    return concat.emitOpError("concatenates along the batch dimension");
  OpBuilder builder(concat);
  for (OpOperand &input : concat->getOpOperands()) {
    auto it = batchDim.find(input.get());
    if (it != batchDim.end()) {
      if (it->second != dim || outerOf(input.get()) != outerOf(batched))
        return concat.emitOpError("concatenates batch data batched along "
                                  "different dimensions");
      continue;
    }
    auto type = cast<RankedTensorType>(input.get().getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= numMicrobatches;
    Value init = freshInit(builder, input.get(), type.clone(shape));
    if (!init)
      return concat.emitOpError("operand #")
             << input.getOperandNumber()
             << " is not batch data, nor computed from weights and constants "
                "alone";
    input.set(init);
    copyBatch(batched, init);
  }
  setBatchDim(concat.getResult(), dim, outerOf(batched));
  return success();
}

/// Padding other dimensions than the batch.
LogicalResult BatchShapeRewriter::visitPad(tensor::PadOp pad, unsigned dim) {
  if (pad.getStaticLow()[dim] != 0 || pad.getStaticHigh()[dim] != 0)
    return pad.emitOpError("pads the batch dimension");
  setBatchDim(pad.getResult(), dim, outerOf(pad.getSource()));
  return success();
}

/// A softmax along another dimension than the batch; its destination is
/// re-created at micro-batch size.
LogicalResult BatchShapeRewriter::visitSoftmax(linalg::SoftmaxOp softmax,
                                               unsigned dim) {
  if (softmax.getDimension() == dim)
    return softmax.emitOpError("normalises along the batch dimension");
  OpBuilder builder(softmax);
  Value init = freshInit(builder, softmax.getOutput(),
                         cast<RankedTensorType>(softmax.getInput().getType()));
  if (!init)
    return softmax.emitOpError("has a destination that is not built from a "
                               "tensor.empty");
  softmax.getOutputMutable().set(init);
  softmax.getResult()[0].setType(init.getType());
  outerSize[init] = outerOf(softmax.getInput());
  copyBatch(softmax.getInput(), softmax.getResult()[0]);
  return success();
}

/// Ops other than linalg structured ops that read batch data: those that
/// move it (reshapes, slices, concat, pad) and linalg.softmax.
LogicalResult BatchShapeRewriter::visitDataMovement(Operation *op) {
  auto batchOf = [&](Value value) -> std::optional<unsigned> {
    auto it = batchDim.find(value);
    return it == batchDim.end() ? std::nullopt
                                : std::optional<unsigned>(it->second);
  };
  if (llvm::none_of(op->getOperands(),
                    [&](Value v) { return batchDim.count(v); }))
    return success();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tensor::CollapseShapeOp collapse) {
        return visitCollapse(collapse, *batchOf(collapse.getSrc()));
      })
      .Case([&](tensor::ExpandShapeOp expand) {
        return visitExpand(expand, *batchOf(expand.getSrc()));
      })
      .Case([&](tensor::ExtractSliceOp slice) {
        return visitExtractSlice(slice, *batchOf(slice.getSource()));
      })
      .Case(
          [&](tensor::InsertSliceOp slice) { return visitInsertSlice(slice); })
      .Case([&](tensor::ConcatOp concat) { return visitConcat(concat); })
      .Case([&](tensor::PadOp pad) {
        return visitPad(pad, *batchOf(pad.getSource()));
      })
      .Case([&](linalg::SoftmaxOp softmax) {
        return visitSoftmax(softmax, *batchOf(softmax.getInput()));
      })
      .Default([&](Operation *other) {
        return other->emitOpError(
            "uses batch data but is not supported by pp-split-microbatches");
      });
}

/// The term of `value` in `body`, whose arguments' terms are `args`; in a
/// reduction over the batch (`overBatch`) the accumulator adds up rows.
static Term getBodyTerm(Value value, Block *body, ArrayRef<Term> args,
                        bool overBatch, DenseMap<Value, Term> &memo) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == body ? args[arg.getArgNumber()] : Term::Constant;
  Operation *op = value.getDefiningOp();
  if (op->getBlock() != body)
    return Term::Constant;
  if (auto it = memo.find(value); it != memo.end())
    return it->second;
  if (isa<linalg::IndexOp>(op))
    return memo[value] = overBatch ? Term::Row : Term::Constant;
  SmallVector<Term> in = llvm::map_to_vector(op->getOperands(), [&](Value v) {
    return getBodyTerm(v, body, args, overBatch, memo);
  });
  auto all = [&](auto pred) { return llvm::all_of(in, pred); };
  bool rowwise =
      all([](Term t) { return t == Term::Constant || t == Term::Row; });
  Term other = rowwise ? (all([](Term t) { return t == Term::Constant; })
                              ? Term::Constant
                              : Term::Row)
                       : Term::Other;
  Term term =
      llvm::TypeSwitch<Operation *, Term>(op)
          .Case<arith::AddFOp, arith::AddIOp>([&](auto) {
            Term a = in[0], b = in[1];
            if (a == Term::Accumulator)
              std::swap(a, b);
            // A sum over the batch adds up what each row contributes.
            if (b == Term::Accumulator) {
              if (overBatch)
                return a == Term::Constant || a == Term::Row ? Term::Sum
                                                             : Term::Other;
              return a == Term::Accumulator ? Term::Other : a;
            }
            return a == b ? a : other;
          })
          .Case<arith::SubFOp, arith::SubIOp>(
              [&](auto) { return in[0] == in[1] ? in[0] : other; })
          .Case<arith::MulFOp, arith::MulIOp>([&](auto) {
            if (in[0] == Term::Constant && in[1] != Term::Accumulator)
              return in[1];
            if (in[1] == Term::Constant && in[0] != Term::Accumulator)
              return in[0];
            return other;
          })
          .Case<arith::DivFOp, arith::DivSIOp>([&](auto) {
            if (in[1] == Term::Constant && in[0] != Term::Accumulator)
              return in[0];
            if (in[0] == Term::Sum && in[1] == Term::Sum)
              return Term::Ratio;
            return other;
          })
          .Case<arith::NegFOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
                arith::UIToFPOp, arith::ExtSIOp, arith::ExtUIOp,
                arith::TruncIOp, arith::IndexCastOp>([&](Operation *) {
            return in[0] == Term::Accumulator ? Term::Other : in[0];
          })
          .Case([&](arith::SelectOp) {
            if (in[0] == Term::Constant && in[1] == in[2])
              return in[1];
            return other;
          })
          .Default([&](Operation *) { return other; });
  return memo[value] = term;
}

/// Whether `value` holds zeros: a zero splat or a fill with zero.
static bool isZeros(Value value) {
  if (SplatElementsAttr splat = getSplatConstant(value)) {
    Attribute zero = splat.getSplatValue<Attribute>();
    if (auto f = dyn_cast<FloatAttr>(zero))
      return f.getValue().isZero();
    return cast<IntegerAttr>(zero).getValue().isZero();
  }
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && (matchPattern(fill.value(), m_AnyZeroFloat()) ||
                  matchPattern(fill.value(), m_Zero()));
}

Term BatchShapeRewriter::getOperandTerm(Value value) const {
  if (batchDim.count(value))
    return Term::Row;
  auto it = acrossRows.find(value);
  if (it == acrossRows.end())
    return Term::Constant;
  return it->second.mix == RowMix::Sum ? Term::Sum : Term::Ratio;
}

/// A linalg op that reduces over the batch, or reads a value that did. A
/// reduction over the batch must be a sum; what reads it must be linear in
/// it (constant factors and divisors, sums of sums) and must not read batch
/// data: a micro-batch's rows normalised by a statistic of the whole batch
/// (a batch norm's) would use whole-batch constants with its own rows,
/// which is neither the whole batch's step nor a PyTorch loop's.
LogicalResult BatchShapeRewriter::checkLinalgAcrossRows(linalg::LinalgOp op) {
  const AcrossRows *read = nullptr;
  bool batched = false;
  for (Value operand : op->getOperands()) {
    batched |= batchDim.count(operand) != 0;
    if (auto it = acrossRows.find(operand); it != acrossRows.end())
      read = &it->second;
  }
  if (read && batched)
    return op->emitOpError("combines rows of the batch with ")
               .append(read->mix == RowMix::Sum
                           ? "a sum over the batch dimension"
                           : "a ratio of sums over the batch dimension")
               .append(" (a statistic of the batch, such as a batch norm's "
                       "mean): split into micro-batches, each would mix its "
                       "own rows with the whole batch's constants; export "
                       "the step at the micro-batch shape")
               .attachNote(read->reduction->getLoc())
           << "the reduction over the batch dimension";
  // A reduction over the batch is an op that reads batch data into a
  // result that is not batch data.
  bool reduces =
      batched && llvm::any_of(op->getResults(), [&](OpResult result) {
        return !batchDim.count(result);
      });
  if (!read && !reduces)
    return success();
  bool accumulates = op.getNumReductionLoops() != 0;
  Block *body = op.getBlock();
  SmallVector<Term> args;
  for (OpOperand &operand : op->getOpOperands())
    args.push_back(op.isDpsInit(&operand) && accumulates
                       ? Term::Accumulator
                       : getOperandTerm(operand.get()));
  DenseMap<Value, Term> memo;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (OpResult result : op->getResults()) {
    if (batchDim.count(result))
      continue;
    Term term = getBodyTerm(yield.getOperand(result.getResultNumber()), body,
                            args, reduces, memo);
    Value init = op.getDpsInitOperand(result.getResultNumber())->get();
    // What a sum starts from would be counted once per micro-batch.
    bool startsAtZero =
        !accumulates || isZeros(init) || getOperandTerm(init) == term;
    if (reduces && (term != Term::Sum || !startsAtZero))
      return op->emitOpError(
          "reduces over the batch dimension with other than a sum from zero "
          "(a max, a product, a starting value), which micro-batches cannot "
          "compute part by part; export the step at the micro-batch shape");
    if (term == Term::Constant)
      continue;
    if ((term != Term::Sum && term != Term::Ratio) || !startsAtZero)
      return op->emitOpError("is not linear in a sum over the batch "
                             "dimension: its values on the micro-batches "
                             "would not add up to its value on the whole "
                             "batch; export the step at the micro-batch shape")
                 .attachNote(read->reduction->getLoc())
             << "the reduction over the batch dimension";
    acrossRows[result] = {term == Term::Sum ? RowMix::Sum : RowMix::Ratio,
                          read ? read->reduction : op.getOperation()};
  }
  return success();
}

/// Ops other than linalg ops that read a value computed over the batch:
/// reshapes and stage boundaries keep it what it is; the step may return it
/// as its loss only.
LogicalResult BatchShapeRewriter::checkAcrossRows(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return checkLinalgAcrossRows(linalgOp);
  auto read = llvm::find_if(op->getOperands(),
                            [&](Value v) { return acrossRows.count(v); });
  if (read == op->operand_end())
    return success();
  AcrossRows across = acrossRows.lookup(*read);
  if (isa<func::ReturnOp>(op)) {
    for (OpOperand &operand : op->getOpOperands())
      if (operand.getOperandNumber() != 0 && acrossRows.count(operand.get()))
        return op->emitOpError("returns a value computed over the batch "
                               "dimension as result #")
                   .append(operand.getOperandNumber())
                   .append(", which is not the loss")
                   .attachNote(across.reduction->getLoc())
               << "the reduction over the batch dimension";
    return success();
  }
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
          BoundaryOp>(op)) {
    acrossRows[op->getResult(0)] = across;
    return success();
  }
  return op->emitOpError("uses a value computed over the batch dimension, "
                         "which pp-split-microbatches cannot follow")
             .attachNote(across.reduction->getLoc())
         << "the reduction over the batch dimension";
}

/// Gives `op`'s results the micro-batch shape where they hold batch data.
LogicalResult BatchShapeRewriter::visitBatchShape(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return visitLinalgOp(linalgOp);
  if (auto boundary = dyn_cast<BoundaryOp>(op)) {
    auto it = batchDim.find(boundary.getInput());
    if (it != batchDim.end()) {
      boundary.getOutput().setType(boundary.getInput().getType());
      copyBatch(boundary.getInput(), boundary.getOutput());
    }
    return success();
  }
  if (isa<func::ReturnOp>(op))
    return success();
  return visitDataMovement(op);
}

LogicalResult BatchShapeRewriter::run(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments())
    if (!isParameter(func, arg.getArgNumber()) && failed(splitValue(arg, 0)))
      return failure();
  // The step's own ops in order (what they re-create goes before them);
  // linalg bodies are read with their op.
  for (Operation &op : llvm::make_early_inc_range(func.front()))
    if (failed(visitBatchShape(&op)) || failed(checkAcrossRows(&op)))
      return failure();
  // The whole-batch producers that were re-created are now dead.
  SmallVector<Operation *> ops = llvm::map_to_vector(
      func.front().without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
  func.setType(
      FunctionType::get(func.getContext(), func.front().getArgumentTypes(),
                        func.front().getTerminator()->getOperandTypes()));
  return success();
}

namespace {
struct SplitMicrobatchesPass
    : pp::impl::PPSplitMicrobatchesBase<SplitMicrobatchesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (numMicrobatches < 1) {
      getOperation().emitError("num-microbatches must be at least 1, got ")
          << numMicrobatches.getValue();
      return signalPassFailure();
    }
    func::FuncOp func = lookupTrainingStep(getOperation(), function);
    if (!func)
      return signalPassFailure();
    // A step traced at the micro-batch shape (pp.torch.export's
    // `microbatches`) is split already.
    if (auto split = func->getAttrOfType<IntegerAttr>(kMicrobatchesAttr)) {
      if (split.getInt() == numMicrobatches)
        return;
      func.emitError("the training step is split into ")
          << split.getInt() << " micro-batches already, not "
          << numMicrobatches.getValue();
      return signalPassFailure();
    }
    if (numMicrobatches > 1 &&
        failed(BatchShapeRewriter(numMicrobatches).run(func)))
      return signalPassFailure();
    func->setAttr(kMicrobatchesAttr,
                  IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                   numMicrobatches.getValue()));
  }
};
} // namespace
