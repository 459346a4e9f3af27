//===- PlanTensorParallel.cpp - default weight splits ---------------------===//
//
// pp-plan-tensor-parallel: sets `pp.split` on the weights of the training
// step from a named plan (TensorParallelPlan.h).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h"
#include "pp/Dialect/PP/Transforms/Parallelize/TensorParallelPlan.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPPLANTENSORPARALLEL
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {
struct PlanTensorParallelPass
    : pp::impl::PPPlanTensorParallelBase<PlanTensorParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp step = lookupTrainingStep(getOperation(), function);
    if (!step)
      return signalPassFailure();
    if (style != "megatron") {
      emitError(step.getLoc(), "unknown tensor-parallel plan style '")
          << style << "'; the known one is megatron";
      return signalPassFailure();
    }
    // The vocabulary first: Megatron's plan leaves the products of weights
    // already split (the embedding's) to them.
    TensorParallelPlan vocabularyPlan;
    if (vocabulary &&
        failed(planVocabulary(step, tensorParallel, vocabularyPlan)))
      return signalPassFailure();
    apply(step, vocabularyPlan);
    FailureOr<TensorParallelPlan> plan = planMegatron(step, tensorParallel);
    if (failed(plan))
      return signalPassFailure();
    apply(step, *plan);
  }

  static void apply(func::FuncOp step, const TensorParallelPlan &plan) {
    for (auto [arg, split] : plan)
      step.setArgAttr(arg, kSplitAttr, split);
  }
};
} // namespace
