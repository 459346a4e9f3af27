//===- BoundedRewrite.h - greedy rewrites that end ---------------*- C++
//-*-===//
//
// Applies a pattern set greedily with a cap on the number of rewrites, so
// that patterns undoing one another end in an error instead of a hang.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_BOUNDEDREWRITE_H
#define PP_STAGECODE_BOUNDEDREWRITE_H

#include "mlir/IR/Operation.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::pp {

/// Applies `patterns` to the regions of `root` with at most 64 rewrites per
/// op they hold. If they do not converge, emits "<pass>: <what> did not
/// converge" at `root` and fails.
LogicalResult applyPatternsBounded(Operation *root,
                                   const FrozenRewritePatternSet &patterns,
                                   StringRef pass, StringRef what);

} // namespace mlir::pp

#endif // PP_STAGECODE_BOUNDEDREWRITE_H
