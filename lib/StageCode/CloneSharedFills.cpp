//===- CloneSharedFills.cpp - one fill per consumer -----------------------===//
//
// pp-clone-shared-fills: clones a tensor linalg.fill with several uses right
// before each user, so that One-Shot Bufferize fills each consumer's buffer
// in place instead of copying one filled buffer into the others.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "pp/Dialect/PP/IR/CloneForEachUse.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPCLONESHAREDFILLS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

struct CloneSharedFills : pp::impl::PPCloneSharedFillsBase<CloneSharedFills> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> shared;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill.getResult(0).hasOneUse() &&
          !fill.getResult(0).use_empty())
        shared.push_back(fill);
    });
    for (linalg::FillOp fill : shared)
      pp::cloneForEachUse(fill);
  }
};

} // namespace
