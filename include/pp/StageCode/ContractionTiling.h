//===- ContractionTiling.h - loop orders and tiles for contractions -*- C++
//-*-===//
//
// Chooses how a contraction's loops are ordered and register-tiled for a
// target's vector width, apart from the pass that applies the choice.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_CONTRACTIONTILING_H
#define PP_STAGECODE_CONTRACTIONTILING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace pp {

/// The register tile a contraction is cut into: `rows` x `vectorsPerRow`
/// vectors of `vectorBits` bits accumulate in registers; `rows` x
/// `wideVectorsPerRow` where the output's rows hold at least
/// `wideVectorsPerRow` whole vectors (0: never).
struct RegisterTileShape {
  int64_t vectorBits = 512;
  int64_t rows = 4;
  int64_t vectorsPerRow = 2;
  int64_t wideVectorsPerRow = 0;
};

/// Whether vectors of `element` load and store as its buffers hold it: LLVM
/// packs a vector of i1 into bits where a buffer of i1 (a mask) holds a
/// byte per element.
bool hasByteElements(Type element);

/// Whether `op` is a contraction this library tiles: a linalg op with one
/// float init of static shape, two inputs read by its body (others may be
/// unused) of whole-byte elements (no i1 mask) that reuses one of them
/// (reusesOperands), contraction dimensions
/// (linalg::inferContractionDims), an output map that is a projected
/// permutation and a body that adds into its init.
bool isTileableContraction(linalg::LinalgOp op);

/// Whether one of the inputs `op`'s body reads (of whole-byte elements) is
/// read again along a loop of its one output that the input does not index
/// (an m or n dimension of a contraction), as a matmul reads each row of A
/// once per column of its product. A sum of elementwise products (a layer
/// norm's weight gradient) or a count of a row's ties with its max reuses
/// none: each element is read once whatever the tiles.
bool reusesOperands(linalg::LinalgOp op);

/// Whether pp-vectorize-contractions turns `op` into vector FMAs: a tileable
/// contraction whose innermost output dimension is longer than one element
/// (vectors of one lane would be scalar code). pp-select-gemm's `auto` rule
/// sends only the other contractions to the GEMM library.
bool isVectorizableContraction(linalg::LinalgOp op);

/// The loop order that puts the output's dimensions first, in the output's
/// layout order, then the reductions in their original order, as an
/// interchange vector for linalg::interchangeGenericOp (new loop i is old
/// loop result[i]).
SmallVector<unsigned> outputMajorLoopOrder(linalg::LinalgOp op);

/// Tile sizes for a contraction in output-major loop order with static
/// `loopRanges` and `numOutputDims` leading parallel loops: the innermost
/// output loop gets whole vectors (`shape.wideVectorsPerRow` of them where
/// it holds that many), the next one rows, everything else 1
/// (reductions step one at a time so the accumulators stay in registers). A
/// size equal to the loop's range means "not tiled" and is returned as 0.
SmallVector<int64_t> registerTileSizes(ArrayRef<int64_t> loopRanges,
                                       unsigned numOutputDims,
                                       unsigned elementBits,
                                       const RegisterTileShape &shape);

/// The inputs of an output-major contraction that use its innermost output
/// loop, but not as their own innermost dimension: reading a vector along
/// that loop would gather strided elements, so they are better transposed
/// first.
SmallVector<OpOperand *> stridedVectorInputs(linalg::LinalgOp op);

/// The permutation that moves `op`'s innermost output loop to the last
/// dimension of `input` and keeps the others in order (for
/// linalg.transpose: result dim i is input dim result[i]).
SmallVector<int64_t> innermostLastPermutation(linalg::LinalgOp op,
                                              OpOperand *input);

/// Tile sizes for the linalg.transpose of a buffer of shape `shape` (the
/// result's) by `permutation` that innermostLastPermutation made: square
/// tiles of up to `lanes` on the result's last dimension and on the one the
/// input has innermost, so both sides read and write whole vectors; 1
/// elsewhere, 0 where a tile is the whole dimension.
SmallVector<int64_t> transposeTileSizes(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> permutation,
                                        int64_t lanes);

} // namespace pp
} // namespace mlir

#endif // PP_STAGECODE_CONTRACTIONTILING_H
