//===- CollapseOneHot.cpp - one-hot sums as gathers and scatter-adds ------===//
//
// pp-collapse-one-hot: evaluates a linalg.generic that sums a term zero
// except where a loop equals a computed index at that one iteration: a
// generic reading with tensor.extract (a gather), or a loop nest adding
// into the result's rows (a scatter-add, the gradient of a gather).
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPCOLLAPSEONEHOT
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

/// A one-hot sum: `out + term`, with `term` zero unless `index` equals
/// loop `loop`.
struct OneHotSum {
  unsigned loop;
  Value index;       // in the body, of index type, independent of the loop
  Value term;        // the summand
  BlockArgument acc; // the output's block argument
  Operation *add;    // acc + term, which the op yields
};

/// Where each value of the original body comes from in the rewritten code.
struct BodyValues {
  IRMapping mapping;
  SmallVector<Value> loops; // per original loop; the collapsed one's index
};

} // namespace

/// The value `x` of `condition = (x == linalg.index loop)`, through `andi`.
static Value getHitIndex(Value condition, unsigned loop) {
  if (auto both = condition.getDefiningOp<arith::AndIOp>()) {
    if (Value x = getHitIndex(both.getLhs(), loop))
      return x;
    return getHitIndex(both.getRhs(), loop);
  }
  auto cmp = condition.getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return {};
  auto isLoop = [&](Value v) {
    auto index = v.getDefiningOp<linalg::IndexOp>();
    return index && index.getDim() == loop;
  };
  if (isLoop(cmp.getRhs()))
    return cmp.getLhs();
  if (isLoop(cmp.getLhs()))
    return cmp.getRhs();
  return {};
}

/// The index that `term` is zero unless loop `loop` equals, or null.
static Value getZeroUnless(Value term, unsigned loop) {
  Operation *def = term.getDefiningOp();
  if (!def)
    return {};
  if (auto select = dyn_cast<arith::SelectOp>(def)) {
    if (!matchPattern(select.getFalseValue(), m_AnyZeroFloat()))
      return {};
    return getHitIndex(select.getCondition(), loop);
  }
  if (isa<arith::MulFOp>(def)) {
    if (Value x = getZeroUnless(def->getOperand(0), loop))
      return x;
    return getZeroUnless(def->getOperand(1), loop);
  }
  if (isa<arith::NegFOp, arith::DivFOp>(def))
    return getZeroUnless(def->getOperand(0), loop);
  return {};
}

/// The ops of `body` that computing `value` needs, in body order.
static llvm::SetVector<Operation *> getSlice(Block *body, Value value) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || slice.contains(def))
      continue;
    slice.insert(def);
    def->walk([&](Operation *nested) {
      llvm::append_range(worklist, nested->getOperands());
    });
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
}

/// Whether the body values in `slice` read loop `loop` or an operand it
/// indexes.
static bool readsLoop(linalg::GenericOp op, ArrayRef<Operation *> slice,
                      Value root, unsigned loop) {
  auto usesLoop = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != op.getBlock())
      return false;
    return op.getMatchingIndexingMap(op.getMatchingOpOperand(arg))
        .isFunctionOfDim(loop);
  };
  if (usesLoop(root))
    return true;
  for (Operation *nested : slice) {
    auto index = dyn_cast<linalg::IndexOp>(nested);
    if (index && index.getDim() == loop)
      return true;
    if (llvm::any_of(nested->getOperands(), usesLoop))
      return true;
  }
  return false;
}

/// Whether every indexing map reads its operand at loops or constants.
static bool hasSimpleMaps(linalg::GenericOp op) {
  return llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return llvm::all_of(map.getResults(), [](AffineExpr expr) {
      return isa<AffineDimExpr, AffineConstantExpr>(expr);
    });
  });
}

