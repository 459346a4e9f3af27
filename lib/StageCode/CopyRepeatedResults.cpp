//===- CopyRepeatedResults.cpp - one buffer per function result -----------===//
//
// pp-copy-repeated-results: copies every repeat of a tensor in a func.return
// so that buffer-results-to-out-params can give each result its own buffer.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPCOPYREPEATEDRESULTS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

/// Replaces each operand of `ret` that repeats an earlier one by a copy.
void copyRepeats(func::ReturnOp ret) {
  OpBuilder builder(ret);
  DenseSet<Value> seen;
  for (OpOperand &operand : ret->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || seen.insert(operand.get()).second)
      continue;
    Value empty = tensor::EmptyOp::create(
        builder, ret.getLoc(), type.getShape(), type.getElementType());
    operand.set(linalg::CopyOp::create(builder, ret.getLoc(), TypeRange{type},
                                       ValueRange{operand.get()},
                                       ValueRange{empty})
                    .getResult(0));
  }
}

struct CopyRepeatedResults
    : pp::impl::PPCopyRepeatedResultsBase<CopyRepeatedResults> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) { copyRepeats(ret); });
  }
};

} // namespace
