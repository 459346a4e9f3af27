//===- ContractionFactoring.cpp - contractions of products as GEMMs -------===//

#include "pp/StageCode/ContractionFactoring.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::pp;

namespace {

using DimSet = llvm::SmallBitVector;

/// The terms made so far and the plan that makes them.
struct Planner {
  ArrayRef<int64_t> sizes;
  DimSet out;
  /// Each term's dims in its tensor's order, and as a set.
  SmallVector<SmallVector<unsigned>> order;
  SmallVector<DimSet> dims;
  FactoringPlan plan;

  DimSet toSet(ArrayRef<unsigned> list) const {
    DimSet set(sizes.size());
    for (unsigned d : list)
      set.set(d);
    return set;
  }

  int64_t volume(const DimSet &set) const {
    int64_t v = 1;
    for (unsigned d : set.set_bits())
      v *= sizes[d];
    return v;
  }

  unsigned addTerm(SmallVector<unsigned> list) {
    dims.push_back(toSet(list));
    order.push_back(std::move(list));
    return dims.size() - 1;
  }

  unsigned addStep(FactoringStep step) {
    unsigned term = addTerm(step.dims);
    plan.steps.push_back(std::move(step));
    return term;
  }
};

} // namespace

static bool isSubset(const DimSet &a, const DimSet &b) { return !a.test(b); }

/// Whether `sum(x * y)` into `result` is a GEMM: x and y each have a
/// result dimension the other lacks (m and n), and share a contracted one.
static bool isGemmShaped(const DimSet &x, const DimSet &y,
                         const DimSet &result) {
  DimSet m = x, n = y, k = x;
  m.reset(y);
  m &= result;
  n.reset(x);
  n &= result;
  k &= y;
  k.reset(result);
  return m.any() && n.any() && k.any();
}

static SmallVector<unsigned> inLoopOrder(const DimSet &set) {
  return SmallVector<unsigned>(set.set_bits());
}

/// Contracts the pair of `mains` whose dims no other term reads and whose
/// result is smallest; false when no pair is a GEMM.
static bool contractBestPair(Planner &p, SmallVectorImpl<unsigned> &mains,
                             ArrayRef<TermMultiplier> sides) {
  std::optional<std::pair<size_t, size_t>> best;
  DimSet bestResult;
  for (size_t i = 0; i < mains.size(); ++i) {
    for (size_t j = i + 1; j < mains.size(); ++j) {
      DimSet others = p.out;
      for (size_t o = 0; o < mains.size(); ++o)
        if (o != i && o != j)
          others |= p.dims[mains[o]];
      for (TermMultiplier side : sides)
        others |= p.dims[side.term];
      DimSet both = p.dims[mains[i]] | p.dims[mains[j]];
      DimSet result = both & others;
      if (!isGemmShaped(p.dims[mains[i]], p.dims[mains[j]], result))
        continue;
      if (!best || p.volume(result) < p.volume(bestResult)) {
        best = {i, j};
        bestResult = result;
      }
    }
  }
  if (!best)
    return false;
  FactoringStep step{FactoringStep::Contract};
  step.lhs = mains[best->first];
  step.rhs = mains[best->second];
  step.dims = inLoopOrder(bestResult);
  mains.erase(mains.begin() + best->second);
  mains.erase(mains.begin() + best->first);
  mains.push_back(p.addStep(std::move(step)));
  return true;
}

/// Places each side factor where it costs least: the output (epilogue) or
/// one of the two contracted terms, whichever has its dims and is smallest.
static LogicalResult placeSides(Planner &p, ArrayRef<TermMultiplier> sides,
                                unsigned &lhs, unsigned &rhs) {
  SmallVector<TermMultiplier> toLhs, toRhs;
  for (TermMultiplier side : sides) {
    const DimSet &d = p.dims[side.term];
    int64_t cost = INT64_MAX;
    SmallVector<TermMultiplier> *target = nullptr;
    auto consider = [&](const DimSet &domain, SmallVector<TermMultiplier> &to) {
      if (isSubset(d, domain) && p.volume(domain) < cost) {
        cost = p.volume(domain);
        target = &to;
      }
    };
    consider(p.out, p.plan.epilogue);
    consider(p.dims[lhs], toLhs);
    consider(p.dims[rhs], toRhs);
    if (!target)
      return failure();
    target->push_back(side);
  }
  auto scale = [&](unsigned &term, SmallVector<TermMultiplier> &by) {
    if (by.empty())
      return;
    FactoringStep step{FactoringStep::Scale};
    step.lhs = term;
    step.multipliers = std::move(by);
    step.dims = p.order[term];
    term = p.addStep(std::move(step));
  };
  scale(lhs, toLhs);
  scale(rhs, toRhs);
  return success();
}

FailureOr<FactoringPlan>
mlir::pp::planFactoring(ArrayRef<ProductFactor> factors,
                        ArrayRef<unsigned> outDims,
                        ArrayRef<int64_t> loopSizes) {
  Planner p{loopSizes, DimSet(loopSizes.size()), {}, {}, {}};
  p.out = p.toSet(outDims);
  DimSet reduced = p.out;
  reduced.flip();
  SmallVector<unsigned> mains;
  SmallVector<TermMultiplier> sides;
  for (const ProductFactor &factor : factors) {
    unsigned term = p.addTerm(factor.dims);
    if (!factor.inverse && p.dims[term].anyCommon(reduced))
      mains.push_back(term);
    else
      sides.push_back({term, factor.inverse});
  }
  bool paired = false;
  while (mains.size() > 2) {
    if (!contractBestPair(p, mains, sides))
      return failure();
    paired = true;
    if (!p.dims[mains.back()].anyCommon(reduced)) {
      sides.push_back({mains.back(), false});
      mains.pop_back();
    }
  }
  if (mains.size() != 2 || (!paired && sides.empty()))
    return failure();
  unsigned lhs = mains[0], rhs = mains[1];
  // Without a pairwise contraction first, the final one has every loop.
  if (!paired && !isGemmShaped(p.dims[lhs], p.dims[rhs], p.out))
    return failure();
  if (failed(placeSides(p, sides, lhs, rhs)))
    return failure();
  p.plan.lhs = lhs;
  p.plan.rhs = rhs;
  return std::move(p.plan);
}
