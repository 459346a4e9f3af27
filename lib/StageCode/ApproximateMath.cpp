//===- ApproximateMath.cpp - polynomial transcendental functions ----------===//
//
// pp-approximate-math: replaces the f32 math functions of stage code with
// polynomial approximations, which vectorize, instead of scalar libm calls:
// upstream MLIR's, and pp's own for erf and divisions by constants.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/MathApproximations.h"
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
      names = {"tanh", "exp", "expm1", "erf", "divf"};
    llvm::StringSet<> selected;
    RewritePatternSet set(context);
    for (const std::string &name : names) {
      // erf as one rational polynomial instead of upstream's three
      // intervals' picked by selects.
      if (name == "erf")
        pp::populateRationalErfPattern(set);
      else if (name == "divf")
        pp::populateReciprocalDivisionPattern(set);
      else
        selected.insert("math." + name);
    }
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
