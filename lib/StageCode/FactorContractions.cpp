//===- FactorContractions.cpp - products in contractions as GEMMs ---------===//
//
// pp-factor-contractions: rewrites contractions whose body accumulates a
// product of more than two factors into plain two-operand contractions and
// elementwise ops, as planned by planFactoring.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/ContractionFactoring.h"
#include "pp/StageCode/GemmLayout.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPFACTORCONTRACTIONS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {

/// `out + sign * product(leaves)`: a leaf is an input's block argument or a
/// scalar defined above the op.
struct BodyProduct {
  struct Leaf {
    Value value;
    bool inverse;
  };
  SmallVector<Leaf> leaves;
  bool negated = false;
};

/// Collects the factors of the product `value`; fails on anything but
/// mulf, divf and negf over block arguments and values from above.
LogicalResult collectFactors(linalg::GenericOp op, Value value, bool inverse,
                             BodyProduct &product, unsigned &numOps) {
  Operation *def = value.getDefiningOp();
  auto arg = dyn_cast<BlockArgument>(value);
  if (arg && arg.getOwner() == op.getBlock()) {
    if (arg.getArgNumber() >= op.getNumDpsInputs())
      return failure();
    product.leaves.push_back({value, inverse});
    return success();
  }
  if (arg || !op->isProperAncestor(def)) {
    product.leaves.push_back({value, inverse});
    return success();
  }
  if (!def->hasOneUse())
    return failure();
  ++numOps;
  auto both = [&](Value lhs, Value rhs, bool rhsInverse) {
    return success(
        succeeded(collectFactors(op, lhs, inverse, product, numOps)) &&
        succeeded(collectFactors(op, rhs, rhsInverse, product, numOps)));
  };
  if (auto mul = dyn_cast<arith::MulFOp>(def))
    return both(mul.getLhs(), mul.getRhs(), inverse);
  if (auto div = dyn_cast<arith::DivFOp>(def))
    return both(div.getLhs(), div.getRhs(), !inverse);
  if (auto neg = dyn_cast<arith::NegFOp>(def)) {
    product.negated = !product.negated;
    return collectFactors(op, neg.getOperand(), inverse, product, numOps);
  }
  return failure();
}

/// The body `yield(out + product)` or `yield(out - product)`, with no other
/// ops; f32 only.
FailureOr<BodyProduct> matchBodyProduct(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      !op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      !cast<ShapedType>(op.getResult(0).getType()).getElementType().isF32() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return failure();
  Block *body = op.getBlock();
  BlockArgument out = op.getRegionOutputArgs()[0];
  Operation *acc = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!acc || !out.hasOneUse() || !acc->hasOneUse() ||
      !isa<arith::AddFOp, arith::SubFOp>(acc))
    return failure();
  BodyProduct product;
  Value term;
  if (acc->getOperand(0) == out)
    term = acc->getOperand(1);
  else if (isa<arith::AddFOp>(acc) && acc->getOperand(1) == out)
    term = acc->getOperand(0);
  else
    return failure();
  product.negated = isa<arith::SubFOp>(acc);
  unsigned numOps = 0;
  if (failed(collectFactors(op, term, false, product, numOps)) ||
      body->getOperations().size() != numOps + 2)
    return failure();
  return product;
}

/// The loop dims `map` reads, in its results' order.
SmallVector<unsigned> readDims(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults())
    dims.push_back(cast<AffineDimExpr>(e).getPosition());
  return dims;
}

/// A term of the plan: a tensor and its loop dims in the tensor's order,
/// or a scalar (no dims).
struct Term {
  Value value;
  SmallVector<unsigned> dims;
};

/// Builds the ops of a plan in front of the op it replaces.
struct PlanBuilder {
  RewriterBase &rewriter;
  Location loc;
  ArrayRef<int64_t> loopSizes;
  SmallVector<Term> terms;

  /// The map from a generic over loop dims `domain` to `term`'s dims.
  AffineMap mapOf(const Term &term, ArrayRef<unsigned> domain) {
    SmallVector<AffineExpr> results;
    for (unsigned d : term.dims)
      results.push_back(
          rewriter.getAffineDimExpr(llvm::find(domain, d) - domain.begin()));
    return AffineMap::get(domain.size(), 0, results, rewriter.getContext());
  }

  Value emptyOver(ArrayRef<unsigned> dims) {
    SmallVector<int64_t> shape;
    for (unsigned d : dims)
      shape.push_back(loopSizes[d]);
    return tensor::EmptyOp::create(rewriter, loc, shape, rewriter.getF32Type());
  }

