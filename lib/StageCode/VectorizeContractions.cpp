//===- VectorizeContractions.cpp - register-tiled FMA contractions --------===//
//
// Tiles and vectorizes the contractions of buffer-level stage code into
// register tiles of vector FMAs with upstream linalg, SCF and vector
// transforms.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/BoundedRewrite.h"
#include "pp/StageCode/ContractionTiling.h"
#include "pp/StageCode/FoldMemRefAliases.h"
#include "pp/StageCode/HoistTransfers.h"
#include "pp/StageCode/ParallelLoops.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace pp {
#define GEN_PASS_DEF_PPVECTORIZECONTRACTIONS
#include "pp/StageCode/Passes.h.inc"
} // namespace pp
} // namespace mlir

using namespace mlir;
using namespace mlir::pp;

/// The discardable attribute of contractions left to the GEMM library.
static constexpr StringLiteral kGemmAttr = "pp.gemm";

/// Whether the pass rewrites `op`: a contraction on buffers that is not left
/// to the GEMM library (pp-select-gemm decides with the same predicate).
static bool isCandidate(linalg::LinalgOp op) {
  return !op->hasAttr(kGemmAttr) && op.hasPureBufferSemantics() &&
         isVectorizableContraction(op);
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
  SmallVector<int64_t> tiledDims;
  for (auto [dim, size] : llvm::enumerate(sizes))
    if (size != 0)
      tiledDims.push_back(dim);
  pp::markParallelLoops(tiled->loops, tiledDims, op.getLoopIteratorTypes());
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

/// A heap buffer for the transposed copy of `input`, allocated at the start
/// of the enclosing function and freed at its end (so a loop around `op`
/// reuses it); pp-static-scratch then makes it a stack or static buffer.
/// Stacks overflowed when every copy was an alloca (the bench GPT's backward
/// holds over 8 MiB of them).
static Value transposedBuffer(RewriterBase &rewriter, Operation *op,
                              MemRefType type) {
  OpBuilder::InsertionGuard guard(rewriter);
  auto function = op->getParentOfType<FunctionOpInterface>();
  Block *entry = function && function.getFunctionBody().hasOneBlock()
                     ? &function.getFunctionBody().front()
                     : nullptr;
  if (entry)
    rewriter.setInsertionPointToStart(entry);
  else
    rewriter.setInsertionPoint(op);
  Value buffer = memref::AllocOp::create(rewriter, op->getLoc(), type,
                                         rewriter.getI64IntegerAttr(64));
  if (entry)
    rewriter.setInsertionPoint(entry->getTerminator());
  else
    rewriter.setInsertionPointAfter(op);
  memref::DeallocOp::create(rewriter, op->getLoc(), buffer);
  return buffer;
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

  LogicalResult initialize(MLIRContext *context) override;
  void runOnOperation() override;

private:
  LogicalResult tileAndVectorize(RewriterBase &rewriter, linalg::LinalgOp op);
  LogicalResult vectorizeFunction(FunctionOpInterface function);

  FrozenRewritePatternSet unitDimPatterns;
  FrozenRewritePatternSet contractionPatterns;
  FrozenRewritePatternSet aliasFoldingPatterns;
  FrozenRewritePatternSet loweringPatterns;
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
  // Wide tiles need AVX-512's 32 registers: on AVX2's 16 their accumulators
  // would leave none for the inputs.
  RegisterTileShape shape{vectorBits, tileRows, tileVectors,
                          vectorBits >= 512 ? wideTileVectors : 0};
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

/// Patterns that fold what vectorizing left behind into `vector.contract`s
/// on vectors without unit dimensions, in three sets applied in turn. Each
/// converges on its own; together they would not: the drop-unit-dims
/// transfer patterns read through a rank-reducing subview that the memref
/// alias folding folds straight back.
static void populateUnitDimPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  // Unit dimensions first: the contraction patterns do not see through them.
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  pp::populateFoldMemRefAliasPatterns(patterns);
  vector::MultiDimReductionOp::getCanonicalizationPatterns(patterns, context);
  vector::ShapeCastOp::getCanonicalizationPatterns(patterns, context);
  vector::BroadcastOp::getCanonicalizationPatterns(patterns, context);
  patterns.add<MultiplyAddToFMA>(context);
}

static void populateContractionPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateSinkVectorOpsPatterns(patterns);
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
}

