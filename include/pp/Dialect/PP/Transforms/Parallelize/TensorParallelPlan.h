//===- TensorParallelPlan.h - how weights split over a TP group -*- C++ -*-===//
//
// Plans of tensor parallelism on a training step: which weights split on
// which dimension, as `pp.split` values; pp-plan-tensor-parallel sets them.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORPARALLELPLAN_H
#define PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORPARALLELPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::pp {

/// The `pp.split` of each weight (a training-step argument number) a plan
/// splits.
using TensorParallelPlan = llvm::MapVector<unsigned, ArrayAttr>;

/// Megatron's plan: the step's products of an activation by a 2-D weight,
/// in program order, paired column-parallel then row-parallel, and the 1-D
/// weights broadcast onto a column-parallel product split with it. Pairs
/// with a weight the user already split are skipped. Fails, with an error
/// at the `linalg.index` and a note at the weight, where a split dimension
/// reaches an op that reads its own index there.
FailureOr<TensorParallelPlan> planMegatron(func::FuncOp step);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORPARALLELPLAN_H
