//===- ScheduleSimulator.h - run a pp.schedule in lock step -----*- C++ -*-===//
//
// Executes the ranks of a `pp.schedule` under the semantics of the
// `pp-schedule-v1` contract (shared/spec/schedule-json.md) so that the
// verifier (deadlock freedom) and the exporters (timelines) agree on what a
// schedule does: each rank runs its actions in order, a send never blocks, a
// receive blocks until its matching send was posted, computations and
// optimizer steps take their cost, and an all-reduce takes its cost in the
// background (data-parallel replicas run the same schedule, so it waits for
// no one), delaying only its stage's optimizer step. A backward marked
// `overlap` runs concurrently with the forward before it (two streams): both
// start when the rank reaches the pair, and the rank is busy until the later
// one ends. The transfers of an exchange group (`grouped`) all start when
// the rank reaches the group's first one, and the rank goes on once each is
// done.
//
// Used by pp-verify-schedule, pp-simulate and the timeline exporters.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_SCHEDULESIMULATOR_H
#define PP_DIALECT_PP_ANALYSIS_SCHEDULESIMULATOR_H

#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace mlir::pp {

//===----------------------------------------------------------------------===//
// Transfers
//===----------------------------------------------------------------------===//

/// The stage on the other end of a transfer whose local stage is `stage`: an
/// activation flows from s to s + 1, a gradient from s to s - 1. May be out
/// of range (-1 or the number of stages) for a malformed transfer.
inline int64_t getNeighbourStage(TransferKind kind, bool isSend,
                                 int64_t stage) {
  bool towardsLaterStage = (kind == TransferKind::activation) == isSend;
  return towardsLaterStage ? stage + 1 : stage - 1;
}

/// Identifies the tensor a send/recv pair moves: its kind, the stage that
/// produces it, and the micro-batch. A send and a recv match if and only if
/// their keys are equal.
struct TransferKey {
  TransferKind kind;
  int64_t producerStage;
  int64_t mb;

  static TransferKey get(SendOp send) {
    return {send.getKind(), static_cast<int64_t>(send.getStage()),
            static_cast<int64_t>(send.getMb())};
  }
  static TransferKey get(RecvOp recv) {
    return {recv.getKind(),
            getNeighbourStage(recv.getKind(), /*isSend=*/false,
                              static_cast<int64_t>(recv.getStage())),
            static_cast<int64_t>(recv.getMb())};
  }
  /// Packs the key for use in a DenseMap.
  std::tuple<int32_t, int64_t, int64_t> asTuple() const {
    return {static_cast<int32_t>(kind), producerStage, mb};
  }
};

/// PyTorch-pipelining name of an action: F, B, W, BW, SEND_F, RECV_F, SEND_B,
/// RECV_B, ALLREDUCE or OPT.
inline StringRef getActionMnemonic(Operation *op) {
  if (auto compute = dyn_cast<ComputeOp>(op)) {
    switch (compute.getPhase()) {
    case Phase::forward:
      return "F";
    case Phase::backward_input:
      return "B";
    case Phase::backward_weight:
      return "W";
    case Phase::backward:
      return "BW";
    }
  }
  if (auto send = dyn_cast<SendOp>(op))
    return send.getKind() == TransferKind::activation ? "SEND_F" : "SEND_B";
  if (auto recv = dyn_cast<RecvOp>(op))
    return recv.getKind() == TransferKind::activation ? "RECV_F" : "RECV_B";
  if (isa<AllReduceOp>(op))
    return "ALLREDUCE";
  if (isa<OptimizerStepOp>(op))
    return "OPT";
  return op->getName().getStringRef();
}

//===----------------------------------------------------------------------===//
// ScheduleSimulator
//===----------------------------------------------------------------------===//

/// Runs the ranks of a schedule against each other. The simulation is linear
/// in the number of actions: a rank runs until it reaches a receive whose
/// send has not been posted, parks on that send, and is woken when the send's
/// rank posts it. With the start times computed as the maximum of the rank's
/// clock and the send's post time, the result equals a lock-step execution.
class ScheduleSimulator {
public:
  /// How long an action takes, in any unit; never negative.
  using CostFn = llvm::function_ref<double(Operation *)>;

  /// Unit costs: F, B and W take 1, a fused backward 2, everything else 0.
  static double unitCost(Operation *op) {
    auto compute = dyn_cast<ComputeOp>(op);
    if (!compute)
      return 0.0;
    return compute.getPhase() == Phase::backward ? 2.0 : 1.0;
  }

  /// When one action ran.
  struct Interval {
    double start = 0.0;
    double end = 0.0;
  };