  Value zerosOver(ArrayRef<unsigned> dims) {
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0f));
    return linalg::FillOp::create(rewriter, loc, ValueRange{zero},
                                  ValueRange{emptyOver(dims)})
        .getResult(0);
  }

  /// `base * multipliers (+ addend)`, elementwise over base's dims.
  Value scale(const Term &base, ArrayRef<TermMultiplier> by,
              std::optional<Term> addend = std::nullopt) {
    ArrayRef<unsigned> domain = base.dims;
    SmallVector<Value> inputs = {base.value};
    SmallVector<AffineMap> maps = {mapOf(base, domain)};
    SmallVector<bool> inverse;
    SmallVector<std::pair<Value, bool>> scalars;
    for (TermMultiplier m : by) {
      const Term &t = terms[m.term];
      if (t.dims.empty() && !isa<RankedTensorType>(t.value.getType())) {
        scalars.push_back({t.value, m.inverse});
        continue;
      }
      inputs.push_back(t.value);
      maps.push_back(mapOf(t, domain));
      inverse.push_back(m.inverse);
    }
    if (addend) {
      inputs.push_back(addend->value);
      maps.push_back(mapOf(*addend, domain));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(domain.size()));
    Value init = emptyOver(domain);
    SmallVector<utils::IteratorType> iterators(domain.size(),
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value acc = args[0];
          auto apply = [&](Value v, bool inv) {
            acc = inv ? arith::DivFOp::create(b, l, acc, v).getResult()
                      : arith::MulFOp::create(b, l, acc, v).getResult();
          };
          for (auto [i, inv] : llvm::enumerate(inverse))
            apply(args[1 + i], inv);
          for (auto [v, inv] : scalars)
            apply(v, inv);
          if (addend)
            acc = arith::AddFOp::create(b, l, args[args.size() - 2], acc);
          linalg::YieldOp::create(b, l, acc);
        });
    return generic.getResult(0);
  }

  /// `init + sum(lhs * rhs)`, the init reading `outDims`.
  Value contract(const Term &lhs, const Term &rhs, Value init,
                 ArrayRef<unsigned> outDims) {
    llvm::SmallBitVector used(loopSizes.size());
    for (ArrayRef<unsigned> dims :
         {ArrayRef(lhs.dims), ArrayRef(rhs.dims), outDims})
      for (unsigned d : dims)
        used.set(d);
    SmallVector<unsigned> domain(used.set_bits());
    SmallVector<utils::IteratorType> iterators;
    for (unsigned d : domain)
      iterators.push_back(llvm::is_contained(outDims, d)
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);
    Term out{init, SmallVector<unsigned>(outDims)};
    SmallVector<AffineMap> maps = {mapOf(lhs, domain), mapOf(rhs, domain),
                                   mapOf(out, domain)};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{lhs.value, rhs.value}, init,
        maps, iterators, [](OpBuilder &b, Location l, ValueRange args) {
          Value product = arith::MulFOp::create(b, l, args[0], args[1]);
          linalg::YieldOp::create(
              b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
        });
    return generic.getResult(0);
  }

  void build(const FactoringStep &step) {
    const Term &lhs = terms[step.lhs];
    Value result =
        step.kind == FactoringStep::Scale
            ? scale(lhs, step.multipliers)
            : contract(lhs, terms[step.rhs], zerosOver(step.dims), step.dims);
    terms.push_back({result, step.dims});
  }

  /// The plan's last contraction into `init` (reading `outDims`), and its
  /// epilogue.
  Value finish(const FactoringPlan &plan, Value init,
               ArrayRef<unsigned> outDims) {
    const Term &lhs = terms[plan.lhs], &rhs = terms[plan.rhs];
    if (plan.epilogue.empty())
      return contract(lhs, rhs, init, outDims);
    Term sum{contract(lhs, rhs, zerosOver(outDims), outDims),
             SmallVector<unsigned>(outDims)};
    return scale(sum, plan.epilogue, Term{init, sum.dims});
  }
};

struct PPFactorContractions
    : pp::impl::PPFactorContractionsBase<PPFactorContractions> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops)
      factor(rewriter, op);
  }

  void factor(IRRewriter &rewriter, linalg::GenericOp op) {
    std::string why;
    if (succeeded(planGemm(op, rowMajorStrides, why)))
      return;
    FailureOr<BodyProduct> product = matchBodyProduct(op);
    if (failed(product))
      return;
    // Each leaf's dims, and a scalar -1 for a negated product.
    SmallVector<ProductFactor> factors;
    for (const BodyProduct::Leaf &leaf : product->leaves)
      factors.push_back({dimsOf(op, leaf.value), leaf.inverse});
    if (product->negated)
      factors.push_back({{}, false});
    SmallVector<unsigned> outDims =
        readDims(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
    SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
    FailureOr<FactoringPlan> plan = planFactoring(factors, outDims, loopSizes);
    if (failed(plan))
      return;
    rewriter.setInsertionPoint(op);
    PlanBuilder builder{rewriter, op.getLoc(), loopSizes, {}};
    for (auto [leaf, factor] : llvm::zip(product->leaves, factors))
      builder.terms.push_back({operandOf(op, leaf.value), factor.dims});
    if (product->negated)
      builder.terms.push_back(
          {arith::ConstantOp::create(rewriter, op.getLoc(),
                                     rewriter.getF32FloatAttr(-1.0f)),
           {}});
    for (const FactoringStep &step : plan->steps)
      builder.build(step);
    rewriter.replaceOp(
        op, builder.finish(*plan, op.getDpsInitOperand(0)->get(), outDims));
  }

  /// The input a leaf reads, or the scalar itself.
  static Value operandOf(linalg::GenericOp op, Value leaf) {
    auto arg = dyn_cast<BlockArgument>(leaf);
    if (!arg || arg.getOwner() != op.getBlock())
      return leaf;
    return op.getDpsInputOperand(arg.getArgNumber())->get();
  }

  static SmallVector<unsigned> dimsOf(linalg::GenericOp op, Value leaf) {
    auto arg = dyn_cast<BlockArgument>(leaf);
    if (!arg || arg.getOwner() != op.getBlock())
      return {};
    return readDims(
        op.getMatchingIndexingMap(op.getDpsInputOperand(arg.getArgNumber())));
  }
};

} // namespace
