//===- DropUnusedResults.cpp - erase linalg results nothing reads ---------===//
//
// pp-drop-unused-results: removes the results (and the operands that only
// fed them) of linalg ops that nothing uses, such as the argmax index that
// PyTorch's max returns beside the max a softmax needs.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Import/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPDROPUNUSEDRESULTS
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

struct DropUnusedResults
    : pp::impl::PPDropUnusedResultsBase<DropUnusedResults> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
