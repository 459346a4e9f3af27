//===- ParallelismPlanner.h - choose T, P and the replica count -*- C++ -*-===//
//
// Splits a number of devices into tensor-parallel groups of T, pipelines of
// P stages and R data-parallel replicas (T x P x R devices): for every such
// layout it plans the stages with the partition planner, times one step of
// the schedule with the one timing model (tensor-parallel all-reduces
// inside the compute actions, the replicas' gradient all-reduces or ZeRO
// collectives), counts each device's weights, gradients, optimizer state
// and activations against its memory, and picks the layout that trains a
// batch fastest, each pipeline stage under the ZeRO level of least
// communication that fits it (docs/TensorParallel.md, "Planning the
// layout"; docs/DataParallel.md, "Choosing the ZeRO stage").
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_PARALLELISMPLANNER_H
#define PP_SCHEDULING_PARALLELISMPLANNER_H

#include "pp/Scheduling/Device.h"
#include "pp/Scheduling/ScheduleOption.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace mlir::pp::sched {

/// A training step's chain of ops on one device, as the layout planner cuts
/// and splits it (the stage cost model's chain, on plain data).
struct LayoutChain {
  /// Per op: F, and F + B + W, on the device.
  SmallVector<double> forward, compute;
  /// Per op: the weights it reads, indices into `weightBytes`.
  SmallVector<SmallVector<int64_t>> weights;
  SmallVector<double> weightBytes;
  /// Per cut position in [0, size()]: whether a cut may go there (it keeps
  /// each weight's users in one stage), and the time to send what crosses
  /// it from one device to another.
  SmallVector<bool> mayCut;
  SmallVector<double> transferTime;
  /// Activation bytes of the ops [begin, end).
  function_ref<double(int64_t begin, int64_t end)> activationBytes;

  int64_t size() const { return forward.size(); }
};

/// What tensor parallelism splits in a chain of ops (LayoutChain), from a
/// tensor-parallel plan.
struct TensorParallelWork {
  /// Per op: whether it reads a split weight, and so does 1/T of its work
  /// on each device of a group.
  SmallVector<bool> splitOps;
  /// Per op: bytes of the result a row-parallel product all-reduces in its
  /// forward; its backward all-reduces as many (the group input's
  /// gradient), Megatron's f and g.
  SmallVector<double> allReduceBytes;
  /// Per weight (indexed as LayoutChain::weightBytes): whether each
  /// device of a group holds 1/T of it.
  SmallVector<bool> splitWeights;
  /// The split dimensions, named for reasons: T must divide each size.
  SmallVector<std::pair<std::string, int64_t>> splitDims;
  /// Why the plan cannot split at all (a split read by linalg.index), or
  /// empty.
  std::string unsplittable;
};

/// The devices and the training the layouts are planned for.
struct ParallelismRequest {
  int64_t devices = 1;
  /// Bytes each device may hold; the device's capacity when 0.
  double memoryPerDevice = 0.0;
  int64_t numMicrobatches = 1;
  /// Sequence slices per micro-batch: each a unit of the schedule costing
  /// 1/k of the micro-batch's time and activations (docs/Seq1F1B.md).
  int64_t numSlices = 1;
  sched::ScheduleChoice schedule;
  DeviceDescription device;
  /// Optimizer state per weight, in copies of it: 0 for SGD, 2 for Adam's
  /// moments; under ZeRO-1 each replica holds its block of it, under ZeRO-3
  /// also of the weights, besides the whole weights it gathers for the step.
  double optimizerStateCopies = 0.0;
  /// The ZeRO levels (0, 1, 3) each pipeline stage chooses from, in a
  /// layout of more than one replica: the first, in this order, under
  /// which the stage fits; a single replica shards nothing and plans every
  /// stage under the lowest.
  SmallVector<int64_t> zeroLevels = {0};
  /// The ZeRO level of every stage (one value) or of each stage (one per
  /// stage, for layouts of as many stages only), fixed; empty: chosen per
  /// stage from `zeroLevels`.
  SmallVector<int64_t> fixedZero;
  /// Under ZeRO-3, whether to plan the weights gathered per param too
  /// (each compute gathers the params its ops read, and a device holds
  /// whole at once only the params whose first-to-last reads overlap),
  /// besides a stage's weights gathered once per step. The unit is one for
  /// all ZeRO-3 stages of a program, as the lowering takes it.
  bool planParamGathers = false;
  /// The most stages a pipeline may have.
  int64_t maxStages = 0;
  /// T, P and R the user fixed (0: free).
  int64_t fixedTensorParallel = 0, fixedStages = 0, fixedReplicas = 0;
  /// Cuts the model's stage markers force (before these ops).
  SmallVector<int64_t> markerCuts;
};

/// One layout of the devices and what it gives.
struct ParallelismCandidate {
  int64_t tensorParallel = 1, stages = 1, replicas = 1;
  /// The ZeRO level of each pipeline stage (empty when not planned), and
  /// whether the computes of its ZeRO-3 stages gather their params (rather
  /// than each such stage its weights once).
  SmallVector<int64_t> zero;
  bool gatherPerParam = false;
  /// The busiest stage's time as the partition planner balances it (its
  /// ops' F + B + W, its transfers and gathers per param). 0 when not
  /// planned.
  double bottleneck = 0.0;
  /// Seconds of one step (every replica trains one batch), and per batch:
  /// step / replicas, what the planner minimises. 0 when not timed.
  double stepTime = 0.0, batchTime = 0.0;
  /// Bytes on the fullest device: weights, gradients, optimizer state and
  /// the activations its micro-batches in flight hold. 0 when not planned.
  double memory = 0.0;
  /// Why the layout was not chosen; empty for the choice.
  std::string reason;
};

/// Every layout in order of T, then P (ZeRO-3's gathers per stage before
/// those per param), and the index of the fastest that fits (none when
/// nothing does): among equally fast ones the least sharded (the least sum
/// of the stages' ZeRO levels), gathers per stage, then the least memory.
struct ParallelismPlan {
  SmallVector<ParallelismCandidate> candidates;
  std::optional<size_t> chosen;
};

/// Plans every layout T x P x R = `request.devices` of `chain` (one
/// pipeline stage per rank). Per layout the stages are cut to balance their
/// time, each range of ops taking the first of its ZeRO levels under which
/// it fits the memory cap (ZeRO-0's all-reduce, ZeRO-1's reduce-scatter and
/// all-gather, ZeRO-3's gathers: more sharding, more to communicate), and
/// the resulting program of mixed levels is timed once.
ParallelismPlan planParallelism(const LayoutChain &chain,
                                const TensorParallelWork &work,
                                const ParallelismRequest &request);

/// How much a candidate shards, to break ties: the sum of its stages' ZeRO
/// levels.
int64_t getZeroSum(const ParallelismCandidate &candidate);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_PARALLELISMPLANNER_H
