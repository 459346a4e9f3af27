//===- FoldMemRefAliases.h - fold views into loads and stores ---*- C++ -*-===//
//
// Upstream's memref alias folding, guarded where it would change the IR of
// a transfer it then leaves unfolded.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_FOLDMEMREFALIASES_H
#define PP_STAGECODE_FOLDMEMREFALIASES_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::pp {

/// memref::populateFoldMemRefAliasOpPatterns, except that no pattern sees a
/// vector.transfer_read through a memref.expand_shape it cannot fold (one
/// with a permutation map that is not a minor identity, or with more vector
/// dimensions than the expand_shape's source has). Upstream's folder
/// linearizes the indices before it checks either, so on such a read it
/// creates an affine.linearize_index, fails, and the greedy driver erases
/// the dead index and starts another iteration: it never converges.
void populateFoldMemRefAliasPatterns(RewritePatternSet &patterns);

} // namespace mlir::pp

#endif // PP_STAGECODE_FOLDMEMREFALIASES_H
