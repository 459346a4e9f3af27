//===- BoundedRewrite.cpp - greedy rewrites that end ----------------------===//

#include "pp/StageCode/BoundedRewrite.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

LogicalResult
mlir::pp::applyPatternsBounded(Operation *root,
                               const FrozenRewritePatternSet &patterns,
                               StringRef pass, StringRef what) {
  constexpr int64_t kRewritesPerOp = 64;
  int64_t numOps = 0;
  root->walk([&](Operation *) { ++numOps; });
  GreedyRewriteConfig config;
  config.setMaxNumRewrites(kRewritesPerOp * numOps);
  if (succeeded(applyPatternsGreedily(root, patterns, config)))
    return success();
  return root->emitError() << pass << ": " << what << " did not converge";
}
