//===- FoldPaddedSums.cpp - sums of zero-padded disjoint slices -----------===//
//
// pp-fold-padded-sums: a sum of tensors that are each one slice inserted into
// zeros, the slices disjoint (the gradient of a split: every piece's
// gradient padded to the whole), is the slices inserted into one tensor.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPFOLDPADDEDSUMS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// Whether `value` is a sum (arith.addf) of the block arguments `leaves`
/// holds, each exactly once; `leaves` loses those it meets.
static bool isSumOf(Value value, SmallPtrSetImpl<Value> &leaves) {
  if (leaves.erase(value))
    return true;
  auto add = value.getDefiningOp<arith::AddFOp>();
  return add && isSumOf(add.getLhs(), leaves) && isSumOf(add.getRhs(), leaves);
}

/// Whether `op` sums its inputs elementwise: every map the identity, every
/// loop parallel, the init unread, the yield a sum of each input once.
static bool isElementwiseSum(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 2 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  Block *body = op.getBlock();
  SmallPtrSet<Value, 4> leaves;
  for (OpOperand *input : op.getDpsInputOperands())
    leaves.insert(op.getMatchingBlockArgument(input));
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return isSumOf(yield.getValues().front(), leaves) && leaves.empty();
}

/// The insertion `value` is when it puts a static, unit-stride slice into a
/// fill of zeros of the sum's type; null otherwise.
static tensor::InsertSliceOp getPaddedSlice(Value value, Type type) {
  auto insert = value.getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || insert.getType() != type || !insert.hasUnitStride() ||
      !insert.getOffsets().empty() || !insert.getSizes().empty())
    return {};
  auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs().front(), m_AnyZeroFloat()))
    return {};
  return insert;
}

/// Whether the boxes of two static slices overlap.
static bool overlap(tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
  for (auto [offsetA, sizeA, offsetB, sizeB] :
       llvm::zip(a.getStaticOffsets(), a.getStaticSizes(), b.getStaticOffsets(),
                 b.getStaticSizes()))
    if (offsetA + sizeA <= offsetB || offsetB + sizeB <= offsetA)
      return false;
  return true;
}

namespace {

/// sum(insert(s_i into zeros)) with disjoint slices -> s_1, ..., s_n inserted
/// one after another into zeros, or into an empty tensor where they cover it.
struct FoldPaddedSum : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwiseSum(op))
      return failure();
    auto type = cast<RankedTensorType>(op.getResult(0).getType());
    if (!type.hasStaticShape())
      return failure();
    SmallVector<tensor::InsertSliceOp> slices;
    int64_t covered = 0;
    for (OpOperand *input : op.getDpsInputOperands()) {
      tensor::InsertSliceOp slice = getPaddedSlice(input->get(), type);
      if (!slice || llvm::any_of(slices, [&](tensor::InsertSliceOp other) {
            return overlap(slice, other);
          }))
        return rewriter.notifyMatchFailure(op, "not disjoint padded slices");
      covered += ShapedType::getNumElements(slice.getStaticSizes());
      slices.push_back(slice);
    }
    Value whole =
        covered == type.getNumElements()
            ? tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                      type.getElementType())
                  .getResult()
            : slices.front().getDest();
    for (tensor::InsertSliceOp slice : slices)
      whole = tensor::InsertSliceOp::create(
          rewriter, slice.getLoc(), slice.getSource(), whole,
          slice.getMixedOffsets(), slice.getMixedSizes(),
          slice.getMixedStrides());
    rewriter.replaceOp(op, whole);
    return success();
  }
};

struct FoldPaddedSums : pp::impl::PPFoldPaddedSumsBase<FoldPaddedSums> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldPaddedSum>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
