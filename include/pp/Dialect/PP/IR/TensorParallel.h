//===- TensorParallel.h - pp.* attributes of tensor parallelism -*- C++ -*-===//
//
// The discardable attributes that describe a tensor-parallel program: how
// a stage-function value splits over its group, and the group's size on
// the schedule.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_TENSORPARALLEL_H
#define PP_DIALECT_PP_IR_TENSORPARALLEL_H

#include "pp/Dialect/PP/IR/PPOps.h"

namespace mlir::pp {

/// How a tensor is split over the tensor-parallel group, in the
/// `split_axes` syntax of upstream `shard.sharding` on its one grid axis
/// (`[[], [0]]`: dimension 1 split in T blocks). On a weight of the
/// training step and, after pp-shard-stages, on every stage-function
/// argument and result that is split (the slot sharding contract).
inline constexpr llvm::StringLiteral kSplitAttr = "pp.split";
/// On a pp.schedule: each rank is a tensor-parallel group of this many
/// processes running the same actions (absent: 1).
inline constexpr llvm::StringLiteral kTensorParallelAttr = "pp.tensor_parallel";

/// The `pp.split` of dimension `dim` (`[[], [0]]` for dimension 1).
inline ArrayAttr getSplitAttr(Builder &b, int64_t dim) {
  SmallVector<Attribute> dims(dim + 1, b.getI64ArrayAttr({}));
  dims[dim] = b.getI64ArrayAttr({0});
  return b.getArrayAttr(dims);
}

/// Processes per tensor-parallel group of `schedule`: 1 without tensor
/// parallelism.
inline int64_t getTensorParallelism(ScheduleOp schedule) {
  auto parts = schedule->getAttrOfType<IntegerAttr>(kTensorParallelAttr);
  return parts ? parts.getInt() : 1;
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_TENSORPARALLEL_H
