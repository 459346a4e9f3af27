//===- InlineScalarResources.cpp - scalar constants as dense literals -----===//
//
// pp-inline-scalar-resources: replaces each rank-0 `dense_resource`
// constant (a scalar buffer or constant of a PyTorch export) by the `dense`
// literal of its blob, since memref.global's lowering to LLVM reads a
// scalar global's value as a splat, which a resource is not.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "pp/Dialect/PP/IR/ResourceLiteral.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPINLINESCALARRESOURCES
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

struct InlineScalarResources
    : pp::impl::PPInlineScalarResourcesBase<InlineScalarResources> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](arith::ConstantOp constant) {
      auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
      if (!resource || resource.getType().getRank() != 0)
        return WalkResult::advance();
      FailureOr<DenseElementsAttr> literal = pp::getResourceLiteral(
          resource, [&] { return constant.emitOpError(); });
      if (failed(literal))
        return WalkResult::interrupt();
      constant.setValueAttr(*literal);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
