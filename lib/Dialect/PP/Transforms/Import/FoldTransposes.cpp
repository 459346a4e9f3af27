//===- FoldTransposes.cpp - contractions read transposes through maps -----===//
//
// pp-fold-transposes: a contraction reading a transposed copy of a value
// reads the value itself, the permutation composed into its indexing map.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Import/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPFOLDTRANSPOSES
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// The input `op` copies with its elements permuted: `op` is a
/// `linalg.transpose`, or a generic with one input, parallel loops,
/// permutation maps and a body that yields the input unchanged. Null
/// otherwise.
static OpOperand *permutedInput(linalg::LinalgOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return nullptr;
  OpOperand *input = op.getDpsInputOperand(0);
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  if (yield.getValues().front() != op.getMatchingBlockArgument(input) ||
      !op.getMatchingIndexingMap(input).isPermutation() ||
      !op.getIndexingMapMatchingResult(op->getResult(0)).isPermutation())
    return nullptr;
  return input;
}

namespace {

struct FoldTransposeIntoContraction
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op))
      return failure();
    auto transposed = [](OpOperand *input) {
      return permutedInput(input->get().getDefiningOp<linalg::LinalgOp>());
    };
    auto inputs = op.getDpsInputOperands();
    auto folded = llvm::find_if(inputs, transposed);
    if (folded == inputs.end())
      return failure();
    unsigned index = (*folded)->getOperandNumber();
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return failure();
      generic = *generalized;
    }
    OpOperand &operand = generic->getOpOperand(index);
    auto copy = operand.get().getDefiningOp<linalg::LinalgOp>();
    OpOperand *source = permutedInput(copy);
    // Contraction loops -> the copy's dimensions -> its loops -> the
    // source's dimensions.
    AffineMap map =
        copy.getMatchingIndexingMap(source)
            .compose(inversePermutation(
                copy.getIndexingMapMatchingResult(copy->getResult(0))))
            .compose(generic.getMatchingIndexingMap(&operand));
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    maps[index] = map;
    rewriter.modifyOpInPlace(generic, [&] {
      operand.set(source->get());
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct FoldTransposes : pp::impl::PPFoldTransposesBase<FoldTransposes> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeIntoContraction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
