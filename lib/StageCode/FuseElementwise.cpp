//===- FuseElementwise.cpp - elementwise fusion of stage code -------------===//
//
// pp-fuse-elementwise: fuses elementwise linalg ops on tensors into their
// only consumers with upstream linalg's elementwise fusion, restricted to
// fusions that compute every element of the producer exactly once.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPFUSEELEMENTWISE
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// Whether fusing the producer of `operand` into its consumer computes each
/// element of the producer once: the consumer is the producer's only user
/// (otherwise the producer stays for the others and the fused op computes
/// it again) and reads it through a permutation. Through any other map (a
/// broadcast, a contraction's input) the fused op revisits every producer
/// element along the consumer's other loops, recomputing it; and where the
/// producer reads its own init, upstream fusion keeps that init as an output
/// of the fused op, which every revisit then accumulates into again (the
/// doubled gradients of `%out + %g` fused into a matmul).
static bool computesProducerOnce(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  return producer && producer->hasOneUse() && consumer &&
         consumer.getMatchingIndexingMap(operand).isPermutation();
}

namespace {

/// Reads of an init that is a `linalg.fill` in a generic that writes every
/// element once (parallel loops, a permutation into the init) are the fill
/// value. Stage code's derivatives are such ops (`%out + %x` into zeros);
/// without this, fusion keeps their inits as extra outputs of the fused op.
struct ForwardFilledInit : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        op.getNumParallelLoops() != op.getNumLoops())
      return failure();
    bool changed = false;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      auto fill = init.get().getDefiningOp<linalg::FillOp>();
      BlockArgument arg = op.getMatchingBlockArgument(&init);
      if (!fill || arg.use_empty() ||
          !op.getMatchingIndexingMap(&init).isPermutation())
        continue;
      Value value = fill.getInputs().front();
      if (value.getType() != arg.getType())
        continue;
      rewriter.replaceAllUsesWith(arg, value);
      changed = true;
    }
    return success(changed);
  }
};

/// Named elementwise ops (`linalg.add`, `linalg.div`, ...) as generics, which
/// upstream fusion takes. Fills and copies stay named: fills fold into their
/// users, and copies give repeated results their own buffers.
void generalizeElementwiseOps(Operation *root) {
  IRRewriter rewriter(root->getContext());
  root->walk([&](linalg::LinalgOp op) {
    if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(op) ||
        !op.hasPureTensorSemantics() || !linalg::isElementwise(op))
      return;
    rewriter.setInsertionPoint(op);
    (void)linalg::generalizeNamedOp(rewriter, op);
  });
}

struct FuseElementwise : pp::impl::PPFuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    generalizeElementwiseOps(getOperation());
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 computesProducerOnce);
    patterns.add<ForwardFilledInit>(context);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    linalg::FillOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
