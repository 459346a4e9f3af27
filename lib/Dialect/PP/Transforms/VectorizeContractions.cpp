//===- VectorizeContractions.cpp - register-tiled FMA contractions --------===//
//
// Tiles and vectorizes the contractions of buffer-level stage code into
// register tiles of vector FMAs with upstream linalg, SCF and vector
// transforms.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/Dialect/PP/Utils/ContractionTiling.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir {
namespace pp {
#define GEN_PASS_DEF_PPVECTORIZECONTRACTIONS
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
} // namespace pp
} // namespace mlir

using namespace mlir;
using namespace mlir::pp;

/// The discardable attribute of contractions left to the GEMM library.
static constexpr StringLiteral kGemmAttr = "pp.gemm";

/// Whether `op` writes an output with a unit dimension (a single row, as
/// in a micro-batch of one): simplifying the vectors of such tiles does not
/// converge in MLIR 22 (the unit-dimension patterns undo one another).
static bool hasUnitOutputDim(linalg::LinalgOp op) {
  auto type = cast<ShapedType>(op.getDpsInitOperand(0)->get().getType());
  return llvm::is_contained(type.getShape(), 1);
}

/// Whether the pass rewrites `op`: a contraction on buffers that is not left
/// to the GEMM library.
static bool isCandidate(linalg::LinalgOp op) {
  return !op->hasAttr(kGemmAttr) && op.hasPureBufferSemantics() &&
         isTileableContraction(op) && !hasUnitOutputDim(op);
}

/// `op` as a generic whose inputs are all read by its body.
static linalg::GenericOp dropUnusedInputs(RewriterBase &rewriter,
                                          linalg::GenericOp op) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  llvm::BitVector unused(op.getBlock()->getNumArguments());
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (op.getMatchingBlockArgument(input).use_empty()) {
      unused.set(input->getOperandNumber());
      continue;
    }
    inputs.push_back(input->get());
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  if (unused.none())
    return op;
  maps.push_back(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  rewriter.setInsertionPoint(op);
  auto generic = linalg::GenericOp::create(rewriter, op.getLoc(), TypeRange{},
                                           inputs, op.getDpsInits(), maps,
                                           op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                              generic.getRegion().begin());
  generic.getBlock()->eraseArguments(unused);
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.eraseOp(op);
  return generic;
}

/// Tiles `op` by `sizes` (0: not tiled) and vectorizes every tile.
static LogicalResult tileAndVectorizeOp(RewriterBase &rewriter,
                                        TilingInterface op,
                                        ArrayRef<int64_t> sizes) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), sizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled))
    return op->emitError("cannot tile this op");
  rewriter.eraseOp(op);
  for (Operation *tile : tiled->tiledOps) {
    rewriter.setInsertionPoint(tile);
    if (failed(linalg::vectorize(rewriter, tile, /*inputVectorSizes=*/{},
                                 /*inputScalableVecDims=*/{},
                                 /*vectorizeNDExtract=*/false,
                                 /*flatten1DDepthwiseConv=*/false,
                                 /*assumeDynamicDimsMatchVecSizes=*/false,
                                 /*createNamedContraction=*/true)))
      return tile->emitError("cannot vectorize this tile");
    rewriter.eraseOp(tile);
  }
  return success();
}

/// A buffer for the transposed copy of `input`, on the stack at the start
/// of the enclosing allocation scope (so a loop around `op` reuses it).
static Value transposedBuffer(RewriterBase &rewriter, Operation *op,
                              MemRefType type) {
  OpBuilder::InsertionGuard guard(rewriter);
  Operation *scope =
      op->getParentWithTrait<OpTrait::AutomaticAllocationScope>();
  if (scope && scope->getNumRegions() == 1 && !scope->getRegion(0).empty())
    rewriter.setInsertionPointToStart(&scope->getRegion(0).front());
  else
    rewriter.setInsertionPoint(op);
  return memref::AllocaOp::create(rewriter, op->getLoc(), type);
}

