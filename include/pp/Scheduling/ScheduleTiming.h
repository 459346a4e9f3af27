//===- ScheduleTiming.h - the one timing model of pp schedules --*- C++ -*-===//
//
// What a schedule's actions cost and when they run, on plain data: the one
// model behind pp-simulate, pp-verify-schedule and the timelines (through
// ScheduleSimulator, which reads the IR into it), the generators' memory
// checks, `auto`, `greedy`, the local and exact searches, and the stage
// planner.
//
// Each rank runs its actions in order; an action starts when its rank is
// free and what it waits for is there. With explicit transfers (a schedule
// after pp-insert-transfers) a compute action waits for nothing and a
// receive for its send: under async semantics a send never blocks, under
// rendezvous semantics it also waits until its receive is reached, and the
// data arrives the transfer time after both ends are there. Without
// transfers (the compute-only schedules searches compare) each compute waits
// for its inputs, which arrive the same transfer time later when they come
// from another rank. Computations and optimizer steps take their cost; an
// all-reduce takes its cost in the background (data-parallel replicas run
// the same schedule, so it waits for no one), delaying only its stage's
// optimizer step. ZeRO-1's reduce-scatter and all-gather move half an
// all-reduce's volume each and run in the background likewise: the
// optimizer step waits for the reduce-scatter, and the all-gather, after
// the step, ends the rank's step. A backward marked `overlap` runs beside the
// forward before it (two streams): both start together, and the rank is busy
// until the later one ends. The transfers of an exchange group all start when
// the rank reaches the group's first one, and the rank goes on once each is
// done. A rank's activation memory changes after each compute action and
// depends on the order alone.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULETIMING_H
#define PP_SCHEDULING_SCHEDULETIMING_H

#include "pp/Scheduling/ScheduleEnums.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace mlir::pp::sched {

/// A time or memory amount for a diagnostic, as short as `%g` writes it.
std::string formatQuantity(double value);
/// A time in 12 significant digits: the makespans searches and the
/// simulator report, which tools compare to 1e-9 (rounding, not the model,
/// may differ in the last digits of a sum).
std::string formatPrecisely(double value);

/// How many copies of a stage's weights its rank holds for the whole step:
/// `parameterCopies` (weights, gradients, optimizer state) with one weight
/// version, and one more per extra version (PipeDream-2BW's second copy).
inline double getWeightCopies(double parameterCopies, int64_t weightVersions) {
  return parameterCopies + (weightVersions - 1);
}

//===----------------------------------------------------------------------===//
// Costs
//===----------------------------------------------------------------------===//

/// What the micro-batches of a pipeline cost where they differ (samples of
/// different lengths): per (stage, micro-batch) tables of the fields of
/// StageCosts, stage-major (entry `stage * numMicrobatches + mb`). An empty
/// table leaves that field to its per-stage value.
struct MicrobatchCosts {
  int64_t numMicrobatches = 0;
  SmallVector<double> forward, backwardInput, backwardWeight;
  SmallVector<double> activation, stash;

  bool empty() const { return numMicrobatches == 0; }
};

/// What each stage costs, on plain data (the fields of a #pp.cost): per
/// stage the times of its forward (F), input gradient (B) and weight
/// gradient (W), the activation memory one micro-batch's forward holds until
/// its backward and the part of it B keeps for W, and the time one
/// activation or gradient takes to arrive. `perMicrobatch` overrides any of
/// the per-stage values micro-batch by micro-batch. `optimizer` (per stage,
/// none: free) is each stage's optimizer step and `stepOverhead` the work
/// every rank does once per step before its first action (zeroing
/// gradients, bookkeeping).
struct StageCosts {
  SmallVector<double> forward, backwardInput, backwardWeight;
  SmallVector<double> activation, stash;
  double transfer = 0.0;
  MicrobatchCosts perMicrobatch;
  SmallVector<double> optimizer;
  double stepOverhead = 0.0;

