//===- VectorizeElementwise.cpp - vector elementwise ops and reductions ---===//
//
// pp-vectorize-elementwise: tiles the elementwise ops and reductions of
// buffer-level stage code into vector-wide tiles along their contiguous loop
// and vectorizes them with upstream linalg, SCF and vector transforms, so
// that reductions accumulate in registers.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/BoundedRewrite.h"
#include "pp/StageCode/ContractionTiling.h"
#include "pp/StageCode/HoistTransfers.h"
#include "pp/StageCode/ParallelLoops.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPVECTORIZEELEMENTWISE
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// The discardable attribute of contractions left to the GEMM library.
static constexpr StringLiteral kGemmAttr = "pp.gemm";

/// Whether the pass rewrites `op`: a static, buffer-level linalg op on
/// integers or floats whose operands are read through projected
/// permutations, that reads no other memory, that is not a contraction
/// reusing an operand (those are pp-vectorize-contractions' or the GEMM
/// library's; a sum of elementwise products is a row or column sum here)
/// and that upstream can vectorize (not a max that also yields its index).
static bool isCandidate(linalg::LinalgOp op) {
  if (op->hasAttr(kGemmAttr) || !op.hasPureBufferSemantics() ||
      op.getNumLoops() == 0 || op.hasDynamicShape() ||
      !linalg::allIndexingsAreProjectedPermutation(op) ||
      (linalg::isaContractionOpInterface(op) && pp::reusesOperands(op)) ||
      pp::isTileableContraction(op) ||
      failed(linalg::vectorizeOpPrecondition(op)))
    return false;
  // A gather (a load at a computed index, as pp-collapse-one-hot writes)
  // stays scalar: the vectorizer reads only the op's operands.
  if (!op.getBlock()->getOps<memref::LoadOp>().empty())
    return false;
  // Masks (memref<...xi1>) stay scalar.
  return llvm::all_of(op->getOperands(), [](Value operand) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    return !type || (pp::hasByteElements(type.getElementType()) &&
                     type.getLayout().isIdentity());
  });
}

/// The loop that runs along the innermost dimension of the op's largest
/// operand: vectorized, it reads and writes that operand contiguously.
/// None when no operand's innermost dimension is a loop (a scalar, or a
/// unit dimension read at a constant 0, as torch-mlir's keepdim shapes are).
static std::optional<unsigned> vectorLoop(linalg::LinalgOp op) {
  OpOperand *largest = nullptr;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.getNumResults() != 0 &&
        isa<AffineDimExpr>(map.getResults().back()) &&
        (!largest || map.getNumResults() >
                         op.getMatchingIndexingMap(largest).getNumResults()))
      largest = &operand;
  }
  if (!largest)
    return std::nullopt;
  AffineMap map = op.getMatchingIndexingMap(largest);
  return cast<AffineDimExpr>(map.getResults().back()).getPosition();
}

/// The largest power of two at most `maxWidth` that divides `extent`: LLVM
/// scalarizes vectors of other widths.
static int64_t tileWidth(int64_t extent, int64_t maxWidth) {
  int64_t width = 1;
  while (width * 2 <= maxWidth && extent % (width * 2) == 0)
    width *= 2;
  return width;
}

/// The loops of an all-parallel op that reads an input transposed: the one
/// its output has innermost and the one that input has innermost, where
/// these differ and both take whole vectors of `lanes`. Tiled by `lanes`
/// along both, each tile loads and stores whole vectors and transposes in
/// registers, where tiles along one of them would load or store every
/// element of the other side alone.
static std::optional<std::pair<unsigned, unsigned>>
transposedLoops(linalg::LinalgOp op, int64_t lanes) {
  if (op.getNumParallelLoops() != op.getNumLoops() ||
      op.getNumDpsInits() != 1 || lanes < 2)
    return std::nullopt;
  AffineMap output = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!output.isPermutation())
    return std::nullopt;
  unsigned written = output.getDimPosition(output.getNumResults() - 1);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isPermutation())
      continue;
    unsigned read = map.getDimPosition(map.getNumResults() - 1);
    if (read != written && ranges[read] % lanes == 0 &&
        ranges[written] % lanes == 0)
      return std::make_pair(written, read);
  }
  return std::nullopt;
}