/// Transposes `input` of `op` so that the innermost output loop becomes its
/// innermost dimension, and reads the copy instead.
static LogicalResult transposeInput(RewriterBase &rewriter,
                                    linalg::GenericOp op, OpOperand *input,
                                    int64_t lanes) {
  auto type = cast<MemRefType>(input->get().getType());
  SmallVector<int64_t> permutation = innermostLastPermutation(op, input);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(type.getDimSize(dim));
  Value buffer = transposedBuffer(
      rewriter, op, MemRefType::get(shape, type.getElementType()));
  rewriter.setInsertionPoint(op);
  auto transpose = linalg::TransposeOp::create(
      rewriter, op.getLoc(), input->get(), buffer, permutation);
  AffineMap map = op.getMatchingIndexingMap(input);
  SmallVector<AffineExpr> results;
  for (int64_t dim : permutation)
    results.push_back(map.getResult(dim));
  SmallVector<Attribute> maps(op.getIndexingMaps().getValue());
  maps[input->getOperandNumber()] = AffineMapAttr::get(
      AffineMap::get(map.getNumDims(), 0, results, op.getContext()));
  rewriter.modifyOpInPlace(op, [&] {
    input->set(buffer);
    op.setIndexingMapsAttr(rewriter.getArrayAttr(maps));
  });
  return tileAndVectorizeOp(rewriter,
                            cast<TilingInterface>(transpose.getOperation()),
                            transposeTileSizes(shape, permutation, lanes));
}

namespace {
struct VectorizeContractions
    : public pp::impl::PPVectorizeContractionsBase<VectorizeContractions> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op);
};
} // namespace

/// Rewrites one contraction into a loop nest over vectorized register tiles.
LogicalResult
VectorizeContractions::tileAndVectorize(RewriterBase &rewriter,
                                        linalg::LinalgOp linalgOp) {
  auto generic = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!generic) {
    rewriter.setInsertionPoint(linalgOp);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, linalgOp);
    if (failed(generalized))
      return linalgOp->emitError("cannot generalize this contraction");
    generic = *generalized;
  }
  generic = dropUnusedInputs(rewriter, generic);
  FailureOr<linalg::GenericOp> interchanged = linalg::interchangeGenericOp(
      rewriter, generic, outputMajorLoopOrder(generic));
  if (failed(interchanged))
    return generic->emitError("cannot interchange this contraction");
  generic = *interchanged;
  unsigned elementBits =
      getElementTypeOrSelf(generic.getDpsInitOperand(0)->get().getType())
          .getIntOrFloatBitWidth();
  int64_t lanes = std::max<int64_t>(1, vectorBits / elementBits);
  if (packStrided)
    for (OpOperand *input : stridedVectorInputs(generic))
      if (failed(transposeInput(rewriter, generic, input, lanes)))
        return failure();

  unsigned numOutputDims = generic.getNumParallelLoops();
  RegisterTileShape shape{vectorBits, tileRows, tileVectors};
  SmallVector<int64_t> sizes = registerTileSizes(
      generic.getStaticLoopRanges(), numOutputDims, elementBits, shape);

  return tileAndVectorizeOp(
      rewriter, cast<TilingInterface>(generic.getOperation()), sizes);
}

namespace {
/// `acc + a * b` on vectors as one `vector.fma`: what a contraction with a
/// unit reduction becomes once its unit dimensions are cast away.
struct MultiplyAddToFMA : public OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::AddFOp add,
                                PatternRewriter &rewriter) const override {
    if (!isa<VectorType>(add.getType()))
      return failure();
    for (unsigned i = 0; i < 2; ++i) {
      auto mul = add->getOperand(i).getDefiningOp<arith::MulFOp>();
      if (!mul || !mul->hasOneUse())
        continue;
      rewriter.replaceOpWithNewOp<vector::FMAOp>(
          add, mul.getLhs(), mul.getRhs(), add->getOperand(1 - i));
      return success();
    }
    return failure();
  }
};
} // namespace

