//===- FoldGemmAdds.cpp - elementwise adds into library GEMMs' C ----------===//
//
// pp-fold-gemm-adds: a tensor added elementwise to a library GEMM's result
// (a linear layer's bias, a residual) becomes the GEMM's initial C, which
// the runtime call accumulates into with beta = 1: no pass over the
// product.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPFOLDGEMMADDS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// Whether `op` adds its two inputs elementwise: every loop parallel, the
/// result's map the identity, the init unread, the body one arith.addf of
/// both inputs.
static bool isElementwiseAdd(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body || body->getOperations().size() != 2)
    return false;
  return llvm::is_contained({add.getLhs(), add.getRhs()},
                            Value(body->getArgument(0))) &&
         llvm::is_contained({add.getLhs(), add.getRhs()},
                            Value(body->getArgument(1)));
}

/// Whether `value` is defined before `op`: a block argument or a result of
/// an op ahead of `op` in `op`'s block or a block enclosing it. No
/// dominator tree is needed: the check is conservative across the blocks
/// of one region, which stage code does not have.
static bool isDefinedBefore(Value value, Operation *op) {
  Operation *ancestor = value.getParentBlock()->findAncestorOpInBlock(*op);
  Operation *def = value.getDefiningOp();
  return ancestor && (!def || def->isBeforeInBlock(ancestor));
}

namespace {

/// A library GEMM whose result is only the add's operand, directly or
/// through one reshape used nowhere else.
struct GemmOperand {
  linalg::LinalgOp gemm;
  Operation *reshape = nullptr;
};

} // namespace

/// The GEMM behind `value`, if it is a library GEMM without batch loops
/// (the attention's batched products stay as they are) whose result has no
/// other use.
static std::optional<GemmOperand> getGemmOperand(Value value) {
  GemmOperand found;
  if (isa_and_present<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
          value.getDefiningOp())) {
    found.reshape = value.getDefiningOp();
    if (!value.hasOneUse())
      return std::nullopt;
    value = found.reshape->getOperand(0);
  }
  found.gemm = value.getDefiningOp<linalg::LinalgOp>();
  if (!found.gemm || !value.hasOneUse() || found.gemm->getNumResults() != 1 ||
      found.gemm.getNumDpsInits() != 1 || found.gemm.getNumLoops() != 3 ||
      !found.gemm.hasPureTensorSemantics())
    return std::nullopt;
  auto choice = found.gemm->getAttrOfType<StringAttr>(pp::kGemmAttrName);
  if (!choice || choice.getValue() != pp::kGemmLibrary)
    return std::nullopt;
  return found;
}

/// `value` reshaped back to the shape `reshape` took its source from.
static Value reshapeBack(OpBuilder &builder, Operation *reshape, Value value) {
  Location loc = reshape->getLoc();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
    return tensor::CollapseShapeOp::create(builder, loc, expand.getSrcType(),
                                           value,
                                           expand.getReassociationIndices());
  auto collapse = cast<tensor::CollapseShapeOp>(reshape);
  return tensor::ExpandShapeOp::create(builder, loc, collapse.getSrcType(),
                                       value,
                                       collapse.getReassociationIndices());
}

/// An all-parallel generic over `type` that yields `add` of its inputs'
/// elements: the first input when there is one, else their sum.
static linalg::GenericOp buildInit(OpBuilder &builder, Location loc,
                                   RankedTensorType type, ValueRange inputs,
                                   ArrayRef<AffineMap> inputMaps) {
  Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                        type.getElementType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(builder.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
      builder, loc, type, inputs, empty, maps, iterators,
      [&](OpBuilder &body, Location bodyLoc, ValueRange args) {
        Value result = args[0];
        if (inputs.size() == 2)
          result = arith::AddFOp::create(body, bodyLoc, args[0], args[1]);
        linalg::YieldOp::create(body, bodyLoc, result);
      });
}

namespace {

/// add(gemm(A, B, C), X) -> gemm(A, B, C + X), the GEMM's result read
/// through the identity (after at most one reshape) and X defined before
/// the GEMM. A zero C becomes X alone; a C that is itself an elementwise
/// generic used only here (an earlier fold's bias) takes the sum in its
/// own loop.
struct FoldGemmAdd : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp add,
                                PatternRewriter &rewriter) const override {
    if (!isElementwiseAdd(add))
      return failure();
    for (int i = 0; i < 2; ++i)
      if (succeeded(fold(add, *add.getDpsInputOperand(i),
                         *add.getDpsInputOperand(1 - i), rewriter)))
        return success();
    return rewriter.notifyMatchFailure(add, "no library GEMM to fold into");
  }

  LogicalResult fold(linalg::GenericOp add, OpOperand &product,
                     OpOperand &addend, PatternRewriter &rewriter) const {
    std::optional<GemmOperand> source = getGemmOperand(product.get());
    AffineMap addendMap = add.getMatchingIndexingMap(&addend);
    if (!source || !add.getMatchingIndexingMap(&product).isIdentity() ||
        (source->reshape && !addendMap.isIdentity()) ||
        !isDefinedBefore(addend.get(), source->gemm))
      return failure();
    linalg::LinalgOp gemm = source->gemm;
    OpOperand *c = gemm.getDpsInitOperand(0);
    auto type = cast<RankedTensorType>(c->get().getType());
    rewriter.setInsertionPoint(gemm);
    AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
    Value x = addend.get();
    if (source->reshape) {
      x = reshapeBack(rewriter, source->reshape, x);
      addendMap = identity;
    }
    auto fill = c->get().getDefiningOp<linalg::FillOp>();
    bool zero =
        fill && matchPattern(fill.getInputs().front(), m_AnyZeroFloat());
    linalg::GenericOp init =
        zero ? buildInit(rewriter, add.getLoc(), type, x, addendMap)
             : buildInit(rewriter, add.getLoc(), type, {c->get(), x},
                         {identity, addendMap});
    Value producer = c->get();
    rewriter.modifyOpInPlace(gemm, [&] { c->set(init->getResult(0)); });
    if (!zero)
      fuseProducer(init, producer, rewriter);
    rewriter.replaceOp(add, source->reshape ? source->reshape->getResult(0)
                                            : gemm->getResult(0));
    return success();
  }

  /// Fuses the generic that made the old C into the new C's loop, so that
  /// a bias and a residual take one pass.
  static void fuseProducer(linalg::GenericOp init, Value producer,
                           PatternRewriter &rewriter) {
    auto generic = producer.getDefiningOp<linalg::GenericOp>();
    if (!generic || !producer.hasOneUse() ||
        generic.getNumParallelLoops() != generic.getNumLoops())
      return;
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, init.getDpsInputOperand(0));
    if (failed(fused))
      return;
    rewriter.replaceOp(init, fused->replacements.at(init->getResult(0)));
    rewriter.eraseOp(generic);
  }
};

struct FoldGemmAdds : pp::impl::PPFoldGemmAddsBase<FoldGemmAdds> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldGemmAdd>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
