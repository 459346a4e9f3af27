//===- TensorParallelCollectives.cpp - all-reduces inside stages ----------===//
//
// Counts the tensor-parallel all-reduces of partitioned stage functions and
// the bytes a ring all-reduce moves per device.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/TensorParallelCollectives.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::pp;

AllReduceCount mlir::pp::countAllReduces(Operation *func) {
  AllReduceCount counted;
  func->walk([&](shard::AllReduceOp op) {
    ++counted.count;
    auto shaped = dyn_cast<ShapedType>(op.getInput().getType());
    if (shaped && shaped.hasStaticShape() &&
        shaped.getElementType().isIntOrFloat())
      counted.bytes +=
          shaped.getNumElements() *
          ((shaped.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  });
  return counted;
}

double mlir::pp::getRingAllReduceBytes(int64_t bytes, int64_t parts) {
  if (parts <= 1)
    return 0.0;
  return 2.0 * static_cast<double>(parts - 1) / static_cast<double>(parts) *
         static_cast<double>(bytes);
}

llvm::DenseMap<int64_t, AllReduceCount>
mlir::pp::getTensorParallelAllReduces(ScheduleOp schedule) {
  llvm::DenseMap<int64_t, AllReduceCount> counts;
  auto module = schedule->getParentOfType<ModuleOp>();
  if (!module)
    return counts;
  schedule.walk([&](ComputeOp compute) {
    int64_t key =
        compute.getStage() * 4 + static_cast<int64_t>(compute.getPhase());
    auto symbol = compute.getFunctionAttr();
    if (counts.contains(key) || !symbol)
      return;
    if (auto func = module.lookupSymbol<func::FuncOp>(symbol.getAttr()))
      counts[key] = countAllReduces(func);
  });
  return counts;
}