/// Matches `op` as a one-hot sum over one of its loops (its loop ranges
/// following from its operands' shapes).
static std::optional<OneHotSum> matchOneHotSum(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() < 2 ||
      !op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      !hasSimpleMaps(op) || !op.getShapesToLoopsMap())
    return std::nullopt;
  Block *body = op.getBlock();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body)
    return std::nullopt;
  Value term = add.getLhs() == acc   ? add.getRhs()
               : add.getRhs() == acc ? add.getLhs()
                                     : Value();
  if (!term || !acc.hasOneUse())
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    Value index = getZeroUnless(term, loop);
    if (!index || !index.getType().isIndex())
      continue;
    // A loop the result does not index must be summed over.
    if (!outMap.isFunctionOfDim(loop) &&
        op.getIteratorTypesArray()[loop] != utils::IteratorType::reduction)
      continue;
    llvm::SetVector<Operation *> slice = getSlice(body, index);
    if (readsLoop(op, slice.getArrayRef(), index, loop))
      continue;
    return OneHotSum{loop, index, term, acc, add};
  }
  return std::nullopt;
}

/// The values at which `map` reads its operand, given each loop's value.
static SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                                   ArrayRef<Value> loops) {
  SmallVector<Value> at;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      at.push_back(loops[dim.getPosition()]);
    else
      at.push_back(arith::ConstantIndexOp::create(
          b, loc, cast<AffineConstantExpr>(expr).getValue()));
  }
  return at;
}

/// `index` clamped into [0, size).
static Value clampIndex(OpBuilder &b, Location loc, Value index, int64_t size) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::ConstantIndexOp::create(b, loc, size - 1);
  Value low = arith::MaxSIOp::create(b, loc, index, zero);
  return arith::MinSIOp::create(b, loc, low, last);
}

/// Clones the body of `op` but the final sum into `b`, with the collapsed
/// loop at the (clamped) hit index: first what computes the index, then
/// the operands read along the loop, then the rest. `readArg` gives an
/// operand's element at the given loop values (a block argument or an
/// extract); `values.loops` holds the other loops' values.
static void cloneBody(OpBuilder &b, Location loc, linalg::GenericOp op,
                      const OneHotSum &sum, BodyValues &values,
                      function_ref<Value(OpOperand *)> readArg) {
  Block *body = op.getBlock();
  auto mapArgs = [&](bool alongLoop) {
    for (OpOperand &operand : op->getOpOperands()) {
      bool indexed =
          op.getMatchingIndexingMap(&operand).isFunctionOfDim(sum.loop);
      BlockArgument arg = op.getMatchingBlockArgument(&operand);
      if (indexed == alongLoop && arg != sum.acc && !arg.use_empty())
        values.mapping.map(arg, readArg(&operand));
    }
  };
  auto cloneOp = [&](Operation *nested) {
    if (auto index = dyn_cast<linalg::IndexOp>(nested)) {
      values.mapping.map(index.getResult(), values.loops[index.getDim()]);
      return;
    }
    b.clone(*nested, values.mapping);
  };
  mapArgs(/*alongLoop=*/false);
  llvm::SetVector<Operation *> slice = getSlice(body, sum.index);
  for (Operation *nested : slice)
    cloneOp(nested);
  int64_t size = op.getStaticLoopRanges()[sum.loop];
  values.loops[sum.loop] =
      clampIndex(b, loc, values.mapping.lookupOrDefault(sum.index), size);
  mapArgs(/*alongLoop=*/true);
  for (Operation &nested : body->without_terminator())
    if (!slice.contains(&nested) && &nested != sum.add)
      cloneOp(&nested);
}

/// Whether every loop but `loop` is read by an operand that `loop` does not
/// index: the gather, which keeps only those operands, then still knows its
/// loop ranges.
static bool keepsLoopRanges(linalg::GenericOp op, unsigned loop) {
  llvm::SmallBitVector read(op.getNumLoops());
  read.set(loop);
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.isFunctionOfDim(loop))
      continue;
    for (AffineExpr expr : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        read.set(dim.getPosition());
  }
  return read.all();
}

