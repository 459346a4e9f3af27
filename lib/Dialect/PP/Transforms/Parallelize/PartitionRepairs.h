//===- PartitionRepairs.h - what upstream partitioning gets wrong -*- C++
//-*-===//
//
// Rewrites pp-shard-stages makes on a propagated stage function before
// upstream `shard-partition`, where partitioning as is would crash or
// compute something else.
//
//===----------------------------------------------------------------------===//

#ifndef PP_LIB_DIALECT_PP_TRANSFORMS_PARALLELIZE_PARTITIONREPAIRS_H
#define PP_LIB_DIALECT_PP_TRANSFORMS_PARALLELIZE_PARTITIONREPAIRS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::pp {

/// Copies into each linalg body the constants it reads from above:
/// partitioning a split reduction rebuilds the body without them.
void sinkCapturedConstants(func::FuncOp func);

/// Before partitioning: marks every `linalg.index` of a loop that the op's
/// annotated operands split over `grid` with the size of one block.
void markSplitIndices(func::FuncOp func, shard::GridOp grid);

/// After partitioning: offsets each marked `linalg.index` by the start of
/// this process's block, so that it stays global (upstream leaves it
/// local: a vocabulary-split lookup comparing ids with it would be
/// silently wrong).
void offsetSplitIndices(func::FuncOp func, shard::GridOp grid);

} // namespace mlir::pp

#endif // PP_LIB_DIALECT_PP_TRANSFORMS_PARALLELIZE_PARTITIONREPAIRS_H
