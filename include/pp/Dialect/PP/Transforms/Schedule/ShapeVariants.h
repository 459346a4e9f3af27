//===- ShapeVariants.h - stage functions per (rows, length) bucket -*- C++
//-*-===//
//
// A program may run its micro-batches at several shapes: one set of stage
// functions per bucket of (rows, sequence length), each scheduled from the
// same model written at that bucket's shape, and each micro-batch's actions
// calling its bucket's functions (docs/VariableLength.md).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULE_SHAPEVARIANTS_H
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULE_SHAPEVARIANTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir::pp {

/// Copies the stage functions of `variant`, a module scheduled with the same
/// stages, ranks and micro-batches as `module`, into `module` as shape
/// variant `index` (>= 1): renamed with a `_v<index>` suffix and tagged
/// `pp.variant`. Fails, with a diagnostic, where the two place a weight in
/// different stages.
LogicalResult attachShapeVariant(ModuleOp module, ModuleOp variant,
                                 int64_t index);

/// Has the actions of each micro-batch mb of `module`'s schedule run the
/// stage functions of variant `microbatchVariants[mb]` (0: the untagged).
LogicalResult assignMicrobatchVariants(ModuleOp module,
                                       ArrayRef<int64_t> microbatchVariants);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULE_SHAPEVARIANTS_H
