//===- ContractionFactoring.h - contractions of products as GEMMs -*- C++
//-*-===//
//
// Plans how a contraction whose body accumulates a product of more than two
// factors (`out + a * b * c / d`) becomes plain two-operand contractions,
// which GEMM libraries and pp-vectorize-contractions take, and cheap
// elementwise ops. Pure planning on loop dimensions, apart from the pass
// that builds the ops (pp-factor-contractions).
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_CONTRACTIONFACTORING_H
#define PP_STAGECODE_CONTRACTIONFACTORING_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::pp {

/// A factor of the product: a tensor read at `dims` (the op's loop
/// dimensions, in the tensor's order; none for a scalar), multiplied or, if
/// `inverse`, divided by.
struct ProductFactor {
  SmallVector<unsigned> dims;
  bool inverse = false;
};

/// A multiplier of one term: the term (input factor or earlier step) and
/// whether it divides.
struct TermMultiplier {
  unsigned term;
  bool inverse;
};

/// One op of the plan. Terms 0..n-1 are the product's factors; step i makes
/// term n + i.
struct FactoringStep {
  enum Kind {
    /// `term(target) * multipliers`, elementwise over the target's dims.
    Scale,
    /// `sum(term(lhs) * term(rhs))` over the dims of both that `dims` lacks.
    Contract
  } kind;
  unsigned lhs = 0, rhs = 0;
  SmallVector<TermMultiplier> multipliers;
  /// The dims of the result, in loop order.
  SmallVector<unsigned> dims;
};

/// `out += term(lhs) * term(rhs)` contracted over the dims the output lacks,
/// after `steps`; with an epilogue, the contraction goes into zeros and
/// `out + contraction * epilogue` is the result.
struct FactoringPlan {
  SmallVector<FactoringStep> steps;
  unsigned lhs = 0, rhs = 0;
  SmallVector<TermMultiplier> epilogue;
};

/// The plan for `out += product(factors)` over loops of `loopSizes`, whose
/// output reads `outDims`: the largest op it leaves (the first pairwise
/// contraction, else the final one) has an m, n and k dimension, a GEMM.
/// Failure when there is none or the product is already two plain factors.
FailureOr<FactoringPlan> planFactoring(ArrayRef<ProductFactor> factors,
                                       ArrayRef<unsigned> outDims,
                                       ArrayRef<int64_t> loopSizes);

} // namespace mlir::pp

#endif
