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
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

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

/// `input` without the reshapes and casts around it.
static Value stripReshapes(Value input) {
  while (Operation *def = input.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
            def))
      break;
    input = def->getOperand(0);
  }
  return input;
}

/// The argument of the function's entry block that `input` is, through
/// reshapes; null otherwise.
static BlockArgument getEntryArgument(Value input) {
  auto arg = dyn_cast<BlockArgument>(stripReshapes(input));
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  return func && arg.getOwner() == &func.front() ? arg : BlockArgument();
}

/// The input of `op` that its body value `value` reads, if it is a block
/// argument of an input; null otherwise.
static Value getInputOf(linalg::GenericOp op, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != op.getBlock() ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return {};
  return op.getDpsInputs()[arg.getArgNumber()];
}

/// The integer `value` holds in the body of `op`: a constant, or an input
/// that is a splat constant.
static std::optional<int64_t> getConstantIn(linalg::GenericOp op, Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  Value input = getInputOf(op, value);
  DenseIntElementsAttr splat;
  if (input && matchPattern(input, m_Constant(&splat)) && splat.isSplat())
    return splat.getSplatValue<APInt>().getSExtValue();
  return std::nullopt;
}

/// The training-step argument whose ids a gather reads, and the value its
/// loss ignores, if any.
struct IdSource {
  BlockArgument arg;
  std::optional<int64_t> ignored; // the mask's ignore_index
  int64_t replacement = 0;        // the id an ignored one is read as
};

/// The ids of `input` when it is F.cross_entropy's `ignore_index` mask, as
/// torch-mlir lowers it: elementwise `select(a != K, a, c)` of an entry
/// argument `a` and constants K and c, the condition computed elementwise
/// from the same argument. Null `arg` otherwise.
static IdSource getMaskedIds(Value input) {
  auto select = input.getDefiningOp<linalg::GenericOp>();
  if (!select || select.getNumDpsInits() != 1 ||
      select.getNumReductionLoops() != 0)
    return {};
  auto pick = select.getBlock()
                  ->getTerminator()
                  ->getOperand(0)
                  .getDefiningOp<arith::SelectOp>();
  Value ids = pick ? getInputOf(select, pick.getTrueValue()) : Value();
  Value kept = pick ? getInputOf(select, pick.getCondition()) : Value();
  std::optional<int64_t> replacement =
      pick ? getConstantIn(select, pick.getFalseValue()) : std::nullopt;
  BlockArgument arg = ids ? getEntryArgument(ids) : BlockArgument();
  auto mask =
      kept ? kept.getDefiningOp<linalg::GenericOp>() : linalg::GenericOp();
  if (!arg || !replacement || !mask || mask.getNumDpsInits() != 1)
    return {};
  auto compare = mask.getBlock()
                     ->getTerminator()
                     ->getOperand(0)
                     .getDefiningOp<arith::CmpIOp>();
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::ne)
    return {};
  Value compared = getInputOf(mask, compare.getLhs());
  std::optional<int64_t> ignored = getConstantIn(mask, compare.getRhs());
  if (!compared || getEntryArgument(compared) != arg || !ignored)
    return {};
  return {arg, ignored, *replacement};
}

/// The function argument whose integers the computed index `index` of `op`
/// is, through integer casts in the body and reshapes of the input outside
/// it, or through a loss's `ignore_index` mask; null if it is computed
/// otherwise.
static IdSource getIdSource(linalg::GenericOp op, Value index) {
  Value value = index;
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp>(def))
      return {};
    value = def->getOperand(0);
  }
  Value input = getInputOf(op, value);
  if (!input)
    return {};
  if (BlockArgument arg = getEntryArgument(input))
    return {arg};
  return getMaskedIds(stripReshapes(input));
}

/// Marks each function argument whose ids a gather reads with the rows of
/// the smallest table they index (`pp.id_bound`): the rewrite drops the
/// bounds checks, so the runtime checks the training data instead. An
/// argument every gather reads through the same `ignore_index` mask, which
/// replaces that value by an id within the table, may also hold it
/// (`pp.id_ignored`).
static void markIdBounds(func::FuncOp func) {
  struct Marks {
    int64_t bound = 0;
    std::optional<int64_t> ignored;
    bool unmasked = false; // a gather reads the ids as they are
  };
  llvm::MapVector<unsigned, Marks> marks;
  func.walk([&](linalg::GenericOp op) {
    tensor::ExtractOp extract = getYieldedGather(op);
    if (!extract || failed(classifyIndices(op, extract)))
      return;
    ArrayRef<int64_t> tableShape = extract.getTensor().getType().getShape();
    for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
      IdSource source = getIdSource(op, index);
      if (!source.arg || source.arg.getOwner() != &func.front())
        continue;
      Marks &m = marks[source.arg.getArgNumber()];
      m.bound = m.bound ? std::min(m.bound, tableShape[dim]) : tableShape[dim];
      bool replacedWithin = source.ignored && source.replacement >= 0 &&
                            source.replacement < tableShape[dim];
      if (!replacedWithin || (m.ignored && m.ignored != source.ignored))
        m.unmasked = true;
      else
        m.ignored = source.ignored;
    }
  });
  Builder b(func.getContext());
  for (auto &[i, m] : marks) {
    auto known = func.getArgAttrOfType<IntegerAttr>(i, pp::kIdBoundAttr);
    if (!known || known.getInt() > m.bound)
      func.setArgAttr(i, pp::kIdBoundAttr, b.getI64IntegerAttr(m.bound));
    if (m.ignored && !m.unmasked)
      func.setArgAttr(i, pp::kIdIgnoredAttr, b.getI64IntegerAttr(*m.ignored));
  }
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
