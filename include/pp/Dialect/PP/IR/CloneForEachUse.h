//===- CloneForEachUse.h - one copy of an op per user -----------*- C++ -*-===//
//
// Shared by pp-clone-shared-fills and pp-shard-stages: both give each user
// of a fill (or tensor.empty) its own copy.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_CLONEFOREACHUSE_H
#define PP_DIALECT_PP_IR_CLONEFOREACHUSE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mlir::pp {

/// Replaces each use of `op`'s one result in its own block by a clone of
/// `op` placed right before the user, and erases `op` if that leaves it
/// unused. Uses in nested regions keep `op`: a clone there would run once
/// per loop iteration.
inline void cloneForEachUse(Operation *op) {
  Value result = op->getResult(0);
  for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
    if (use.getOwner()->getBlock() != op->getBlock())
      continue;
    OpBuilder builder(use.getOwner());
    use.set(builder.clone(*op)->getResult(0));
  }
  if (result.use_empty())
    op->erase();
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_CLONEFOREACHUSE_H
