//===- InlineScalarResources.cpp - scalar constants as dense literals -----===//
//
// pp-inline-scalar-resources: replaces each rank-0 `dense_resource`
// constant (a scalar buffer or constant of a PyTorch export) by the `dense`
// literal of its blob, since memref.global's lowering to LLVM reads a
// scalar global's value as a splat, which a resource is not.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPINLINESCALARRESOURCES
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// The `dense` literal holding `resource`'s one element, or failure (with
/// an error at `constant`) when its blob is absent or not one element.
static FailureOr<DenseElementsAttr>
getScalarLiteral(arith::ConstantOp constant,
                 DenseResourceElementsAttr resource) {
  DenseResourceElementsHandle handle = resource.getRawHandle();
  const AsmResourceBlob *blob = handle.getBlob();
  if (!blob)
    return constant.emitOpError() << "reads the resource '" << handle.getKey()
                                  << "', whose data the module does not hold";
  ShapedType type = resource.getType();
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, blob->getData(), splat))
    return constant.emitOpError() << "reads the resource '" << handle.getKey()
                                  << "' of " << blob->getData().size()
                                  << " bytes as one " << type.getElementType();
  return DenseElementsAttr::getFromRawBuffer(type, blob->getData());
}

namespace {

struct InlineScalarResources
    : pp::impl::PPInlineScalarResourcesBase<InlineScalarResources> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](arith::ConstantOp constant) {
      auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
      if (!resource || resource.getType().getRank() != 0)
        return WalkResult::advance();
      FailureOr<DenseElementsAttr> literal =
          getScalarLiteral(constant, resource);
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
