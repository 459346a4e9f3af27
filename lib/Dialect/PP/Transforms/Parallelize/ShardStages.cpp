//===- ShardStages.cpp - partition stage functions for tensor parallelism -===//
//
// pp-shard-stages: runs upstream sharding propagation and partitioning on
// every derived stage function, forward first, under the slot sharding
// contract (SlotShardings.h).
//
//===----------------------------------------------------------------------===//

#include "PartitionRepairs.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h"
#include "pp/Dialect/PP/Transforms/Parallelize/SlotShardings.h"

#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPSHARDSTAGES
#include "pp/Dialect/PP/Transforms/Parallelize/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// The derived stage functions of `module`, by stage and phase, forward
/// first, each before the functions that read what it produces: forwards
/// in slice order (a slice's keys and values are carried to the later
/// ones), backwards in reverse (their gradients are carried back).
static SmallVector<func::FuncOp> getStageFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> functions;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kStageAttr) && func->hasAttr(kPhaseAttr) &&
        !func.isExternal())
      functions.push_back(func);
  auto order = [](func::FuncOp func) {
    Phase phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr).getValue();
    int64_t slice = getSliceOf(func);
    return std::make_tuple(
        func->getAttrOfType<IntegerAttr>(kStageAttr).getInt(),
        static_cast<int>(phase), phase == Phase::forward ? slice : -slice);
  };
  llvm::stable_sort(functions, [&](func::FuncOp a, func::FuncOp b) {
    return order(a) < order(b);
  });
  return functions;
}

namespace {
struct ShardStagesPass : pp::impl::PPShardStagesBase<ShardStagesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (tensorParallel < 1) {
      emitError(getOperation().getLoc(), "tensor-parallel must be at least "
                                         "1, not ")
          << int64_t(tensorParallel);
      return signalPassFailure();
    }
    if (tensorParallel == 1)
      return;
    ModuleOp module = getOperation();
    shard::GridOp grid = getOrCreateGrid(module);
    if (!grid)
      return signalPassFailure();
    SlotShardings contract(module);
    for (func::FuncOp func : getStageFunctions(module))
      if (failed(shardFunction(func, grid, contract)))
        return signalPassFailure();
    Builder b(module.getContext());
    for (auto schedule : module.getOps<ScheduleOp>())
      schedule->setAttr(kTensorParallelAttr,
                        b.getI64IntegerAttr(tensorParallel));
  }

  /// The module's `@pp_tp` grid, created at its start if missing.
  shard::GridOp getOrCreateGrid(ModuleOp module) {
    int64_t parts = tensorParallel;
    if (auto grid = module.lookupSymbol<shard::GridOp>(kTensorParallelGrid)) {
      if (grid.getShape().size() == 1 && grid.getShape()[0] == parts)
        return grid;
      grid.emitError("grid @")
          << kTensorParallelGrid << " does not have shape " << parts;
      return nullptr;
    }
    auto b = OpBuilder::atBlockBegin(module.getBody());
    return shard::GridOp::create(b, module.getLoc(), kTensorParallelGrid,
                                 ArrayRef<int64_t>{parts});
  }

  LogicalResult shardFunction(func::FuncOp func, shard::GridOp grid,
                              SlotShardings &contract) {
    cloneEmptiesAndFills(func);
    // No unused tensor.empty may reach shard-partition: it crashes on one.
    OpPassManager prepare(func::FuncOp::getOperationName());
    // Unit dimensions (PyTorch's keepdim reductions write `(d0, d1, 0)`)
    // become reshapes: upstream's linalg rule takes only projected
    // permutations.
    prepare.addPass(createLinalgFoldUnitExtentDimsPass());
    prepare.addPass(createCanonicalizerPass());
    if (failed(runPipeline(prepare, func)) ||
        failed(checkShardingRules(func)) ||
        failed(annotateBoundary(func, grid, contract, tensorParallel)))
      return failure();
    // Forward-backward: the default backward-forward gathers logits a
    // vocabulary-split head could keep local, and forward alone crashes
    // on attention.
    OpPassManager propagate(func::FuncOp::getOperationName());
    shard::ShardingPropagationOptions options;
    options.traversal = shard::TraversalOrder::ForwardBackward;
    propagate.addPass(shard::createShardingPropagation(options));
    if (failed(runPipeline(propagate, func)))
      return failure();
    annotateWholeResults(func);
    if (failed(recordAndCheckBoundary(func, contract)) ||
        failed(checkPartitionable(func)))
      return failure();
    sinkCapturedConstants(func);
    markSplitIndices(func, grid);
    OpPassManager partition(func::FuncOp::getOperationName());
    partition.addPass(shard::createPartition());
    if (failed(runPipeline(partition, func)))
      return failure();
    offsetSplitIndices(func, grid);
    OpPassManager tidy(func::FuncOp::getOperationName());
    tidy.addPass(createCanonicalizerPass());
    return runPipeline(tidy, func);
  }
};
} // namespace