/// Patterns that lower contractions to outer products and FMAs and
/// transfers to 1-D loads and stores, which the LLVM conversion takes as
/// they are.
static void
populateLoweringPatterns(RewritePatternSet &patterns,
                         vector::VectorTransposeLowering transposeLowering) {
  MLIRContext *context = patterns.getContext();
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
  vector::TransposeOp::getCanonicalizationPatterns(patterns, context);
}

LogicalResult VectorizeContractions::initialize(MLIRContext *context) {
  auto freeze = [&](auto populate) {
    RewritePatternSet patterns(context);
    populate(patterns);
    return FrozenRewritePatternSet(std::move(patterns));
  };
  unitDimPatterns = freeze(populateUnitDimPatterns);
  contractionPatterns = freeze(populateContractionPatterns);
  aliasFoldingPatterns = freeze(pp::populateTransferAliasFoldingPatterns);
  // AVX-512 has a dedicated 16x16 transpose lowering.
  auto transposeLowering = vectorBits == 512
                               ? vector::VectorTransposeLowering::Shuffle16x16
                               : vector::VectorTransposeLowering::Shuffle1D;
  loweringPatterns = freeze([&](RewritePatternSet &patterns) {
    populateLoweringPatterns(patterns, transposeLowering);
  });
  return success();
}

LogicalResult
VectorizeContractions::vectorizeFunction(FunctionOpInterface function) {
  SmallVector<linalg::LinalgOp> contractions;
  function->walk([&](linalg::LinalgOp op) {
    if (isCandidate(op))
      contractions.push_back(op);
  });
  if (contractions.empty())
    return success();
  IRRewriter rewriter(function->getContext());
  for (linalg::LinalgOp op : contractions)
    if (failed(tileAndVectorize(rewriter, op)))
      return failure();
  StringRef pass = getArgument();
  if (failed(applyPatternsBounded(function, unitDimPatterns, pass,
                                  "dropping unit vector dimensions")) ||
      failed(applyPatternsBounded(function, contractionPatterns, pass,
                                  "folding tiles into vector.contract")) ||
      failed(applyPatternsBounded(function, aliasFoldingPatterns, pass,
                                  "folding subviews into transfers")))
    return failure();
  // Accumulators stay in registers across the reduction loops.
  hoistTransfersPerNest(function);
  return applyPatternsBounded(function, loweringPatterns, pass,
                              "lowering vectors");
}

void VectorizeContractions::runOnOperation() {
  // Within any ISA's registers: vector-bits=2^63-1 made vectors of whole
  // dimensions (vector<4096xf32>).
  if (vectorBits < 8 || vectorBits > 4096 || tileRows < 1 || tileRows > 64 ||
      tileVectors < 1 || tileVectors > 64 || wideTileVectors < 0 ||
      wideTileVectors > 64) {
    emitError(getOperation()->getLoc())
        << "pp-vectorize-contractions needs vector-bits between 8 and 4096, "
           "tile-rows and tile-vectors between 1 and 64 and wide-tile-vectors "
           "between 0 and 64, got "
        << vectorBits.getValue() << ", " << tileRows.getValue() << ", "
        << tileVectors.getValue() << " and " << wideTileVectors.getValue();
    return signalPassFailure();
  }
  // Function by function, so that the cost is linear in the module.
  SmallVector<FunctionOpInterface> functions;
  getOperation()->walk(
      [&](FunctionOpInterface function) { functions.push_back(function); });
  for (FunctionOpInterface function : functions)
    if (failed(vectorizeFunction(function)))
      return signalPassFailure();
}
