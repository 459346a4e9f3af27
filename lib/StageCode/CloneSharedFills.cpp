//===- CloneSharedFills.cpp - one fill per consumer -----------------------===//
//
// pp-clone-shared-fills: clones a tensor linalg.fill or tensor.empty with
// several uses right before each user, so that One-Shot Bufferize fills
// each consumer's buffer in place instead of copying one filled buffer into
// the others, and its alias sets stay local instead of spanning a function.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "pp/Dialect/PP/IR/CloneForEachUse.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
    // After the fills: each clone is another use of the fill's empty tensor.
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (!empty.getResult().hasOneUse() && !empty.getResult().use_empty())
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties)
      pp::cloneForEachUse(empty);
  }
};

} // namespace
