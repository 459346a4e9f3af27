//===- FoldMemRefAliases.cpp - fold views into loads and stores -----------===//

#include "pp/StageCode/FoldMemRefAliases.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

/// Whether upstream's expand_shape folder would misread `read`: it keeps
/// the vector shape and replaces the permutation map by a minor identity of
/// the expand_shape's source, so each vector dimension beyond the last
/// (and its leading unit ones) must be an expanded dimension of its own:
/// a vector<2x1xf32> read of dimensions (n, k) of [b, n, k] expanded from
/// [b, n*k] would otherwise step along b.
static bool isUnfoldableExpandShapeRead(vector::TransferReadOp read) {
  auto expand = read.getBase().getDefiningOp<memref::ExpandShapeOp>();
  if (!expand)
    return false;
  ArrayRef<int64_t> vectorShape = read.getVectorType().getShape();
  int64_t sourceRank = expand.getSrcType().getRank();
  if (!read.getPermutationMap().isMinorIdentity() ||
      sourceRank < static_cast<int64_t>(vectorShape.size()))
    return true;
  ArrayRef<int64_t> nonUnit =
      vectorShape.drop_while([](int64_t size) { return size == 1; });
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (nonUnit.size() > groups.size())
    return true;
  return nonUnit.size() > 1 &&
         llvm::any_of(ArrayRef(groups).take_back(nonUnit.size()),
                      [](const ReassociationIndices &group) {
                        return group.size() != 1;
                      });
}

namespace {
/// An upstream pattern rooted at vector.transfer_read that is not tried on
/// the reads isUnfoldableExpandShapeRead names.
class GuardedTransferReadPattern : public RewritePattern {
public:
  explicit GuardedTransferReadPattern(std::unique_ptr<RewritePattern> pattern)
      : RewritePattern(vector::TransferReadOp::getOperationName(),
                       pattern->getBenefit(), pattern->getContext()),
        pattern(std::move(pattern)) {
    setDebugName(this->pattern->getDebugName());
    setHasBoundedRewriteRecursion(this->pattern->hasBoundedRewriteRecursion());
  }

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (isUnfoldableExpandShapeRead(cast<vector::TransferReadOp>(op)))
      return rewriter.notifyMatchFailure(op, "expand_shape cannot be folded");
    return pattern->matchAndRewrite(op, rewriter);
  }

private:
  std::unique_ptr<RewritePattern> pattern;
};
} // namespace

void mlir::pp::populateFoldMemRefAliasPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  RewritePatternSet upstream(context);
  memref::populateFoldMemRefAliasOpPatterns(upstream);
  OperationName transferRead(vector::TransferReadOp::getOperationName(),
                             context);
  for (std::unique_ptr<RewritePattern> &pattern :
       upstream.getNativePatterns()) {
    if (pattern->getRootKind() == transferRead)
      patterns.add(
          std::make_unique<GuardedTransferReadPattern>(std::move(pattern)));
    else
      patterns.add(std::move(pattern));
  }
}