  /// Unit costs: F = B = W = 1, no transfer time, one unit of activation
  /// per micro-batch, none kept for W.
  static StageCosts getUnit(int64_t numStages);
  int64_t getNumStages() const { return forward.size(); }
  /// How many micro-batches the per-micro-batch tables describe; 0 when the
  /// costs are the same for every micro-batch.
  int64_t getNumMicrobatches() const { return perMicrobatch.numMicrobatches; }
  /// F, B, W, activation and stash of (stage, mb), in that order.
  std::array<double, 5> get(int64_t stage, int64_t mb) const;
  /// Why these costs cannot describe a pipeline of `numStages` stages and
  /// `numMicrobatches` micro-batches (the tables' shapes, a stash larger
  /// than its activation), or "" if they can.
  std::string check(int64_t numStages, int64_t numMicrobatches) const;
};

/// The durations and memory changes of every (phase, stage, micro-batch),
/// the transfer time and the all-reduce times, computed from StageCosts
/// once: searches query them millions of times. Costs the same for every
/// micro-batch are stored once per stage.
class ActionCosts {
public:
  explicit ActionCosts(const StageCosts &cost);

  int64_t getNumStages() const { return numStages; }
  /// Whether every micro-batch costs the same.
  bool isUniform() const { return mbStride == 0; }

  /// How long a compute action keeps its rank busy; a fused backward takes
  /// B + W.
  double duration(Phase phase, int64_t stage, int64_t mb) const {
    return durations[index(phase, stage, mb)];
  }
  /// How the activation memory its rank holds changes after a compute
  /// action: a forward holds its stage's activation, B releases all but the
  /// stash W needs, W the stash, and a fused backward everything.
  double memoryDelta(Phase phase, int64_t stage, int64_t mb) const {
    return deltas[index(phase, stage, mb)];
  }
  /// The largest duration and memory change of (phase, stage) over the
  /// micro-batches, and the sum of the durations of `numMicrobatches`.
  double getLargestDuration(Phase phase, int64_t stage) const;
  double getLargestMemoryDelta(Phase phase, int64_t stage) const;
  double getTotalDuration(Phase phase, int64_t stage,
                          int64_t numMicrobatches) const;
  /// The time one activation or gradient takes to arrive.
  double transferTime() const { return transfer; }
  /// How long the optimizer step of `stage` takes.
  double optimizerDuration(int64_t stage) const {
    return optimizer.empty() ? 0.0 : optimizer[stage];
  }
  /// The work every rank does once per step before its first action.
  double stepOverhead() const { return overhead; }
  /// Per rank of `numRanks` (by default, up to the last `stageRank` places
  /// a stage on), the optimizer steps of its stages, which end its step.
  SmallVector<double> getOptimizerPerRank(ArrayRef<int64_t> stageRank,
                                          int64_t numRanks = -1) const {
    if (numRanks < 0)
      numRanks = stageRank.empty() ? 0 : *llvm::max_element(stageRank) + 1;
    SmallVector<double> perRank(numRanks, 0.0);
    for (auto [stage, rank] : llvm::enumerate(stageRank))
      perRank[rank] += optimizerDuration(stage);
    return perRank;
  }
  /// How long the gradient all-reduce of `stage` takes (0 unless set).
  double allReduceDuration(int64_t stage) const {
    return allReduce.empty() ? 0.0
                             : allReduce[allReduce.size() == 1 ? 0 : stage];
  }

  /// All-reduces take `perStage` (one value: every stage).
  void setAllReduceDurations(ArrayRef<double> perStage) {
    allReduce.assign(perStage.begin(), perStage.end());
  }
  /// Compute actions that cost nothing take `duration` instead.
  void replaceZeroDurations(double duration);

private:
  size_t index(Phase phase, int64_t stage, int64_t mb) const {
    return (static_cast<size_t>(phase) * numStages + stage) * width +
           mb * mbStride;
  }

  int64_t numStages;
  /// Entries per (phase, stage): the micro-batches, or 1 when uniform; the
  /// step from one micro-batch to the next, 0 when uniform.
  int64_t width = 1, mbStride = 0;
  SmallVector<double> durations, deltas, allReduce;
  std::vector<double> optimizer;
  double transfer, overhead;
};

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

