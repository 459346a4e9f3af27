//===- StaticMemory.cpp - weights, gradients and optimizer state ----------===//
//
// The closed forms of a rank's weight, gradient and optimizer bytes, and the
// weight buffers of a schedule's stage functions they apply to.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/StaticMemory.h"
#include "pp/Dialect/PP/Analysis/ParamGathers.h"
#include "pp/Dialect/PP/IR/PPDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pp;

/// The values of a buffer of `numel` that `replica` owns under ZeRO-1/3:
/// block `replica` of ceil(numel / replicas) values, clipped at the end.
static int64_t getBlockNumel(int64_t numel, int64_t replicas, int64_t replica) {
  int64_t block = (numel + replicas - 1) / replicas;
  int64_t first = replica * block;
  return std::clamp<int64_t>(numel - first, 0, block);
}

StaticMemory mlir::pp::getStaticMemory(ArrayRef<WeightBuffer> buffers,
                                       OptimizerKind optimizer, int64_t zero,
                                       int64_t replicas, int64_t replica) {
  StaticMemory memory;
  bool sharded = (zero == 1 || zero == 3) && replicas > 1;
  for (const WeightBuffer &buffer : buffers) {
    int64_t bytes = buffer.numel * buffer.elementBytes;
    int64_t owned =
        sharded ? getBlockNumel(buffer.numel, replicas, replica) : buffer.numel;
    if (zero == 3 && sharded) {
      memory.weights += owned * buffer.elementBytes;
      memory.gathered += bytes;
    } else {
      memory.weights += bytes;
    }
    memory.gradients += bytes;
    if (optimizer != OptimizerKind::adam)
      continue;
    // Adam's two moments are f32 whatever the weights are.
    memory.optimizer += 2 * owned * static_cast<int64_t>(sizeof(float));
  }
  return memory;
}

std::optional<WeightBuffer> mlir::pp::getWeightBuffer(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape() ||
      !shaped.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = shaped.getElementType().getIntOrFloatBitWidth();
  return WeightBuffer{shaped.getNumElements(), (bits + 7) / 8};
}

std::optional<SmallVector<SmallVector<WeightBuffer>>>
mlir::pp::getStageWeights(ScheduleOp schedule) {
  SmallVector<SmallVector<WeightBuffer>> stages(schedule.getNumStages());
  // A param may be read by several functions of its stage; count it once.
  llvm::DenseSet<int64_t> seen;
  llvm::DenseSet<Operation *> visited;
  bool complete = true;
  schedule.walk([&](ComputeOp compute) {
    func::FuncOp func = lookupComputeFunction(compute);
    if (!func) {
      complete = false;
      return WalkResult::interrupt();
    }
    if (!visited.insert(func).second)
      return WalkResult::advance();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto slot = func.getArgAttrOfType<SlotAttr>(i, kSlotAttr);
      if (!slot || slot.getKind() != SlotKind::Param ||
          !seen.insert(slot.getIndex()).second)
        continue;
      if (std::optional<WeightBuffer> buffer =
              getWeightBuffer(func.getArgumentTypes()[i]))
        stages[compute.getStage()].push_back(*buffer);
    }
    return WalkResult::advance();
  });
  if (!complete)
    return std::nullopt;
  return stages;
}

func::FuncOp mlir::pp::lookupComputeFunction(ComputeOp compute) {
  auto symbol = compute.getFunctionAttr();
  auto module = compute->getParentOfType<ModuleOp>();
  return symbol && module ? module.lookupSymbol<func::FuncOp>(symbol.getAttr())
                          : func::FuncOp();
}

SmallVector<StaticMemory>
mlir::pp::getRankStaticMemory(ScheduleOp schedule,
                              ArrayRef<SmallVector<WeightBuffer>> stageWeights,
                              OptimizerKind optimizer) {
  SmallVector<StaticMemory> ranks(schedule.getNumRanks());
  int64_t replicas = schedule.getNumReplicas().value_or(1);
  for (auto [stage, rank] : llvm::enumerate(schedule.getStageRank())) {
    StaticMemory stageMemory = getStaticMemory(
        stageWeights[stage], optimizer, schedule.getZeroStage(stage), replicas);
    StaticMemory &total = ranks[rank];
    total.weights += stageMemory.weights;
    total.gradients += stageMemory.gradients;
    total.optimizer += stageMemory.optimizer;
    // Gathered per param, the stage's share is its computes' peak below.
    if (schedule.getZeroGatherUnit(stage) != ZeroGather::Param)
      total.gathered += stageMemory.gathered;
  }
  // Gathered per param, a rank holds whole what one compute holds at once,
  // besides the weights its stages gather for the whole step.
  if (replicas > 1 && schedule.hasParamGathers())
    if (std::optional<SmallVector<int64_t>> peaks =
            getRankGatherPeaks(schedule))
      for (auto [total, peak] : llvm::zip(ranks, *peaks))
        total.gathered += peak;
  return ranks;
}
