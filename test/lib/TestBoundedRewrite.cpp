//===- TestBoundedRewrite.cpp - exercise pp::applyPatternsBounded ---------===//
//
// pp-test-bounded-rewrite applies one pattern through applyPatternsBounded
// to each function: `commute` swaps the operands of every arith.addi again
// and again (a set that never converges, like the fold/unfold pairs the
// vectorizers keep apart); `constants-right` swaps them only while the left
// one is a constant (a set that converges).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "pp/StageCode/BoundedRewrite.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct SwapAddOperands : OpRewritePattern<arith::AddIOp> {
  SwapAddOperands(MLIRContext *context, bool always)
      : OpRewritePattern(context), always(always) {}
  LogicalResult matchAndRewrite(arith::AddIOp op,
                                PatternRewriter &rewriter) const override {
    if (!always && !matchPattern(op.getLhs(), m_Constant()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperands({op.getRhs(), op.getLhs()});
    });
    return success();
  }
  bool always;
};

struct TestBoundedRewritePass
    : PassWrapper<TestBoundedRewritePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBoundedRewritePass)
  TestBoundedRewritePass() = default;
  TestBoundedRewritePass(const TestBoundedRewritePass &pass)
      : PassWrapper(pass) {}
  StringRef getArgument() const final { return "pp-test-bounded-rewrite"; }
  StringRef getDescription() const final {
    return "Apply a looping or a converging pattern with a rewrite bound";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }
  void runOnOperation() override {
    if (mode != "commute" && mode != "constants-right") {
      getOperation().emitError("unknown mode '")
          << mode << "'; expected commute or constants-right";
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<SwapAddOperands>(&getContext(), mode == "commute");
    FrozenRewritePatternSet frozen(std::move(patterns));
    if (failed(pp::applyPatternsBounded(getOperation(), frozen, getArgument(),
                                        "swapping addition operands")))
      signalPassFailure();
  }
  Option<std::string> mode{*this, "mode",
                           llvm::cl::desc("commute or constants-right"),
                           llvm::cl::init("commute")};
};
} // namespace

void mlir::pp::registerTestBoundedRewritePass() {
  PassRegistration<TestBoundedRewritePass>();
}
