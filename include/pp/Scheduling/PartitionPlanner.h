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

// RecomputePolicy (ScheduleOptionEnums.td): which stages of a pipeline
// recompute their forward in their backward (keeping only their inputs from
// the forward): none, every stage, or those the planner picks so that every
// rank fits its memory cap.

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

/// A training step's chain of ops to cut into pipeline stages, each stage on
/// the rank a schedule gives it: what an op costs on a rank, and what a
/// range of ops holds.
struct StageCutProblem {
  int64_t numOps = 0;
  /// Per stage: its rank, and how many micro-batches of it the rank holds
  /// at most.
  SmallVector<int64_t> stageRank;
  SmallVector<double> inFlight;
  /// The most memory each rank may hold.
  SmallVector<double> memoryCap;
  /// Micro-batches per step (PartitionProblem::numMicrobatches).
  int64_t numMicrobatches = 0;
  /// Bytes each rank holds per byte of its stages' weights.
  double weightCopies = 2.0;
  RecomputePolicy recompute = RecomputePolicy::None;
  /// Per cut position in [0, numOps]: whether a cut may go there (it keeps
  /// each weight's users in one stage); and the cuts that must be made.
  SmallVector<bool> mayCut;
  SmallVector<int64_t> markerCuts;
  /// F + B + W, and F, of op `op` on rank `rank`.
  function_ref<double(int64_t op, int64_t rank)> computeTime, forwardTime;
  /// Time to send what crosses a cut before op `cut` from rank `from` to
  /// rank `to`.
  function_ref<double(int64_t cut, int64_t from, int64_t to)> transferTime;
  /// Weight, activation and input bytes of the ops [begin, end).
  function_ref<double(int64_t begin, int64_t end)> parameterBytes,
      activationBytes, inputBytes;

  int64_t getNumStages() const { return stageRank.size(); }
  int64_t getNumRanks() const { return memoryCap.size(); }
};

/// The stages planned for a chain, or why there are none.
struct StageCuts {
  /// The cuts and which stages recompute (one entry per stage); none when
  /// no partition cuts where it must and keeps weights' users together, or
  /// none fits the memory caps.
  std::optional<Partition> partition;
  /// What each planned stage adds to its rank.
  SmallVector<StageLoad> loads;
  /// Whether partitions exist but none fits the caps; then the smallest
  /// factor by which every cap must grow for one to fit, if any does.
  bool overMemory = false;
  std::optional<double> capFactor;
};

/// Plans the cuts of `problem` that minimise the busiest rank's time (its
/// stages' F + B + W and the transfers at their boundaries) while every
/// rank's weights and activations in flight fit its cap, recomputing the
/// stages the policy asks for.
StageCuts planStageCuts(const StageCutProblem &problem);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_PARTITIONPLANNER_H
