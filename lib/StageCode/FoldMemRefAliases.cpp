//===- FoldMemRefAliases.cpp - fold views into loads and stores -----------===//

#include "pp/StageCode/FoldMemRefAliases.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

/// Whether upstream's expand_shape folder would leave `read` unfolded: it
/// keeps the vector shape and replaces the permutation map by a minor
/// identity of the expand_shape's source.
static bool isUnfoldableExpandShapeRead(vector::TransferReadOp read) {
  auto expand = read.getBase().getDefiningOp<memref::ExpandShapeOp>();
  if (!expand)
    return false;
  int64_t sourceRank = expand.getSrcType().getRank();
  return !read.getPermutationMap().isMinorIdentity() ||
         sourceRank < read.getVectorType().getRank();
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