  /// Collects the actions of every rank and pairs each receive with the
  /// first send of the same transfer on the receive's peer rank.
  explicit ScheduleSimulator(ScheduleOp schedule);

  int64_t getNumRanks() const { return rankBegin.size() - 1; }

  /// How point-to-point transfers synchronise.
  enum class Semantics {
    /// A send never blocks; a receive waits for its send (the
    /// `pp-schedule-v1` contract, MPI's buffered sends).
    Async,
    /// A send also waits until its receive is reached (NCCL send/recv).
    Rendezvous,
  };

  /// Runs every rank as far as it gets. Succeeds if all ranks finish; fails
  /// silently on a deadlock (see emitDeadlockError). A transfer's data
  /// arrives `transferTime` after it is sent; both ends are recorded at the
  /// moment the transfer completes.
  LogicalResult run(CostFn cost = unitCost,
                    Semantics semantics = Semantics::Async,
                    double transferTime = 0.0);

  /// The actions of `rank` in order.
  ArrayRef<Operation *> getActions(int64_t rank) const {
    return ArrayRef<Operation *>(actions).slice(
        rankBegin[rank], rankBegin[rank + 1] - rankBegin[rank]);
  }

  /// When the actions of `rank` ran, after a successful run.
  ArrayRef<Interval> getIntervals(int64_t rank) const {
    return ArrayRef<Interval>(intervals).slice(
        rankBegin[rank], rankBegin[rank + 1] - rankBegin[rank]);
  }

  /// The time the last action ends, after a successful run.
  double getMakespan() const {
    double makespan = 0.0;
    for (const Interval &interval : intervals)
      makespan = std::max(makespan, interval.end);
    return makespan;
  }

  /// After a run, the action `rank` is stuck at (a receive, or under
  /// rendezvous semantics a send), or null if it finished.
  Operation *getBlockedAction(int64_t rank) const {
    if (position[rank] == rankBegin[rank + 1])
      return nullptr;
    return actions[position[rank]];
  }

  /// After a failed run, the ranks that wait for each other, starting at the
  /// lowest blocked rank and following "waits for" until a rank repeats
  /// (which is the last element) or a rank is reached that can never post
  /// the send (its receive has no matching send; it is the last element).
  SmallVector<int64_t> getWaitChain() const;

  /// Runs with unit costs for an exported timeline, reporting a deadlock
  /// with a note at the schedule.
  LogicalResult runForTimeline(Operation *schedule);

  /// After a failed run, reports the deadlock at the transfer the lowest
  /// blocked rank waits at, naming the chain of ranks that wait for each
  /// other, with a note at each other blocked transfer in the chain.
  InFlightDiagnostic emitDeadlockError() const;

private:
  static constexpr int64_t kNotARecv = -1;
  static constexpr int64_t kNoSend = -2;

  /// Whether `rank` is blocked at a receive that has no send at all.
  bool waitsForever(int64_t rank) const {
    return isa<RecvOp>(actions[position[rank]]) &&
           matchingSend[position[rank]] == kNoSend;
  }

  /// The rank on the other end of a blocked transfer.
  static int64_t getPeer(Operation *transfer) {
    if (auto recv = dyn_cast<RecvOp>(transfer))
      return recv.getPeer();
    return cast<SendOp>(transfer).getPeer();
  }

  int64_t getRankOf(int64_t id) const {
    return std::upper_bound(rankBegin.begin(), rankBegin.end(), id) -
           rankBegin.begin() - 1;
  }

  /// All actions, rank by rank; rank r owns [rankBegin[r], rankBegin[r+1]).
  std::vector<Operation *> actions;
  SmallVector<int64_t> rankBegin;
  /// For each receive, the id of its send (or kNoSend); kNotARecv otherwise.
  std::vector<int64_t> matchingSend;
  /// After a run: the next action of each rank.
  SmallVector<int64_t> position;
  std::vector<Interval> intervals;
};

/// Reads a `semantics` option: `async` or `rendezvous`, or null.
inline std::optional<ScheduleSimulator::Semantics>
parseSemantics(StringRef text) {
  if (text == "async")
    return ScheduleSimulator::Semantics::Async;
  if (text == "rendezvous")
    return ScheduleSimulator::Semantics::Rendezvous;
  return std::nullopt;
}

/// The same, with an error at `op` for anything else.
inline FailureOr<ScheduleSimulator::Semantics>
parseSemanticsOption(StringRef text, Operation *op) {
  if (std::optional<ScheduleSimulator::Semantics> semantics =
          parseSemantics(text))
    return *semantics;
  return op->emitError("unknown semantics '")
         << text << "'; expected async or rendezvous";
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_SCHEDULESIMULATOR_H