/// The vector loop of `op` and the tile sizes of its loops: `lanes` along
/// both loops of a transposing op, else vector-wide tiles of up to
/// `maxWidth` along the vector loop; 1 elsewhere. None where `op` stays
/// scalar.
static std::optional<std::pair<unsigned, SmallVector<int64_t>>>
vectorTiles(linalg::LinalgOp op, int64_t lanes, int64_t maxWidth) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 1);
  if (auto loops = transposedLoops(op, lanes)) {
    sizes[loops->first] = sizes[loops->second] = lanes;
    return std::make_pair(loops->first, sizes);
  }
  std::optional<unsigned> vector = vectorLoop(op);
  if (!vector)
    return std::nullopt;
  sizes[*vector] = tileWidth(ranges[*vector], maxWidth);
  if (sizes[*vector] < 2)
    return std::nullopt;
  return std::make_pair(*vector, sizes);
}

/// The bytes of a column sum's accumulator row (the output along its vector
/// loop) that stay in the L1 data cache with the rows streamed through it.
static constexpr int64_t kCachedAccumulatorBytes = 16 * 1024;

/// Whether `op` sums columns (a reduction whose vector loop is parallel)
/// into an accumulator row that fits kCachedAccumulatorBytes: its rows are
/// then better read whole, one after another, adding into that row, than
/// a column strip at a time with the strip's sums in registers, which reads
/// a few cache lines of every row per strip and no page in sequence (a
/// bias gradient's 2048 x 1024 sum took twice as long).
static bool sumsColumnsInCache(linalg::LinalgOp op, unsigned vector) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (linalg::isReductionIterator(iterators[vector]) ||
      op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1)
    return false;
  Type element = getElementTypeOrSelf(op.getDpsInits().front().getType());
  return op.getStaticLoopRanges()[vector] * element.getIntOrFloatBitWidth() /
             8 <=
         kCachedAccumulatorBytes;
}

/// The order of `op`'s tile loops around its vector loop: parallel loops
/// first, then the reductions, so that an accumulator the vector loop does
/// not index stays in a register across them; the vector loop goes before
/// the reductions, or last where it is a reduction itself or the op sums
/// columns into a cached row (sumsColumnsInCache).
static SmallVector<int64_t> loopOrder(linalg::LinalgOp op, unsigned vector) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> order;
  for (bool reductions : {false, true})
    for (unsigned loop = 0; loop < iterators.size(); ++loop)
      if (loop != vector &&
          linalg::isReductionIterator(iterators[loop]) == reductions)
        order.push_back(loop);
  bool last = linalg::isReductionIterator(iterators[vector]) ||
              sumsColumnsInCache(op, vector);
  order.insert(last ? order.end()
                    : llvm::find_if(order,
                                    [&](int64_t loop) {
                                      return linalg::isReductionIterator(
                                          iterators[loop]);
                                    }),
               vector);
  return order;
}

/// Tiles `op` into vector-wide tiles of its vector loop (square tiles where
/// it transposes), every other loop by 1, with the reductions innermost, and
/// vectorizes each tile.
static LogicalResult tileAndVectorize(RewriterBase &rewriter,
                                      linalg::LinalgOp op, int64_t lanes,
                                      int64_t maxWidth) {
  auto tiles = vectorTiles(op, lanes, maxWidth);
  if (!tiles)
    return success();
  auto [vector, sizes] = *tiles;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> order = loopOrder(op, vector);

  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), sizes));
  options.setInterchange(order);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return op->emitError("cannot tile this op");
  pp::markParallelLoops(tiled->loops, order, iterators);
  rewriter.eraseOp(op);
  for (Operation *tile : tiled->tiledOps) {
    rewriter.setInsertionPoint(tile);
    if (failed(linalg::vectorize(rewriter, tile)))
      return tile->emitError("cannot vectorize this tile");
    rewriter.eraseOp(tile);
  }
  return success();
}

