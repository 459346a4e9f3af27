//===- ScheduleSimulator.h - run a pp.schedule in lock step -----*- C++ -*-===//
//
// Executes the ranks of a `pp.schedule` under the semantics of the
// `pp-schedule-v1` contract (shared/spec/schedule-json.md) so that the
// verifier (deadlock freedom) and the exporters (timelines) agree on what a
// schedule does: each rank runs its actions in order, a send never blocks, a
// receive blocks until its matching send was posted, and computations,
// all-reduces and optimizer steps take their cost and never block.
//
// Header-only so that both the transform library (pp-verify-schedule) and the
// export library (pp-translate) can use it without a library of its own.
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
  explicit ScheduleSimulator(ScheduleOp schedule) {
    for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
      rankBegin.push_back(actions.size());
      for (Operation &op : rank.getBody().front())
        actions.push_back(&op);
    }
    rankBegin.push_back(actions.size());

    llvm::DenseMap<std::tuple<int32_t, int64_t, int64_t>, int64_t> sendIds;
    for (int64_t rank = 0, e = getNumRanks(); rank < e; ++rank)
      for (int64_t id = rankBegin[rank]; id < rankBegin[rank + 1]; ++id)
        if (auto send = dyn_cast<SendOp>(actions[id]))
          sendIds.try_emplace(TransferKey::get(send).asTuple(), id);

    matchingSend.assign(actions.size(), kNotARecv);
    for (int64_t rank = 0, e = getNumRanks(); rank < e; ++rank) {
      for (int64_t id = rankBegin[rank]; id < rankBegin[rank + 1]; ++id) {
        auto recv = dyn_cast<RecvOp>(actions[id]);
        if (!recv)
          continue;
        auto it = sendIds.find(TransferKey::get(recv).asTuple());
        bool fromPeer =
            it != sendIds.end() &&
            getRankOf(it->second) == static_cast<int64_t>(recv.getPeer());
        matchingSend[id] = fromPeer ? it->second : kNoSend;
      }
    }
  }

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
                    double transferTime = 0.0) {
    int64_t numRanks = getNumRanks();
    intervals.assign(actions.size(), Interval());
    // Per send: when its rank reached it, when its receive was reached, and
    // when the transfer completes (negative: not yet known).
    std::vector<double> sendReached(actions.size(), -1.0);
    std::vector<double> recvReached(actions.size(), -1.0);
    std::vector<double> completes(actions.size(), -1.0);
    // Ranks parked on a send, as singly linked lists through `nextWaiter`.
    std::vector<int64_t> firstWaiter(actions.size(), -1);
    std::vector<int64_t> nextWaiter(numRanks, -1);
    std::vector<double> clock(numRanks, 0.0);
    position.assign(rankBegin.begin(), rankBegin.end() - 1);
    SmallVector<int64_t> worklist;
    auto park = [&](int64_t rank, int64_t send) {
      nextWaiter[rank] = firstWaiter[send];
      firstWaiter[send] = rank;
    };
    auto wake = [&](int64_t send) {
      for (int64_t w = firstWaiter[send]; w >= 0; w = nextWaiter[w])
        worklist.push_back(w);
      firstWaiter[send] = -1;
    };
    // A transfer completes once both ends are known; returns when, or a
    // negative time while it cannot.
    auto tryComplete = [&](int64_t send) {
      if (completes[send] >= 0)
        return completes[send];
      bool ready = sendReached[send] >= 0 &&
                   (semantics == Semantics::Async || recvReached[send] >= 0);
      if (!ready)
        return -1.0;
      double start = semantics == Semantics::Async
                         ? sendReached[send]
                         : std::max(sendReached[send], recvReached[send]);
      completes[send] = start + transferTime;
      wake(send);
      return completes[send];
    };

    for (int64_t rank = numRanks - 1; rank >= 0; --rank)
      worklist.push_back(rank);
    while (!worklist.empty()) {
      int64_t rank = worklist.pop_back_val();
      for (; position[rank] < rankBegin[rank + 1]; ++position[rank]) {
        int64_t id = position[rank];
        double now = clock[rank];
        int64_t send = isa<SendOp>(actions[id]) ? id : matchingSend[id];
        if (send == kNoSend)
          break; // Blocked forever.
        if (send != kNotARecv) {
          bool isSend = send == id;
          std::vector<double> &reached = isSend ? sendReached : recvReached;
          if (reached[send] < 0)
            reached[send] = now;
          double done = tryComplete(send);
          // An async send returns at once; everything else waits for the
          // transfer to complete.
          if (isSend && semantics == Semantics::Async)
            done = now;
          if (done < 0) {
            park(rank, send);
            break;
          }
          now = std::max(now, done);
        }
        intervals[id] = {now, now + cost(actions[id])};
        clock[rank] = intervals[id].end;
      }
    }
    return success(
        llvm::all_of(llvm::seq<int64_t>(0, numRanks), [&](int64_t r) {
          return position[r] == rankBegin[r + 1];
        }));
  }

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
  SmallVector<int64_t> getWaitChain() const {
    SmallVector<int64_t> chain;
    int64_t rank = 0;
    while (rank < getNumRanks() && !getBlockedAction(rank))
      ++rank;
    llvm::SmallDenseSet<int64_t> seen;
    while (rank < getNumRanks() && seen.insert(rank).second) {
      chain.push_back(rank);
      if (waitsForever(rank))
        return chain;
      rank = getPeer(getBlockedAction(rank));
    }
    if (rank < getNumRanks())
      chain.push_back(rank);
    return chain;
  }

  /// Runs with unit costs for an exported timeline, reporting a deadlock
  /// with a note at the schedule.
  LogicalResult runForTimeline(Operation *schedule) {
    if (succeeded(run()))
      return success();
    emitDeadlockError().attachNote(schedule->getLoc())
        << "while simulating this schedule for its timeline";
    return failure();
  }

  /// After a failed run, reports the deadlock at the transfer the lowest
  /// blocked rank waits at, naming the chain of ranks that wait for each
  /// other, with a note at each other blocked transfer in the chain.
  InFlightDiagnostic emitDeadlockError() const {
    SmallVector<int64_t> chain = getWaitChain();
    ArrayRef<int64_t> waiting = chain;
    if (chain.size() > 1 &&
        llvm::is_contained(waiting.drop_back(), chain.back()))
      waiting = waiting.drop_back();
    Operation *first = getBlockedAction(waiting.front());
    InFlightDiagnostic diag = first->emitError("deadlock: rank ")
                              << waiting.front() << " waits at this '"
                              << first->getName() << "'";
    for (auto [i, rank] : llvm::enumerate(waiting)) {
      Operation *blocked = getBlockedAction(rank);
      bool neverSent = waitsForever(rank);
      if (i == 0) {
        if (neverSent)
          diag << ", which has no matching 'pp.send'";
        else
          diag << " for rank " << getPeer(blocked);
        continue;
      }
      if (neverSent) {
        diag << ", which waits at a 'pp.recv' that has no matching 'pp.send'";
        diag.attachNote(blocked->getLoc())
            << "rank " << rank
            << " waits here for a 'pp.send' that never comes";
        continue;
      }
      diag << ", which waits for rank " << getPeer(blocked);
      diag.attachNote(blocked->getLoc())
          << "rank " << rank << " waits here for rank " << getPeer(blocked);
    }
    return diag;
  }

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

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_SCHEDULESIMULATOR_H