/// One action of a rank, as plain data.
struct TimedAction {
  enum class Kind : uint8_t {
    compute,
    send,
    recv,
    allReduce,
    optimizerStep,
    /// ZeRO-1's halves of an all-reduce (pp.reduce_scatter, pp.all_gather).
    reduceScatter,
    allGather,
    /// Anything else a rank holds: takes no time.
    other,
  };

  Kind kind = Kind::compute;
  /// A transfer that starts with the one before it (an exchange group).
  bool grouped = false;
  /// A backward that runs beside the forward before it.
  bool overlapped = false;
  Phase phase = Phase::forward;                     // compute actions
  TransferKind transfer = TransferKind::activation; // sends and receives
  int64_t stage = 0, mb = 0;
  /// The rank on the other end of a send or receive.
  int64_t peer = -1;

  static TimedAction getCompute(Phase phase, int64_t stage, int64_t mb) {
    TimedAction action;
    action.phase = phase;
    action.stage = stage;
    action.mb = mb;
    return action;
  }
  bool isTransfer() const { return kind == Kind::send || kind == Kind::recv; }
  /// The stage whose result a send or receive moves.
  int64_t getProducerStage() const;
};

/// The stage on the other end of a transfer whose local stage is `stage`: an
/// activation flows from s to s + 1, a gradient from s to s - 1. May be out
/// of range (-1 or the number of stages) for a malformed transfer.
inline int64_t getNeighbourStage(TransferKind kind, bool isSend,
                                 int64_t stage) {
  bool towardsLaterStage = (kind == TransferKind::activation) == isSend;
  return towardsLaterStage ? stage + 1 : stage - 1;
}

/// How long `action` takes under `costs`.
inline double getDuration(const ActionCosts &costs, const TimedAction &action) {
  switch (action.kind) {
  case TimedAction::Kind::compute:
    return costs.duration(action.phase, action.stage, action.mb);
  case TimedAction::Kind::allReduce:
    return costs.allReduceDuration(action.stage);
  case TimedAction::Kind::optimizerStep:
    return action.stage >= 0 && action.stage < costs.getNumStages()
               ? costs.optimizerDuration(action.stage)
               : 0.0;
  case TimedAction::Kind::reduceScatter:
  case TimedAction::Kind::allGather:
    return costs.allReduceDuration(action.stage) / 2;
  default:
    return 0.0;
  }
}

/// The most activation memory one rank holds, and the index of the action
/// after which it first does (none if it never holds any).
struct MemoryPeak {
  double peak = 0.0;
  std::optional<size_t> at;
};

/// Walks one rank's actions in order, `delta(action)` being how each changes
/// the memory the rank holds, and returns its peak; with a `cap`, stops at
/// the first action after which the rank holds more.
template <typename Range, typename DeltaFn>
MemoryPeak findMemoryPeak(Range &&actions, DeltaFn delta,
                          std::optional<double> cap = std::nullopt) {
  MemoryPeak result;
  double held = 0.0;
  size_t index = 0;
  for (auto &&action : actions) {
    held += delta(action);
    if (held > result.peak) {
      result = {held, index};
      if (cap && held > *cap + 1e-9)
        break;
    }
    ++index;
  }
  return result;
}

/// The same with the memory changes of `costs`, for actions with a `phase`
/// and a `stage` (a ScheduledAction, or a TimedAction of any kind: only
/// compute actions hold activations).
template <typename Range>
MemoryPeak findActivationPeak(const ActionCosts &costs, const Range &actions,
                              std::optional<double> cap = std::nullopt) {
  return findMemoryPeak(
      actions,
      [&](const auto &action) {
        if constexpr (std::is_same_v<std::decay_t<decltype(action)>,
                                     TimedAction>)
          if (action.kind != TimedAction::Kind::compute)
            return 0.0;
        return costs.memoryDelta(action.phase, action.stage, action.mb);
      },
      cap);
}

//===----------------------------------------------------------------------===//
// Dataflow between compute actions
//===----------------------------------------------------------------------===//

