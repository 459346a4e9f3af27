//===- ScheduleSimulator.cpp - run a pp.schedule in lock step -------------===//
//
// The simulation behind deadlock checks, timelines and pp-simulate.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/Analysis/ActionTable.h"

using namespace mlir;
using namespace mlir::pp;

ScheduleSimulator::ScheduleSimulator(ScheduleOp schedule) {
  for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
    rankBegin.push_back(actions.size());
    for (Operation &op : rank.getBody().front())
      actions.push_back(&op);
  }
  rankBegin.push_back(actions.size());

  ActionTable<int64_t> sendIds(getMaxEnumValForTransferKind() + 1,
                               schedule.getNumStages(),
                               schedule.getNumMicrobatches(), actions.size(),
                               /*empty=*/-1);
  for (int64_t id = 0, e = actions.size(); id < e; ++id)
    if (auto send = dyn_cast<SendOp>(actions[id]))
      sendIds.insertFirst(TransferKey::get(send).asTuple(), id);

  matchingSend.assign(actions.size(), kNotARecv);
  for (int64_t rank = 0, e = getNumRanks(); rank < e; ++rank) {
    for (int64_t id = rankBegin[rank]; id < rankBegin[rank + 1]; ++id) {
      auto recv = dyn_cast<RecvOp>(actions[id]);
      if (!recv)
        continue;
      int64_t send = sendIds.lookup(TransferKey::get(recv).asTuple());
      bool fromPeer =
          send >= 0 && getRankOf(send) == static_cast<int64_t>(recv.getPeer());
      matchingSend[id] = fromPeer ? send : kNoSend;
    }
  }
}

LogicalResult ScheduleSimulator::run(CostFn cost, Semantics semantics,
                                     double transferTime) {
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
  // When each stage's all-reduce completes.
  llvm::DenseMap<int64_t, double> reduced;
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

  // The transfer of action `id` (a send, or a receive with a send) is
  // reached at `now`; returns its send, kNotARecv or kNoSend.
  auto reach = [&](int64_t id, double now) {
    int64_t send = isa<SendOp>(actions[id]) ? id : matchingSend[id];
    if (send < 0)
      return send;
    std::vector<double> &reached = send == id ? sendReached : recvReached;
    if (reached[send] < 0)
      reached[send] = now;
    tryComplete(send);
    return send;
  };

  for (int64_t rank = numRanks - 1; rank >= 0; --rank)
    worklist.push_back(rank);
  while (!worklist.empty()) {
    int64_t rank = worklist.pop_back_val();
    for (; position[rank] < rankBegin[rank + 1]; ++position[rank]) {
      int64_t id = position[rank];
      double now = clock[rank];
      // An exchange group's transfers all start when the rank reaches its
      // first one.
      if (!isGroupedWithPrevious(actions[id]))
        for (int64_t member = id + 1; member < rankBegin[rank + 1] &&
                                      isGroupedWithPrevious(actions[member]);
             ++member)
          reach(member, now);
      int64_t send = reach(id, now);
      if (send == kNoSend)
        break; // Blocked forever.
      if (send != kNotARecv) {
        bool isSend = send == id;
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
      Operation *op = actions[id];
      if (auto compute = dyn_cast<ComputeOp>(op);
          compute && compute.getOverlapPartner()) {
        // An overlapped backward runs beside its forward, the action before
        // it, on a second stream: it starts with it, and the rank is free
        // once both end.
        Interval partner = intervals[id - 1];
        intervals[id] = {partner.start, partner.start + cost(op)};
        clock[rank] = std::max(partner.end, intervals[id].end);
        continue;
      }
      if (auto step = dyn_cast<OptimizerStepOp>(op))
        now = std::max(now, reduced.lookup(step.getStage()));
      intervals[id] = {now, now + cost(op)};
      // An all-reduce runs in the background; its stage's optimizer step
      // waits for it.
      if (auto reduce = dyn_cast<AllReduceOp>(op))
        reduced[reduce.getStage()] = intervals[id].end;
      else
        clock[rank] = intervals[id].end;
    }
  }
  return success(llvm::all_of(llvm::seq<int64_t>(0, numRanks), [&](int64_t r) {
    return position[r] == rankBegin[r + 1];
  }));
}

SmallVector<int64_t> ScheduleSimulator::getWaitChain() const {
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

LogicalResult ScheduleSimulator::runForTimeline(Operation *schedule) {
  if (succeeded(run()))
    return success();
  emitDeadlockError().attachNote(schedule->getLoc())
      << "while simulating this schedule for its timeline";
  return failure();
}

InFlightDiagnostic ScheduleSimulator::emitDeadlockError() const {
  SmallVector<int64_t> chain = getWaitChain();
  ArrayRef<int64_t> waiting = chain;
  if (chain.size() > 1 && llvm::is_contained(waiting.drop_back(), chain.back()))
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
          << "rank " << rank << " waits here for a 'pp.send' that never comes";
      continue;
    }
    diag << ", which waits for rank " << getPeer(blocked);
    diag.attachNote(blocked->getLoc())
        << "rank " << rank << " waits here for rank " << getPeer(blocked);
  }
  return diag;
}