/// Casts away the tiles' unit dimensions, leaving 1-D vectors, then folds
/// subviews into the transfers; `pass` names the caller in an error.
static LogicalResult simplifyVectors(Operation *root, StringRef pass) {
  MLIRContext *context = root->getContext();
  RewritePatternSet unitDims(context);
  vector::populateVectorTransferPermutationMapLoweringPatterns(unitDims);
  vector::populateCastAwayVectorLeadingOneDimPatterns(unitDims);
  vector::populateVectorTransferDropUnitDimsPatterns(unitDims);
  vector::populateDropUnitDimWithShapeCastPatterns(unitDims);
  vector::MultiDimReductionOp::getCanonicalizationPatterns(unitDims, context);
  vector::TransferReadOp::getCanonicalizationPatterns(unitDims, context);
  vector::TransferWriteOp::getCanonicalizationPatterns(unitDims, context);
  vector::BroadcastOp::getCanonicalizationPatterns(unitDims, context);
  vector::ShapeCastOp::getCanonicalizationPatterns(unitDims, context);
  vector::ExtractOp::getCanonicalizationPatterns(unitDims, context);
  scf::ForOp::getCanonicalizationPatterns(unitDims, context);
  RewritePatternSet aliasFolding(context);
  pp::populateTransferAliasFoldingPatterns(aliasFolding);
  if (failed(pp::applyPatternsBounded(root, std::move(unitDims), pass,
                                      "dropping unit vector dimensions")))
    return failure();
  return pp::applyPatternsBounded(root, std::move(aliasFolding), pass,
                                  "folding subviews into transfers");
}

/// Lowers reductions to `vector.reduction`, transposes to shuffles (AVX-512's
/// 16 x 16 one where `vectorBits` is 512) and transfers to 1-D loads and
/// stores, which the LLVM conversion takes as they are.
static LogicalResult lowerVectors(Operation *root, StringRef pass,
                                  int64_t vectorBits) {
  MLIRContext *context = root->getContext();
  RewritePatternSet patterns(context);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vectorBits == 512
                    ? vector::VectorTransposeLowering::Shuffle16x16
                    : vector::VectorTransposeLowering::Shuffle1D);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerReduction);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorStepLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  populateVectorToSCFConversionPatterns(
      patterns, VectorTransferToSCFOptions().enableFullUnroll());
  vector::ExtractOp::getCanonicalizationPatterns(patterns, context);
  vector::BroadcastOp::getCanonicalizationPatterns(patterns, context);
  return pp::applyPatternsBounded(root, std::move(patterns), pass,
                                  "lowering vectors");
}

/// Marks float reductions reassociable. Without it LLVM reduces a tile of
/// 64 lanes with 64 dependent adds (an ordered `vector.reduce.fadd`), which
/// made vectorized softmax and layer-norm rows slower than scalar loops.
static void allowReassociation(Operation *root) {
  root->walk([](vector::ReductionOp reduction) {
    if (isa<FloatType>(reduction.getDest().getType()))
      reduction.setFastmath(reduction.getFastmath() |
                            arith::FastMathFlags::reassoc);
  });
}

namespace {
struct VectorizeElementwise
    : pp::impl::PPVectorizeElementwiseBase<VectorizeElementwise> {
  using Base::Base;

  void runOnOperation() override {
    if (vectorBits < 8 || vectorBits > 4096 || maxVectors < 1 ||
        maxVectors > 64) {
      emitError(getOperation()->getLoc())
          << "pp-vectorize-elementwise needs vector-bits between 8 and 4096 "
             "and max-vectors between 1 and 64, got "
          << vectorBits.getValue() << " and " << maxVectors.getValue();
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isCandidate(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      unsigned elementBits = getElementTypeOrSelf(op->getOperand(0).getType())
                                 .getIntOrFloatBitWidth();
      int64_t lanes = std::max<int64_t>(1, vectorBits / elementBits);
      if (failed(tileAndVectorize(rewriter, op, lanes, lanes * maxVectors)))
        return signalPassFailure();
    }
    if (failed(simplifyVectors(getOperation(), getArgument())))
      return signalPassFailure();
    // Accumulators stay in registers across the reduction loops.
    pp::hoistTransfersPerNest(getOperation());
    if (failed(lowerVectors(getOperation(), getArgument(), vectorBits)))
      return signalPassFailure();
    if (reassociate)
      allowReassociation(getOperation());
  }
};
} // namespace