/// A gather: the same generic without the collapsed loop, reading the
/// operands indexed by it with tensor.extract.
static Value buildGather(OpBuilder &b, linalg::GenericOp op,
                         const OneHotSum &sum) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  unsigned numLoops = op.getNumLoops() - 1;
  // Loop d of the new op is loop d, or d + 1 past the collapsed one.
  SmallVector<AffineExpr> oldToNew;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    oldToNew.push_back(
        d == sum.loop ? getAffineConstantExpr(0, context)
                      : getAffineDimExpr(d < sum.loop ? d : d - 1, context));
  auto dropLoop = [&](AffineMap map) {
    return map.replaceDimsAndSymbols(oldToNew, {}, numLoops, 0);
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<OpOperand *> kept;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.isFunctionOfDim(sum.loop))
      continue;
    inputs.push_back(input->get());
    maps.push_back(dropLoop(map));
    kept.push_back(input);
  }
  OpOperand *init = op.getDpsInitOperand(0);
  maps.push_back(dropLoop(op.getMatchingIndexingMap(init)));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.erase(iterators.begin() + sum.loop);
  auto gather = linalg::GenericOp::create(
      b, loc, op.getResultTypes(), inputs, init->get(), maps, iterators,
      [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
        BodyValues values;
        for (unsigned d = 0, n = 0; d < op.getNumLoops(); ++d)
          values.loops.push_back(
              d == sum.loop
                  ? Value()
                  : linalg::IndexOp::create(nb, bodyLoc, n++).getResult());
        cloneBody(nb, bodyLoc, op, sum, values, [&](OpOperand *operand) {
          auto it = llvm::find(kept, operand);
          if (it != kept.end())
            return Value(args[it - kept.begin()]);
          return tensor::ExtractOp::create(
                     nb, bodyLoc, operand->get(),
                     applyMap(nb, bodyLoc, op.getMatchingIndexingMap(operand),
                              values.loops))
              .getResult();
        });
        Value term = values.mapping.lookup(sum.term);
        linalg::YieldOp::create(
            nb, bodyLoc,
            arith::AddFOp::create(nb, bodyLoc, args.back(), term).getResult());
      });
  return gather.getResult(0);
}

/// A scatter-add: a loop nest over the other loops adding each term into
/// the result's element, carried as a tensor.
static Value buildScatterAdd(OpBuilder &b, linalg::GenericOp op,
                             const OneHotSum &sum) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  BodyValues values;
  values.loops.assign(op.getNumLoops(), Value());
  Value result = op.getDpsInits()[0];
  SmallVector<scf::ForOp> loops;
  OpBuilder::InsertionGuard guard(b);
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    if (d == sum.loop)
      continue;
    Value upper = arith::ConstantIndexOp::create(b, loc, ranges[d]);
    Value carried = loops.empty() ? result : loops.back().getRegionIterArg(0);
    auto loop = scf::ForOp::create(b, loc, zero, upper, one, carried);
    if (!loops.empty())
      scf::YieldOp::create(b, loc, loop.getResult(0));
    b.setInsertionPointToStart(loop.getBody());
    values.loops[d] = loop.getInductionVar();
    loops.push_back(loop);
  }
  Value dest = loops.back().getRegionIterArg(0);
  cloneBody(b, loc, op, sum, values, [&](OpOperand *operand) {
    return tensor::ExtractOp::create(
               b, loc, operand->get(),
               applyMap(b, loc, op.getMatchingIndexingMap(operand),
                        values.loops))
        .getResult();
  });
  SmallVector<Value> at = applyMap(
      b, loc, op.getMatchingIndexingMap(op.getDpsInitOperand(0)), values.loops);
  Value old = tensor::ExtractOp::create(b, loc, dest, at);
  Value added =
      arith::AddFOp::create(b, loc, old, values.mapping.lookup(sum.term));
  Value inserted = tensor::InsertOp::create(b, loc, added, dest, at);
  scf::YieldOp::create(b, loc, inserted);
  return loops.front().getResult(0);
}

namespace {

/// Rewrites each one-hot sum in place. A walk rather than the greedy driver:
/// folding every op on the way would meet generics whose loop ranges do not
/// follow from their shapes (windowed gradients), which linalg.index's fold
/// cannot handle.
struct CollapseOneHot : pp::impl::PPCollapseOneHotBase<CollapseOneHot> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      std::optional<OneHotSum> sum = matchOneHotSum(op);
      if (!sum)
        continue;
      AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
      bool scatter = outMap.isFunctionOfDim(sum->loop);
      if (!scatter && !keepsLoopRanges(op, sum->loop))
        continue;
      rewriter.setInsertionPoint(op);
      Value collapsed = scatter ? buildScatterAdd(rewriter, op, *sum)
                                : buildGather(rewriter, op, *sum);
      rewriter.replaceOp(op, collapsed);
    }
  }
};

} // namespace
