//===- TensorParallelCollectives.h - all-reduces inside stages --*- C++ -*-===//
//
// The tensor-parallel all-reduces a partitioned stage function runs every
// time it runs (one micro-batch), and what they move per device.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_TENSORPARALLELCOLLECTIVES_H
#define PP_DIALECT_PP_ANALYSIS_TENSORPARALLELCOLLECTIVES_H

#include "pp/Dialect/PP/IR/PPOps.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::pp {

/// The all-reduces of one stage function: how many, and the bytes of
/// their tensors.
struct AllReduceCount {
  int64_t count = 0;
  int64_t bytes = 0;
};

/// The `shard.all_reduce` ops of `func` (nested ones included).
AllReduceCount countAllReduces(Operation *func);

/// Bytes each of `parts` devices sends (and receives) in a ring all-reduce
/// of `bytes`: 2 (T - 1) / T of them.
double getRingAllReduceBytes(int64_t bytes, int64_t parts);

/// The all-reduces of the function each (stage, phase) of `schedule`'s
/// computes runs, keyed by stage * 4 + phase; functions the module lacks
/// count none.
llvm::DenseMap<int64_t, AllReduceCount>
getTensorParallelAllReduces(ScheduleOp schedule);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_TENSORPARALLELCOLLECTIVES_H
