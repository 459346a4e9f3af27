//===- StaticMemory.h - weights, gradients and optimizer state --*- C++ -*-===//
//
// The memory a rank holds whatever the schedule: its stages' weights, their
// gradients and the optimizer's state, per data-parallel replica and ZeRO
// stage, in the runtime's layout (--print-memory prints the same bytes).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_STATICMEMORY_H
#define PP_DIALECT_PP_ANALYSIS_STATICMEMORY_H

#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir::pp {

/// The optimizer the runtime applies (its --optimizer).
enum class OptimizerKind { sgd, adam };

/// Bytes of one rank; `gathered` (ZeRO-3 only) is the whole weights its
/// stages gather for the step, held besides their resident blocks.
struct StaticMemory {
  int64_t weights = 0, gradients = 0, optimizer = 0, gathered = 0;
  int64_t total() const { return weights + gradients + optimizer + gathered; }
};

/// One weight buffer: its values and the bytes of one value.
struct WeightBuffer {
  int64_t numel;
  int64_t elementBytes;
};

/// What replica `replica` of `replicas` holds for `buffers`: the weights,
/// as many gradient bytes, and for Adam two f32 moments per value; under
/// ZeRO-1 (`zero` 1) the moments of the replica's block only, ceil(n / d)
/// values of each buffer (the rest of n for the last owners). SGD keeps no
/// state (8 bytes per f32 parameter); Adam 16, or 8 + 8 / d under ZeRO-1.
/// Under ZeRO-3 (`zero` 3) the weights are the replica's blocks too, and
/// the whole weights count as `gathered`.
StaticMemory getStaticMemory(ArrayRef<WeightBuffer> buffers,
                             OptimizerKind optimizer, int64_t zero,
                             int64_t replicas, int64_t replica = 0);

/// The weight buffer a `param` argument of `type` lives in, if it is a
/// shaped type of static shape.
std::optional<WeightBuffer> getWeightBuffer(Type type);

/// The stage function `compute` names, if the module defines it.
func::FuncOp lookupComputeFunction(ComputeOp compute);

/// Each stage's weight buffers, read from the `param` slots of the stage
/// functions `schedule`'s computes name (each param once); none when a
/// compute names no function (a schedule without its model).
std::optional<SmallVector<SmallVector<WeightBuffer>>>
getStageWeights(ScheduleOp schedule);

/// Each rank's static memory (replica 0, whose ZeRO-1 blocks are the
/// largest) under the schedule's replicas and ZeRO stage; gathered per
/// param (`zero_gather = param`), the most bytes one compute holds whole.
SmallVector<StaticMemory>
getRankStaticMemory(ScheduleOp schedule,
                    ArrayRef<SmallVector<WeightBuffer>> stageWeights,
                    OptimizerKind optimizer);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_STATICMEMORY_H
