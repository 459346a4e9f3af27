//===- PartitionPlanner.h - optimal contiguous stage partitions -*- C++ -*-===//
//
// Cuts a chain of ops into contiguous stages placed on ranks so that the
// most loaded rank (the sum of its stages' times) is as light as possible
// while every rank's memory fits its cap: dynamic programming over
// (prefix of ops, stages placed) in the PipeDream/Alpa line, exact for any
// placement of several stages per rank, choosing per stage whether its
// backward recomputes its forward where memory requires it.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_PARTITIONPLANNER_H
#define PP_SCHEDULING_PARTITIONPLANNER_H

#include "pp/Scheduling/ScheduleEnums.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::pp {

// RecomputePolicy (PPEnums.td): which stages of a pipeline recompute their
// forward in their backward (keeping only their inputs from the forward):
// none, every stage, or those the planner picks so that every rank fits its
// memory cap.

} // namespace mlir::pp

namespace mlir::pp::sched {

/// What a stage adds to its rank.
struct StageLoad {
  double time = 0.0;
  double memory = 0.0;
};

/// A chain of `numOps` ops to cut into `stageRank.size()` non-empty,
/// contiguous stages, stage k on rank stageRank[k].
struct PartitionProblem {
  int64_t numOps = 0;
  SmallVector<int64_t> stageRank;
  /// Per cut position i in [0, numOps] (a cut before op i): whether the
  /// planner may cut there, and whether it must.
  SmallVector<bool> mayCut, mustCut;
  /// What stage k holding the ops [begin, end) adds to its rank.
  function_ref<StageLoad(int64_t stage, int64_t begin, int64_t end)> load;
  /// The same when its backward recomputes its forward (more time, less
  /// memory); when set, the planner picks `load` or this per stage, and
  /// recomputes only where that lowers the bottleneck or makes caps fit.
  function_ref<StageLoad(int64_t stage, int64_t begin, int64_t end)>
      recomputeLoad;
  /// The most memory each rank may hold; empty for no caps.
  SmallVector<double> memoryCap;
  /// Micro-batches per step; 0 to rank plans by their bottleneck alone.
  /// With several stages per rank a plan's step is then estimated as M
  /// times its bottleneck plus (ranks - 1) times its largest stage (the
  /// fill and drain of an interleaved pipeline, which a plan that
  /// balances the ranks but not their stages makes as long as without
  /// interleaving).
  int64_t numMicrobatches = 0;

  int64_t getNumStages() const { return stageRank.size(); }
  int64_t getNumRanks() const;
};

/// A solution: where each stage starts and the load of the busiest rank.
struct Partition {
  SmallVector<int64_t> starts;
  /// Per stage, whether it takes `recomputeLoad` (empty without one).
  SmallVector<bool> recompute;
  double bottleneck = 0.0;
  /// Whether no better partition exists: always with one stage per rank;
  /// with several, unless the search had to drop partial plans.
  bool proven = true;
};

/// The partition with the smallest bottleneck among those that cut where
/// they must, only where they may, and fit every cap, and among those the
/// least time added by recomputation; none if no partition does.
///
/// Per (prefix, stages placed) it keeps the Pareto set of the ranks' partial
/// loads and memories (ranks whose last stage is placed contribute only
/// their load to the bottleneck); with one stage per rank that set is a
/// single value and this is the linear-partition DP, O(k n^2). With several
/// stages per rank, the plan that is best when every stage counts as a
/// rank bounds the search, and each set keeps at most a fixed number of the
/// least loaded partial plans (`proven` says whether it had to drop any);
/// with `numMicrobatches` set, that stage-balanced plan is kept when its
/// estimated step is no longer than the least-bottleneck plan's.
std::optional<Partition> planPartition(const PartitionProblem &problem);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_PARTITIONPLANNER_H
