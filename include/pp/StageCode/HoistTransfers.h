//===- HoistTransfers.h - loop-carried vectors ------------------*- C++ -*-===//
//
// Hoists loop-invariant code and the read/write pairs of vector transfers
// out of the loops of a function, one outermost loop nest at a time.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_HOISTTRANSFERS_H
#define PP_STAGECODE_HOISTTRANSFERS_H

#include "mlir/IR/Operation.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::pp {

/// Patterns that fold subviews into the transfers through them, so that
/// transfers are on the buffers themselves and hoisting can prove an
/// accumulator is not aliased. They undo what dropping unit vector
/// dimensions does to transfers: apply them as a set of their own.
void populateTransferAliasFoldingPatterns(RewritePatternSet &patterns);

/// Moves loop-invariant code out of the loops under `root`, then hoists each
/// transfer_read/transfer_write pair on an unaliased buffer out of its loop,
/// so that accumulators become loop-carried vectors. Upstream hoisting
/// restarts its walk after every hoist, so it runs per outermost loop nest:
/// over a whole function it would be quadratic in the number of nests.
void hoistTransfersPerNest(Operation *root);

} // namespace mlir::pp

#endif // PP_STAGECODE_HOISTTRANSFERS_H