/// When the results of compute actions were computed, and from them when
/// the inputs of others are there: a forward needs the forward of the stage
/// before, an input gradient (or fused backward) its own forward and the
/// input gradient of the stage after, a weight gradient its input gradient;
/// a result from another rank arrives the transfer time later. Recorded
/// one action at a time, and erased again by searches that backtrack.
class DataflowTimes {
public:
  DataflowTimes(int64_t numStages, int64_t numMicrobatches,
                ArrayRef<int64_t> stageRank, double transferTime)
      : numStages(numStages), numMicrobatches(numMicrobatches),
        stageRank(stageRank), transfer(transferTime) {
    reset();
  }

  /// Forgets every recorded action.
  void reset() {
    size_t size = numStages * numMicrobatches;
    forwardEnd.assign(size, -1.0);
    backwardEnd.assign(size, -1.0);
  }

  /// When the inputs of (phase, stage, mb) are there, if they are computed.
  std::optional<double> readyTime(Phase phase, int64_t stage, int64_t mb) const;

  /// Records that (phase, stage, mb) ended at `end`, or forgets it.
  void record(Phase phase, int64_t stage, int64_t mb, double end) {
    if (double *slot = getSlot(phase, stage, mb))
      *slot = end;
  }
  void erase(Phase phase, int64_t stage, int64_t mb) {
    record(phase, stage, mb, -1.0);
  }

  /// When the result of a recorded forward or input gradient was computed.
  double getEnd(Phase phase, int64_t stage, int64_t mb) const {
    return phase == Phase::forward ? forwardEnd[index(stage, mb)]
                                   : backwardEnd[index(stage, mb)];
  }

  /// When a result computed on stage `from` at `time` is there for `to`.
  double arrival(int64_t from, int64_t to, double time) const {
    return stageRank[from] == stageRank[to] ? time : time + transfer;
  }

  /// The stage that consumes the result of (phase, stage) on another rank,
  /// if it may: a forward feeds the stage after, an input gradient the one
  /// before.
  std::optional<int64_t> getConsumerStage(Phase phase, int64_t stage) const {
    int64_t consumer = phase == Phase::forward           ? stage + 1
                       : phase == Phase::backward_weight ? -1
                                                         : stage - 1;
    if (consumer < 0 || consumer >= numStages)
      return std::nullopt;
    return consumer;
  }

  ArrayRef<int64_t> getStageRank() const { return stageRank; }
  void setTransferTime(double time) { transfer = time; }

private:
  size_t index(int64_t stage, int64_t mb) const {
    return stage * numMicrobatches + mb;
  }
  double *getSlot(Phase phase, int64_t stage, int64_t mb) {
    if (phase == Phase::forward)
      return &forwardEnd[index(stage, mb)];
    if (phase == Phase::backward_weight)
      return nullptr; // nothing waits for a weight gradient
    return &backwardEnd[index(stage, mb)];
  }

  int64_t numStages, numMicrobatches;
  SmallVector<int64_t> stageRank;
  double transfer;
  /// Per (stage, micro-batch): when its forward and its input gradient
  /// ended, negative if not recorded.
  std::vector<double> forwardEnd, backwardEnd;
};

