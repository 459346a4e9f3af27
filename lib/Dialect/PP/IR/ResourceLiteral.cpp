//===- ResourceLiteral.cpp - a resource constant's data as a literal ------===//
//
// Reads a `dense_resource` blob back as a `dense` literal.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/ResourceLiteral.h"

#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

FailureOr<DenseElementsAttr>
pp::getResourceLiteral(DenseResourceElementsAttr resource,
                       function_ref<InFlightDiagnostic()> emitError) {
  DenseResourceElementsHandle handle = resource.getRawHandle();
  const AsmResourceBlob *blob = handle.getBlob();
  if (!blob)
    return emitError() << "reads the resource '" << handle.getKey()
                       << "', whose data the module does not hold";
  ShapedType type = resource.getType();
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, blob->getData(), splat))
    return emitError() << "reads the resource '" << handle.getKey() << "' of "
                       << blob->getData().size() << " bytes as " << type;
  return DenseElementsAttr::getFromRawBuffer(type, blob->getData());
}
