//===- SlotShardings.h - how stage-function boundaries split ----*- C++ -*-===//
//
// The slot sharding contract of tensor parallelism: the split of every
// stage-function argument and result that is not replicated over the
// tensor-parallel group, and the steps pp-shard-stages takes on one stage
// function around upstream sharding propagation and partitioning.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_SLOTSHARDINGS_H
#define PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_SLOTSHARDINGS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::pp {

/// The name of the one grid every tensor-parallel stage function uses.
inline constexpr llvm::StringLiteral kTensorParallelGrid = "pp_tp";

/// `pp.split` (an array of arrays of grid axes) as shard split axes.
SmallVector<shard::GridAxesAttr> toSplitAxes(ArrayAttr split);
/// Shard split axes as `pp.split`, trailing unsplit dimensions dropped;
/// null where nothing is split.
ArrayAttr toSplitAttr(MLIRContext *context, ArrayRef<shard::GridAxesAttr> axes);

/// The contract: the `pp.split` of each split slot. A weight's gradient
/// is looked up as the weight. The values a stage function hands to
/// another (saved, stashed, and the keys and values sequence slices carry,
/// with their gradients) are decided by the function that produces them;
/// saved and stashed values are numbered per sequence slice, so their
/// slot is looked up with the slice of the function that reads it.
class SlotShardings {
public:
  /// Collects the weights' splits from the `pp.split` of stage-function
  /// arguments and results in `module`.
  explicit SlotShardings(ModuleOp module);

  /// The split of `slot` (a #pp.slot) in a function of sequence slice
  /// `slice`, or null if it is replicated.
  ArrayAttr lookup(Attribute slot, int64_t slice) const;
  /// Whether `slot` has been decided (weights always are; values handed
  /// between stage functions once their producer is partitioned).
  bool isDecided(Attribute slot, int64_t slice) const;
  void record(Attribute slot, int64_t slice, ArrayAttr split);

private:
  using Key = std::pair<Attribute, int64_t>;
  Key key(Attribute slot, int64_t slice) const;
  DenseMap<Key, ArrayAttr> splits;
  llvm::DenseSet<Key> decided;
};

/// The sequence slice `func` computes (`pp.slice`), 0 if unsliced.
int64_t getSliceOf(func::FuncOp func);

/// One copy of each `tensor.empty` and `linalg.fill` per use, so that
/// propagation can split each use alike.
void cloneEmptiesAndFills(func::FuncOp func);

/// A located error at the first op of `func` that handles tensors but has
/// no sharding rule.
LogicalResult checkShardingRules(func::FuncOp func);

/// Annotates every argument and result of `func` with its split over
/// `grid` (replicated unless the contract splits it); results the contract
/// has not decided yet (saved and stashed values) are left to propagation.
/// Fails, with an error at the function, where `parts` does not divide a
/// split dimension.
LogicalResult annotateBoundary(func::FuncOp func, shard::GridOp grid,
                               const SlotShardings &contract, int64_t parts);

/// After propagation: records the splits chosen for the undecided results
/// in the contract and in `pp.split`, and fails with a located error where
/// a boundary value is resharded (read or produced otherwise than its
/// contract; a replicated argument may be read split).
LogicalResult recordAndCheckBoundary(func::FuncOp func,
                                     SlotShardings &contract);

/// After propagation: annotates as whole the results propagation left
/// without a sharding whose op reads only whole tensors (the op computes
/// its whole result in every process). Upstream visits each op once per
/// direction, so a reshape of a whole value that nothing reads but the
/// return (a saved value) gets none when its producer is annotated after
/// it.
void annotateWholeResults(func::FuncOp func);

/// Before partitioning: a located error at the first op with a result
/// (a non-scalar tensor) that is not read by exactly one `shard.shard`,
/// the sharding upstream `shard-partition` reads (and crashes without).
LogicalResult checkPartitionable(func::FuncOp func);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_SLOTSHARDINGS_H
