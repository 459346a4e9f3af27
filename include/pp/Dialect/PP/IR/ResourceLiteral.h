//===- ResourceLiteral.h - a resource constant's data as a literal -*- C++
//-*-===//
//
// PyTorch exports hold buffers and constants as `dense_resource` blobs,
// which upstream folders and lowerings read only partly (not a scalar's
// splat value, not mapValues); passes that need the elements read them
// through this, as a `dense` literal.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_RESOURCELITERAL_H
#define PP_DIALECT_PP_IR_RESOURCELITERAL_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir::pp {

/// The `dense` literal holding `resource`'s elements, or failure (reported
/// through `emitError`) where the module does not hold its blob or the blob
/// is not the elements of its type.
FailureOr<DenseElementsAttr>
getResourceLiteral(DenseResourceElementsAttr resource,
                   function_ref<InFlightDiagnostic()> emitError);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_RESOURCELITERAL_H
