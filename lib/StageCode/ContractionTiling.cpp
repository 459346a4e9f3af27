//===- ContractionTiling.cpp - loop orders and tiles for contractions -----===//
//
// Chooses how a contraction's loops are ordered and register-tiled for a
// target's vector width.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/ContractionTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::pp;

/// Whether the body yields `init + f(inputs)` and reads its init nowhere
/// else, so that the reduction can run in any order of the parallel loops.
static bool addsIntoInit(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  BlockArgument init = body->getArguments().back();
  if (!add || !init.hasOneUse())
    return false;
  return add.getLhs() == init || add.getRhs() == init;
}

bool mlir::pp::hasByteElements(Type element) {
  return element.isIntOrFloat() && element.getIntOrFloatBitWidth() % 8 == 0;
}

/// The indexing maps of the inputs `op`'s body reads, or none where one of
/// them has no whole-byte elements (a mask's reads stay scalar). Derived
/// generics keep inputs their body never reads.
static std::optional<SmallVector<AffineMap>>
readInputMaps(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (op.getMatchingBlockArgument(input).use_empty())
      continue;
    if (!hasByteElements(getElementTypeOrSelf(input->get().getType())))
      return std::nullopt;
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  return maps;
}

/// Whether some loop that `output` indexes is not indexed by one of
/// `inputs`: that input is reused along it (an m or n dimension).
static bool reusesAnInput(ArrayRef<AffineMap> inputs, AffineMap output) {
  return llvm::any_of(output.getResults(), [&](AffineExpr expr) {
    return llvm::any_of(inputs, [&](AffineMap input) {
      return !input.isFunctionOfDim(cast<AffineDimExpr>(expr).getPosition());
    });
  });
}

bool mlir::pp::reusesOperands(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isProjectedPermutation())
    return false;
  std::optional<SmallVector<AffineMap>> inputs = readInputMaps(op);
  return inputs && reusesAnInput(*inputs, op.getMatchingIndexingMap(
                                              op.getDpsInitOperand(0)));
}

bool mlir::pp::isTileableContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op.hasDynamicShape())
    return false;
  OpOperand *init = op.getDpsInitOperand(0);
  auto type = dyn_cast<ShapedType>(init->get().getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return false;
  // A body that reads its position (pp-lower-gathers' one-hot selects) is
  // no product of its inputs.
  if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return false;
  // Recognize the contraction of the two inputs that are read.
  std::optional<SmallVector<AffineMap>> maps = readInputMaps(op);
  if (!maps || maps->size() != 2)
    return false;
  maps->push_back(op.getMatchingIndexingMap(init));
  // A scalar output (a dot product) has no loop to vectorize along.
  if (maps->back().getNumResults() == 0)
    return false;
  // Without its unused inputs the op must still define every loop's range.
  if (!inversePermutation(concatAffineMaps(*maps, op->getContext())))
    return false;
  // Without reuse (a sum of elementwise products, a count of ties) register
  // tiles save no loads, and packing the inputs for them costs a pass.
  if (!reusesAnInput(ArrayRef(*maps).drop_back(), maps->back()))
    return false;
  return succeeded(linalg::inferContractionDims(*maps)) && addsIntoInit(op);
}

bool mlir::pp::isVectorizableContraction(linalg::LinalgOp op) {
  // The output's innermost dimension is the vectorized loop
  // (outputMajorLoopOrder); tileable contractions have no scalar outputs.
  return isTileableContraction(op) &&
         cast<ShapedType>(op.getDpsInitOperand(0)->get().getType())
                 .getShape()
                 .back() > 1;
}

SmallVector<unsigned> mlir::pp::outputMajorLoopOrder(linalg::LinalgOp op) {
  AffineMap output = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<unsigned> order;
  llvm::SmallBitVector used(op.getNumLoops());
  for (unsigned i = 0, e = output.getNumResults(); i < e; ++i) {
    unsigned dim = output.getDimPosition(i);
    order.push_back(dim);
    used.set(dim);
  }
  for (unsigned dim = 0, e = op.getNumLoops(); dim < e; ++dim)
    if (!used.test(dim))
      order.push_back(dim);
  return order;
}

/// The largest divisor of `range` that is at most `wanted`.
static int64_t largestDivisorAtMost(int64_t range, int64_t wanted) {
  for (int64_t size = std::min(range, wanted); size > 1; --size)
    if (range % size == 0)
      return size;
  return 1;
}

