//===- ApproximateMath.cpp - polynomial transcendental functions ----------===//
//
// pp-approximate-math: replaces the f32 math functions of stage code with
// upstream MLIR's polynomial approximations, which vectorize, instead of
// scalar libm calls.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPAPPROXIMATEMATH
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

struct ApproximateMath : pp::impl::PPApproximateMathBase<ApproximateMath> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    SmallVector<std::string> names(ops.begin(), ops.end());
    if (names.empty())
      names = {"tanh", "exp", "expm1", "erf"};
    llvm::StringSet<> selected;
    for (const std::string &name : names)
      selected.insert("math." + name);
    RewritePatternSet set(context);
    populateMathPolynomialApproximationPatterns(
        set, [&](StringRef op) { return selected.contains(op); });
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    if (failed(applyPatternsGreedily(getOperation(), patterns)))
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
