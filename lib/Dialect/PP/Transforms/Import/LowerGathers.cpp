//===- LowerGathers.cpp - gathers in linalg bodies as one-hot reductions --===//
//
// pp-lower-gathers: rewrites a linalg.generic that yields `tensor.extract`
// of a tensor defined outside it (torch-mlir's F.embedding and the target
// pick of F.cross_entropy) into a sum over the gathered dimensions of a
// select, so that the table becomes an operand with an indexing map.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/Transforms/Import/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPLOWERGATHERS
#include "pp/Dialect/PP/Transforms/Import/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

/// How each index of a gather reads its table: a loop of the op
/// (`linalg.index`) or a value computed in the body (a token id).
struct GatherIndices {
  SmallVector<AffineExpr> tableExprs; // one per table dimension
  SmallVector<Value> computed;        // the data-dependent indices, in order
};

struct GatherToOneHot : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override;
};

} // namespace

/// The `tensor.extract` that `op` yields as its only result, of a static
/// float tensor defined outside `op`; null if `op` is no such gather.
static tensor::ExtractOp getYieldedGather(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return {};
  Block *body = op.getBlock();
  auto extract =
      body->getTerminator()->getOperand(0).getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract->getBlock() != body)
    return {};
  Value table = extract.getTensor();
  if (Operation *def = table.getDefiningOp(); def && op->isAncestor(def))
    return {};
  if (auto arg = dyn_cast<BlockArgument>(table);
      arg && op->isAncestor(arg.getOwner()->getParentOp()))
    return {};
  auto type = cast<RankedTensorType>(table.getType());
  if (!type.hasStaticShape() || !isa<FloatType>(type.getElementType()))
    return {};
  if (!op.getMatchingBlockArgument(op.getDpsInitOperand(0)).use_empty())
    return {};
  return extract;
}

/// Classifies the indices of `extract`; fails where a loop index reads a
/// table dimension of another size than the loop's.
static FailureOr<GatherIndices> classifyIndices(linalg::GenericOp op,
                                                tensor::ExtractOp extract) {
  GatherIndices result;
  MLIRContext *context = op.getContext();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  ArrayRef<int64_t> tableShape = extract.getTensor().getType().getShape();
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    auto loop = index.getDefiningOp<linalg::IndexOp>();
    if (loop && loop->getBlock() == op.getBlock()) {
      if (ranges[loop.getDim()] != tableShape[dim])
        return failure();
      result.tableExprs.push_back(getAffineDimExpr(loop.getDim(), context));
      continue;
    }
    result.tableExprs.push_back(
        getAffineDimExpr(op.getNumLoops() + result.computed.size(), context));
    result.computed.push_back(index);
  }
  return result;
}

/// Copies the body of `op` except the gather and its bounds checks; the
/// table element is `tableArg`, and with data-dependent indices it is kept
/// only where each index equals its new loop: out + select(hit, elem, 0).
static void buildOneHotBody(OpBuilder &b, Location loc, linalg::GenericOp op,
                            tensor::ExtractOp extract,
                            const GatherIndices &indices, ValueRange args) {
  Block *body = op.getBlock();
  IRMapping mapping;
  unsigned numInputs = op.getNumDpsInputs();
  for (unsigned i = 0; i < numInputs; ++i)
    mapping.map(body->getArgument(i), args[i]);
  mapping.map(body->getArgument(numInputs), args.back());
  for (Operation &nested : body->without_terminator())
    if (&nested != extract && !isa<cf::AssertOp>(nested))
      b.clone(nested, mapping);
  Value element = args[numInputs];
  if (indices.computed.empty()) {
    linalg::YieldOp::create(b, loc, element);
    return;
  }
  Value hit;
  for (auto [i, index] : llvm::enumerate(indices.computed)) {
    Value loop = linalg::IndexOp::create(b, loc, op.getNumLoops() + i);
    Value equal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        mapping.lookupOrDefault(index), loop);
    hit = hit ? arith::AndIOp::create(b, loc, hit, equal).getResult() : equal;
  }
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(element.getType()));
  Value picked = arith::SelectOp::create(b, loc, hit, element, zero);
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args.back(), picked).getResult());
}