/// The tile of the innermost output loop: whole vectors, the whole loop when
/// it is one vector or less, or else a power of two (LLVM splits vectors of
/// other lengths, such as 28 lanes, into scalar code).
static int64_t columnTile(int64_t range, int64_t lanes, int64_t wanted) {
  if (range % lanes == 0) {
    for (int64_t size = std::min(range, wanted); size >= lanes; size -= lanes)
      if (range % size == 0)
        return size;
  }
  int64_t size = 1;
  while (size * 2 <= std::min(range, lanes) && range % (size * 2) == 0)
    size *= 2;
  return size;
}

SmallVector<int64_t>
mlir::pp::registerTileSizes(ArrayRef<int64_t> loopRanges,
                            unsigned numOutputDims, unsigned elementBits,
                            const RegisterTileShape &shape) {
  SmallVector<int64_t> sizes(loopRanges.size(), 1);
  if (numOutputDims == 0)
    return sizes;
  int64_t lanes = std::max<int64_t>(1, shape.vectorBits / elementBits);
  unsigned col = numOutputDims - 1;
  bool wide = shape.wideVectorsPerRow > shape.vectorsPerRow &&
              loopRanges[col] % lanes == 0 &&
              loopRanges[col] >= lanes * shape.wideVectorsPerRow;
  int64_t perRow = wide ? shape.wideVectorsPerRow : shape.vectorsPerRow;
  sizes[col] = columnTile(loopRanges[col], lanes, lanes * perRow);
  if (numOutputDims >= 2) {
    // Keep rows x vectors accumulators live whatever the column tile is.
    int64_t vectors = (sizes[col] + lanes - 1) / lanes;
    int64_t accumulators = shape.rows * perRow;
    // Several rows of part-vector columns hit an MLIR 22 miscompile (a
    // shape_cast of a broadcast folded wrongly, llvm-project issue 190614;
    // pp's small GPT lost its reference loss with 8 x 8 tiles): one row then.
    int64_t rows = sizes[col] % lanes == 0
                       ? std::max<int64_t>(1, accumulators / vectors)
                       : 1;
    sizes[col - 1] = largestDivisorAtMost(loopRanges[col - 1], rows);
  }
  for (auto [size, range] : llvm::zip(sizes, loopRanges))
    if (size == range)
      size = 0;
  return sizes;
}

/// The innermost output loop of `op`.
static unsigned vectorLoop(linalg::LinalgOp op) {
  AffineMap output = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  return output.getDimPosition(output.getNumResults() - 1);
}

/// The position of `loop` among the results of `map`, if it is one.
static std::optional<unsigned> resultOf(AffineMap map, unsigned loop) {
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
    if (map.getResult(i) == getAffineDimExpr(loop, map.getContext()))
      return i;
  return std::nullopt;
}

SmallVector<OpOperand *> mlir::pp::stridedVectorInputs(linalg::LinalgOp op) {
  unsigned loop = vectorLoop(op);
  SmallVector<OpOperand *> strided;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    std::optional<unsigned> pos = resultOf(map, loop);
    if (pos && *pos + 1 != map.getNumResults())
      strided.push_back(input);
  }
  return strided;
}

SmallVector<int64_t> mlir::pp::innermostLastPermutation(linalg::LinalgOp op,
                                                        OpOperand *input) {
  AffineMap map = op.getMatchingIndexingMap(input);
  unsigned moved = *resultOf(map, vectorLoop(op));
  SmallVector<int64_t> permutation;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i)
    if (i != moved)
      permutation.push_back(i);
  permutation.push_back(moved);
  return permutation;
}

SmallVector<int64_t> mlir::pp::transposeTileSizes(ArrayRef<int64_t> shape,
                                                  ArrayRef<int64_t> permutation,
                                                  int64_t lanes) {
  SmallVector<int64_t> sizes(shape.size(), 1);
  unsigned last = shape.size() - 1;
  // The result dimension that is the input's innermost one.
  unsigned inputInner =
      llvm::find(permutation, int64_t(shape.size() - 1)) - permutation.begin();
  for (unsigned dim : {last, inputInner})
    sizes[dim] = columnTile(shape[dim], lanes, lanes);
  for (auto [size, range] : llvm::zip(sizes, shape))
    if (size == range)
      size = 0;
  return sizes;
}
