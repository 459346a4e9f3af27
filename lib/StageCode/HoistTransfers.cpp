//===- HoistTransfers.cpp - keep loop-carried vectors in registers --------===//

#include "pp/StageCode/HoistTransfers.h"
#include "pp/StageCode/FoldMemRefAliases.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;

void mlir::pp::populateTransferAliasFoldingPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  pp::populateFoldMemRefAliasPatterns(patterns);
  memref::SubViewOp::getCanonicalizationPatterns(patterns, context);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
}

/// Hoists the transfers of `nest` inside a temporary scf.execute_region.
/// Upstream hoisting walks from the op it is given, and a hoist out of the
/// outermost loop replaces that loop; given the loop itself, it would go on
/// walking the erased op.
static void hoistNest(LoopLikeOpInterface nest) {
  Location loc = nest.getLoc();
  OpBuilder builder(nest);
  auto wrapper = scf::ExecuteRegionOp::create(builder, loc, TypeRange());
  Block *body = builder.createBlock(&wrapper.getRegion());
  nest->moveBefore(body, body->end());
  scf::YieldOp::create(builder, loc);
  linalg::hoistRedundantVectorTransfers(wrapper);
  body->getTerminator()->erase();
  wrapper->getBlock()->getOperations().splice(Block::iterator(wrapper),
                                              body->getOperations());
  wrapper->erase();
}

void mlir::pp::hoistTransfersPerNest(Operation *root) {
  SmallVector<LoopLikeOpInterface> nests;
  root->walk([&](LoopLikeOpInterface loop) {
    moveLoopInvariantCode(loop);
    if (!loop->getParentOfType<LoopLikeOpInterface>())
      nests.push_back(loop);
  });
  for (LoopLikeOpInterface nest : nests)
    hoistNest(nest);
}