inline std::optional<double> DataflowTimes::readyTime(Phase phase, int64_t s,
                                                      int64_t mb) const {
  switch (phase) {
  case Phase::forward: {
    if (s == 0)
      return 0.0;
    double input = forwardEnd[index(s - 1, mb)];
    if (input < 0)
      return std::nullopt;
    return arrival(s - 1, s, input);
  }
  case Phase::backward:
  case Phase::backward_input: {
    double own = forwardEnd[index(s, mb)];
    if (own < 0)
      return std::nullopt;
    if (s == numStages - 1)
      return own;
    double next = backwardEnd[index(s + 1, mb)];
    if (next < 0)
      return std::nullopt;
    return std::max(own, arrival(s + 1, s, next));
  }
  case Phase::backward_weight: {
    double input = backwardEnd[index(s, mb)];
    if (input < 0)
      return std::nullopt;
    return input;
  }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// ScheduleTiming
//===----------------------------------------------------------------------===//

/// What the run reads of an action: a TimedAction as it is, any other type
/// (a ScheduledAction) as a compute action with a `phase`, `stage` and `mb`,
/// so that searches time their own action lists in place.
template <typename Action> struct TimedActionTraits {
  static constexpr bool mayTransfer = false;
  static TimedAction::Kind getKind(const Action &) {
    return TimedAction::Kind::compute;
  }
  static bool isGrouped(const Action &) { return false; }
  static bool isOverlapped(const Action &) { return false; }
};
template <> struct TimedActionTraits<TimedAction> {
  static constexpr bool mayTransfer = true;
  static TimedAction::Kind getKind(const TimedAction &a) { return a.kind; }
  static bool isGrouped(const TimedAction &a) { return a.grouped; }
  static bool isOverlapped(const TimedAction &a) { return a.overlapped; }
};

/// Runs the ranks of a schedule against each other. The run is linear in
/// the number of actions: a rank runs until it reaches an action whose
/// inputs are not there, parks, and is woken when what it waits for is
/// posted. With start times taken as the maximum of the rank's clock and
/// the time the inputs arrive, the result equals a lock-step execution.
class ScheduleTiming {
public:
  /// When one action ran.
  struct Interval {
    double start = 0.0;
    double end = 0.0;
  };

  /// A schedule of `numStages` stages and `numMicrobatches` micro-batches.
  ScheduleTiming(int64_t numStages, int64_t numMicrobatches)
      : numStages(numStages), numMicrobatches(numMicrobatches) {}

  /// The actions of a schedule with explicit transfers; rank r owns
  /// [rankBegin[r], rankBegin[r + 1]). Pairs each receive with the first
  /// send of the same transfer on the receive's peer rank.
  void setActions(std::vector<TimedAction> actions,
                  SmallVector<int64_t> rankBegin);

  /// Runs the actions set by setActions as far as they get under `costs`;
  /// succeeds if all ranks finish.
  LogicalResult run(const ActionCosts &costs,
                    TransferSemantics semantics = TransferSemantics::async);

  /// Runs a compute-only schedule, `ranks[r]` the actions of rank r and
  /// stage s on rank `stageRank[s]`: each compute waits for its inputs.
  /// Records when each action ran only if `recordIntervals`.
  template <typename Ranks>
  LogicalResult runComputeOnly(const Ranks &ranks, ArrayRef<int64_t> stageRank,
                               const ActionCosts &costs,
                               bool recordIntervals = true);

  int64_t getNumRanks() const { return rankBegin.size() - 1; }
  int64_t getNumStages() const { return numStages; }
  int64_t getNumMicrobatches() const { return numMicrobatches; }

  /// The actions set by setActions.
  ArrayRef<TimedAction> getActions(int64_t rank) const {
    return ArrayRef<TimedAction>(actions).slice(rankBegin[rank],
                                                getNumActions(rank));
  }
  int64_t getFirstAction(int64_t rank) const { return rankBegin[rank]; }
  int64_t getNumActions(int64_t rank) const {
    return rankBegin[rank + 1] - rankBegin[rank];
  }

  /// After a run: when the actions of `rank` ran (those it reached).
  ArrayRef<Interval> getIntervals(int64_t rank) const {
    return ArrayRef<Interval>(intervals).slice(rankBegin[rank],
                                               getNumActions(rank));
  }
  /// After a run that recorded intervals: when the last action ends (an
  /// all-reduce in the background included).
  double getMakespan() const;
  /// After a run: when `rank` is free.
  double getRankEnd(int64_t rank) const { return clock[rank]; }
  /// After a run: the most activation memory `rank` held.
  double getPeakMemory(int64_t rank) const { return peak[rank]; }

  /// After a run, the index (among all actions) of the action `rank` is
  /// stuck at, or none if it finished.
  std::optional<int64_t> getBlockedAction(int64_t rank) const {
    if (position[rank] == rankBegin[rank + 1])
      return std::nullopt;
    return position[rank];
  }
  /// Whether the action `rank` is stuck at is a receive that has no send.
  bool waitsForever(int64_t rank) const;
  /// The rank that owns action `id`.
  int64_t getRankOf(int64_t id) const;

  /// After a failed run of actions set by setActions, the ranks that wait
  /// for each other, starting at the lowest blocked rank and following
  /// "waits for" until a rank repeats (which is the last element), a rank
  /// is reached that can never post the send (its receive has no matching
  /// send; it is the last element), or one that finished (a rendezvous
  /// send's peer that never reaches its receive; it is left out).
  SmallVector<int64_t> getWaitChain() const;

private:
  static constexpr int64_t kNotARecv = -1;
  static constexpr int64_t kNoSend = -2;

  /// Sets up the state of a run of `numActions` actions.
  void startRun(const ActionCosts &costs, TransferSemantics semantics,
                bool withIntervals);
  /// The run itself, once rankBegin is set: `ranks[r][i]` is action
  /// rankBegin[r] + i.
  template <typename Ranks>
  LogicalResult runRanks(const Ranks &ranks, const ActionCosts &costs);
  /// Runs `rank` until it finishes or waits.
  template <typename Action>
  void advance(int64_t rank, ArrayRef<Action> rankActions,
               const ActionCosts &costs);
  /// Reaches the transfers starting at action `id` of a rank that ends at
  /// `end`; returns when the rank may go on, or a negative time if it
  /// waits (then it is parked), or kBlockedForever.
  double reachTransfers(int64_t rank, int64_t id, int64_t end, double now);
  static constexpr double kBlockedForever = -2.0;

  /// The transfer of action `id` is reached at `now`; returns its send,
  /// kNotARecv or kNoSend.
  int64_t reach(int64_t id, double now);
  /// A transfer completes once both ends are known; returns when, or a
  /// negative time while it cannot.
  double tryComplete(int64_t send);
  void wakeWaiters(int64_t send);

  int64_t numStages, numMicrobatches;
  /// All actions set by setActions, rank by rank.
  std::vector<TimedAction> actions;
  /// Rank r owns actions [rankBegin[r], rankBegin[r+1]).
  SmallVector<int64_t> rankBegin = {0};
  /// For each receive, the id of its send (or kNoSend); kNotARecv
  /// otherwise. Empty without transfers.
  std::vector<int64_t> matchingSend;
  /// For a compute-only run: what its computes wait for.
  std::optional<DataflowTimes> dataflow;

  // The state of a run.
  TransferSemantics semantics = TransferSemantics::async;
  double transferTime = 0.0;
  bool recordIntervals = true;
  SmallVector<int64_t> position;
  std::vector<Interval> intervals;
  SmallVector<double> clock, held, peak;
  /// Per send: when its rank reached it, when its receive was reached, and
  /// when the transfer completes (negative: not yet known).
  std::vector<double> sendReached, recvReached, completes;
  /// Ranks parked on a send, as singly linked lists through `nextWaiter`.
  std::vector<int64_t> firstWaiter;
  SmallVector<int64_t> nextWaiter;
  SmallVector<int64_t> worklist;
  /// Per stage: when its all-reduce completes; when its weights are
  /// gathered (ZeRO-3: an all-gather before the stage's first compute);
  /// whether it has computed yet.
  SmallVector<double> reduced, gathered;
  SmallVector<bool> computed;
};

template <typename Ranks>
LogicalResult
ScheduleTiming::runComputeOnly(const Ranks &ranks, ArrayRef<int64_t> stageRank,
                               const ActionCosts &costs, bool withIntervals) {
  rankBegin.assign(1, 0);
  for (const auto &rank : ranks)
    rankBegin.push_back(rankBegin.back() + rank.size());
  actions.clear();
  matchingSend.clear();
  if (!dataflow || dataflow->getStageRank() != stageRank)
    dataflow.emplace(numStages, numMicrobatches, stageRank, 0.0);
  startRun(costs, TransferSemantics::async, withIntervals);
  return runRanks(ranks, costs);
}

template <typename Ranks>
LogicalResult ScheduleTiming::runRanks(const Ranks &ranks,
                                       const ActionCosts &costs) {
  int64_t numRanks = getNumRanks();
  for (int64_t rank = numRanks - 1; rank >= 0; --rank)
    worklist.push_back(rank);
  while (!worklist.empty()) {
    int64_t rank = worklist.pop_back_val();
    advance(rank, ArrayRef(ranks[rank]), costs);
  }
  for (int64_t rank = 0; rank < numRanks; ++rank)
    if (position[rank] != rankBegin[rank + 1])
      return failure();
  return success();
}

template <typename Action>
void ScheduleTiming::advance(int64_t rank, ArrayRef<Action> rankActions,
                             const ActionCosts &costs) {
  using Traits = TimedActionTraits<Action>;
  using Kind = TimedAction::Kind;
  // The rank's clock and position live in locals while it runs: the loop
  // is the hot path of every schedule search.
  int64_t first = rankBegin[rank], end = rankBegin[rank + 1];
  int64_t id = position[rank];
  double free = clock[rank];
  DataflowTimes *flow = dataflow ? &*dataflow : nullptr;
  auto stop = [&] {
    position[rank] = id;
    clock[rank] = free;
  };
  for (; id < end; ++id) {
    const Action &action = rankActions[id - first];
    double now = free;
    if constexpr (Traits::mayTransfer) {
      if (!matchingSend.empty()) {
        double go = reachTransfers(rank, id, end, now);
        if (go < 0)
          return stop(); // parked, or blocked forever
        now = go;
      }
    }
    Kind kind = Traits::getKind(action);
    if (kind == Kind::compute) {
      if constexpr (Traits::mayTransfer) {
        if (action.stage >= 0 && action.stage < numStages) {
          now = std::max(now, gathered[action.stage]);
          computed[action.stage] = true;
        }
      }
      if (flow) {
        // Woken by the rank that computes the missing input.
        std::optional<double> ready =
            flow->readyTime(action.phase, action.stage, action.mb);
        if (!ready)
          return stop();
        now = std::max(now, *ready);
      }
      double duration = costs.duration(action.phase, action.stage, action.mb);
      held[rank] += costs.memoryDelta(action.phase, action.stage, action.mb);
      peak[rank] = std::max(peak[rank], held[rank]);
      if (Traits::isOverlapped(action)) {
        // An overlapped backward runs beside its forward, the action before
        // it, on a second stream: it starts with it, and the rank is free
        // once both end.
        Interval partner = intervals[id - 1];
        intervals[id] = {partner.start, partner.start + duration};
        free = std::max(partner.end, intervals[id].end);
        continue;
      }
      free = now + duration;
      if (recordIntervals)
        intervals[id] = {now, free};
      if (flow) {
        flow->record(action.phase, action.stage, action.mb, free);
        if (std::optional<int64_t> consumer =
                flow->getConsumerStage(action.phase, action.stage))
          worklist.push_back(flow->getStageRank()[*consumer]);
      }
      continue;
    }
    if constexpr (Traits::mayTransfer) {
      double duration = getDuration(costs, action);
      bool inRange = action.stage >= 0 && action.stage < numStages;
      if (kind == Kind::allReduce || kind == Kind::reduceScatter) {
        // A reduction runs in the background; its stage's optimizer step
        // waits for it.
        intervals[id] = {now, now + duration};
        if (inRange)
          reduced[action.stage] = intervals[id].end;
        continue;
      }
      if (kind == Kind::allGather) {
        // In the background too; the step ends when it does, or (ZeRO-3,
        // before the stage's first compute) that compute waits for it.
        intervals[id] = {now, now + duration};
        if (inRange && !computed[action.stage])
          gathered[action.stage] = intervals[id].end;
        continue;
      }
      if (kind == Kind::optimizerStep && inRange)
        now = std::max(now, reduced[action.stage]);
      intervals[id] = {now, now + duration};
      free = intervals[id].end;
    }
  }
  stop();
}

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_SCHEDULETIMING_H