/// Folds what vectorizing left behind into `vector.contract`s on vectors
/// without unit dimensions.
static LogicalResult simplifyVectors(Operation *root) {
  MLIRContext *context = root->getContext();
  // Unit dimensions first: the contraction patterns do not see through them.
  RewritePatternSet unitDims(context);
  vector::populateVectorTransferPermutationMapLoweringPatterns(unitDims);
  vector::populateCastAwayVectorLeadingOneDimPatterns(unitDims);
  memref::populateFoldMemRefAliasOpPatterns(unitDims);
  vector::MultiDimReductionOp::getCanonicalizationPatterns(unitDims, context);
  vector::ShapeCastOp::getCanonicalizationPatterns(unitDims, context);
  vector::BroadcastOp::getCanonicalizationPatterns(unitDims, context);
  unitDims.add<MultiplyAddToFMA>(context);
  if (failed(applyPatternsGreedily(root, std::move(unitDims))))
    return failure();
  RewritePatternSet patterns(context);
  vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateSinkVectorOpsPatterns(patterns);
  // Transfers on the tiled buffers themselves, not on subviews, so that
  // hoisting can prove the accumulator is not aliased.
  memref::populateFoldMemRefAliasOpPatterns(patterns);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  vector::populateVectorTransferDropUnitDimsPatterns(patterns);
  vector::populateDropUnitDimWithShapeCastPatterns(patterns);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, context);
  vector::ContractionOp::getCanonicalizationPatterns(patterns, context);
  vector::BroadcastOp::getCanonicalizationPatterns(patterns, context);
  vector::ShapeCastOp::getCanonicalizationPatterns(patterns, context);
  vector::ExtractOp::getCanonicalizationPatterns(patterns, context);
  vector::TransposeOp::getCanonicalizationPatterns(patterns, context);
  memref::SubViewOp::getCanonicalizationPatterns(patterns, context);
  scf::ForOp::getCanonicalizationPatterns(patterns, context);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
  affine::AffineMinOp::getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(root, std::move(patterns));
}

/// Lowers contractions to outer products and FMAs and transfers to 1-D
/// loads and stores, which the LLVM conversion takes as they are.
static LogicalResult
lowerVectors(Operation *root,
             vector::VectorTransposeLowering transposeLowering) {
  MLIRContext *context = root->getContext();
  RewritePatternSet patterns(context);
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorOuterProductLoweringPatterns(patterns);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorStepLoweringPatterns(patterns);
  vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(patterns, transposeLowering);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerParallel);
  vector::populateVectorTransferLoweringPatterns(patterns,
                                                 /*maxTransferRank=*/1);
  populateVectorToSCFConversionPatterns(
      patterns, VectorTransferToSCFOptions().enableFullUnroll());
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  patterns.add<MultiplyAddToFMA>(context);
  vector::populateVectorRankReducingFMAPattern(patterns);
  vector::ExtractOp::getCanonicalizationPatterns(patterns, context);
  vector::BroadcastOp::getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(root, std::move(patterns));
}

void VectorizeContractions::runOnOperation() {
  if (vectorBits < 8 || tileRows < 1 || tileVectors < 1) {
    emitError(getOperation()->getLoc())
        << "pp-vectorize-contractions needs vector-bits >= 8, tile-rows >= 1 "
           "and tile-vectors >= 1";
    return signalPassFailure();
  }
  SmallVector<linalg::LinalgOp> contractions;
  getOperation()->walk([&](linalg::LinalgOp op) {
    if (isCandidate(op))
      contractions.push_back(op);
  });
  if (contractions.empty())
    return;
  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : contractions)
    if (failed(tileAndVectorize(rewriter, op)))
      return signalPassFailure();
  if (failed(simplifyVectors(getOperation())))
    return signalPassFailure();
  // Accumulators stay in registers across the reduction loops.
  getOperation()->walk(
      [](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
  getOperation()->walk([](FunctionOpInterface function) {
    linalg::hoistRedundantVectorTransfers(function);
  });
  // AVX-512 has a dedicated 16x16 transpose lowering.
  auto transposeLowering = vectorBits == 512
                               ? vector::VectorTransposeLowering::Shuffle16x16
                               : vector::VectorTransposeLowering::Shuffle1D;
  if (failed(lowerVectors(getOperation(), transposeLowering)))
    return signalPassFailure();
}