LogicalResult GatherToOneHot::matchAndRewrite(linalg::GenericOp op,
                                              PatternRewriter &rewriter) const {
  tensor::ExtractOp extract = getYieldedGather(op);
  if (!extract)
    return rewriter.notifyMatchFailure(op, "not a gather");
  FailureOr<GatherIndices> indices = classifyIndices(op, extract);
  if (failed(indices))
    return rewriter.notifyMatchFailure(op, "loop and table sizes differ");
  unsigned numLoops = op.getNumLoops() + indices->computed.size();
  MLIRContext *context = op.getContext();
  auto widen = [&](AffineMap map) {
    return AffineMap::get(numLoops, 0, map.getResults(), context);
  };
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands())
    maps.push_back(widen(op.getMatchingIndexingMap(input)));
  maps.push_back(AffineMap::get(numLoops, 0, indices->tableExprs, context));
  maps.push_back(widen(op.getMatchingIndexingMap(op.getDpsInitOperand(0))));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.append(indices->computed.size(), utils::IteratorType::reduction);
  SmallVector<Value> inputs(op.getDpsInputs());
  inputs.push_back(extract.getTensor());

  Location loc = op.getLoc();
  Value init = op.getDpsInits()[0];
  if (!indices->computed.empty()) {
    Type element = getElementTypeOrSelf(init.getType());
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
    init = linalg::FillOp::create(rewriter, loc, zero, init).getResult(0);
  }
  auto oneHot = linalg::GenericOp::create(
      rewriter, loc, op.getResultTypes(), inputs, init, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        buildOneHotBody(b, bodyLoc, op, extract, *indices, args);
      });
  rewriter.replaceOp(op, oneHot.getResults());
  return success();
}

/// The function argument whose integers the computed index `index` of `op`
/// is, through integer casts in the body and reshapes of the input outside
/// it; null if it is computed otherwise.
static BlockArgument getIdArgument(linalg::GenericOp op, Value index) {
  Value value = index;
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp>(def))
      return {};
    value = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != op.getBlock() ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return {};
  Value input = op.getDpsInputs()[arg.getArgNumber()];
  while (Operation *def = input.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
            def))
      return {};
    input = def->getOperand(0);
  }
  auto funcArg = dyn_cast<BlockArgument>(input);
  auto func = funcArg
                  ? dyn_cast<func::FuncOp>(funcArg.getOwner()->getParentOp())
                  : func::FuncOp();
  return func && funcArg.getOwner() == &func.front() ? funcArg
                                                     : BlockArgument();
}

/// Marks each function argument whose ids a gather reads with the rows of
/// the smallest table they index (`pp.id_bound`): the rewrite drops the
/// bounds checks, so the runtime checks the training data instead.
static void markIdBounds(func::FuncOp func) {
  func.walk([&](linalg::GenericOp op) {
    tensor::ExtractOp extract = getYieldedGather(op);
    if (!extract || failed(classifyIndices(op, extract)))
      return;
    ArrayRef<int64_t> tableShape = extract.getTensor().getType().getShape();
    for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
      BlockArgument arg = getIdArgument(op, index);
      if (!arg || arg.getOwner() != &func.front())
        continue;
      unsigned i = arg.getArgNumber();
      auto known = func.getArgAttrOfType<IntegerAttr>(i, pp::kIdBoundAttr);
      if (known && known.getInt() <= tableShape[dim])
        continue;
      func.setArgAttr(i, pp::kIdBoundAttr,
                      Builder(op).getI64IntegerAttr(tableShape[dim]));
    }
  });
}

namespace {
struct LowerGathers : pp::impl::PPLowerGathersBase<LowerGathers> {
  void runOnOperation() override {
    markIdBounds(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns.add<GatherToOneHot>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
