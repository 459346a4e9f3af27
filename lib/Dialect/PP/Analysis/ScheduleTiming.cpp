//===- ScheduleTiming.cpp - the one timing model of pp schedules ----------===//
//
// The costs table and the run of a schedule's ranks against each other.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleTiming.h"
#include "pp/Dialect/PP/Analysis/ActionTable.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pp;

std::string mlir::pp::formatQuantity(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

std::optional<TransferSemantics>
mlir::pp::symbolizeTransferSemantics(StringRef text) {
  if (text == "async")
    return TransferSemantics::async;
  if (text == "rendezvous")
    return TransferSemantics::rendezvous;
  return std::nullopt;
}

StringRef mlir::pp::stringifyTransferSemantics(TransferSemantics semantics) {
  return semantics == TransferSemantics::async ? "async" : "rendezvous";
}

//===----------------------------------------------------------------------===//
// ActionCosts
//===----------------------------------------------------------------------===//

ActionCosts::ActionCosts(CostAttr cost)
    : numStages(cost.getForward().size()),
      transfer(cost.getComm().getValueAsDouble()) {
  ArrayRef<double> forward = cost.getForward(), input = cost.getBackwardInput(),
                   weight = cost.getBackwardWeight(),
                   held = cost.getActivation(), stash = cost.getStash();
  // In the order of Phase: forward, backward_input, backward_weight,
  // backward.
  static_assert(static_cast<int>(Phase::forward) == 0 &&
                static_cast<int>(Phase::backward_input) == 1 &&
                static_cast<int>(Phase::backward_weight) == 2 &&
                static_cast<int>(Phase::backward) == 3);
  durations.append(forward.begin(), forward.end());
  durations.append(input.begin(), input.end());
  durations.append(weight.begin(), weight.end());
  for (int64_t s = 0; s < numStages; ++s)
    durations.push_back(input[s] + weight[s]);
  deltas.append(held.begin(), held.end());
  for (int64_t s = 0; s < numStages; ++s)
    deltas.push_back(stash[s] - held[s]);
  for (int64_t s = 0; s < numStages; ++s)
    deltas.push_back(-stash[s]);
  for (int64_t s = 0; s < numStages; ++s)
    deltas.push_back(-held[s]);
}

void ActionCosts::replaceZeroDurations(double duration) {
  for (double &time : durations)
    if (!(time > 0.0))
      time = duration;
}

//===----------------------------------------------------------------------===//
// TimedAction
//===----------------------------------------------------------------------===//

int64_t TimedAction::getProducerStage() const {
  // An activation flows from s to s + 1, a gradient from s to s - 1.
  if (kind == Kind::send)
    return stage;
  return transfer == TransferKind::activation ? stage - 1 : stage + 1;
}

//===----------------------------------------------------------------------===//
// ScheduleTiming
//===----------------------------------------------------------------------===//

void ScheduleTiming::setActions(std::vector<TimedAction> newActions,
                                SmallVector<int64_t> newRankBegin) {
  actions = std::move(newActions);
  rankBegin = std::move(newRankBegin);
  dataflow.reset();

  ActionTable<int64_t> sendIds(getMaxEnumValForTransferKind() + 1, numStages,
                               numMicrobatches, actions.size(),
                               /*empty=*/-1);
  auto key = [](const TimedAction &action) {
    return ActionKey{static_cast<int32_t>(action.transfer),
                     action.getProducerStage(), action.mb};
  };
  for (int64_t id = 0, e = actions.size(); id < e; ++id)
    if (actions[id].kind == TimedAction::Kind::send)
      sendIds.insertFirst(key(actions[id]), id);

  matchingSend.assign(actions.size(), kNotARecv);
  for (int64_t id = 0, e = actions.size(); id < e; ++id) {
    if (actions[id].kind != TimedAction::Kind::recv)
      continue;
    int64_t send = sendIds.lookup(key(actions[id]));
    bool fromPeer = send >= 0 && getRankOf(send) == actions[id].peer;
    matchingSend[id] = fromPeer ? send : kNoSend;
  }
}

int64_t ScheduleTiming::getRankOf(int64_t id) const {
  return std::upper_bound(rankBegin.begin(), rankBegin.end(), id) -
         rankBegin.begin() - 1;
}

double ScheduleTiming::getMakespan() const {
  double makespan = 0.0;
  for (const Interval &interval : intervals)
    makespan = std::max(makespan, interval.end);
  return makespan;
}

bool ScheduleTiming::waitsForever(int64_t rank) const {
  std::optional<int64_t> id = getBlockedAction(rank);
  return id && actions[*id].kind == TimedAction::Kind::recv &&
         matchingSend[*id] == kNoSend;
}

void ScheduleTiming::wakeWaiters(int64_t send) {
  for (int64_t w = firstWaiter[send]; w >= 0; w = nextWaiter[w])
    worklist.push_back(w);
  firstWaiter[send] = -1;
}

double ScheduleTiming::tryComplete(int64_t send) {
  if (completes[send] >= 0)
    return completes[send];
  bool async = semantics == TransferSemantics::async;
  if (sendReached[send] < 0 || (!async && recvReached[send] < 0))
    return -1.0;
  double start = async ? sendReached[send]
                       : std::max(sendReached[send], recvReached[send]);
  completes[send] = start + transferTime;
  wakeWaiters(send);
  return completes[send];
}

int64_t ScheduleTiming::reach(int64_t id, double now) {
  bool isSend = actions[id].kind == TimedAction::Kind::send;
  int64_t send = isSend ? id : matchingSend[id];
  if (send < 0)
    return send;
  std::vector<double> &reached = isSend ? sendReached : recvReached;
  if (reached[send] < 0)
    reached[send] = now;
  tryComplete(send);
  return send;
}

void ScheduleTiming::advance(int64_t rank, const ActionCosts &costs) {
  bool hasTransfers = !matchingSend.empty();
  for (int64_t end = rankBegin[rank + 1]; position[rank] < end;
       ++position[rank]) {
    int64_t id = position[rank];
    const TimedAction &action = actions[id];
    double now = clock[rank];
    if (hasTransfers) {
      // An exchange group's transfers all start when the rank reaches its
      // first one.
      if (!action.grouped)
        for (int64_t member = id + 1; member < end && actions[member].grouped;
             ++member)
          reach(member, now);
      int64_t send = reach(id, now);
      if (send == kNoSend)
        return; // Blocked forever.
      if (send != kNotARecv) {
        double done = tryComplete(send);
        // An async send returns at once; everything else waits for the
        // transfer to complete.
        if (send == id && semantics == TransferSemantics::async)
          done = now;
        if (done < 0) {
          nextWaiter[rank] = firstWaiter[send];
          firstWaiter[send] = rank;
          return;
        }
        now = std::max(now, done);
      }
    }
    double duration = getDuration(costs, action);
    switch (action.kind) {
    case TimedAction::Kind::compute: {
      if (dataflow) {
        // Woken by the rank that computes the missing input.
        std::optional<double> ready =
            dataflow->readyTime(action.phase, action.stage, action.mb);
        if (!ready)
          return;
        now = std::max(now, *ready);
      }
      held[rank] += costs.memoryDelta(action.phase, action.stage);
      peak[rank] = std::max(peak[rank], held[rank]);
      if (action.overlapped) {
        // An overlapped backward runs beside its forward, the action before
        // it, on a second stream: it starts with it, and the rank is free
        // once both end.
        Interval partner = intervals[id - 1];
        intervals[id] = {partner.start, partner.start + duration};
        clock[rank] = std::max(partner.end, intervals[id].end);
        continue;
      }
      intervals[id] = {now, now + duration};
      clock[rank] = intervals[id].end;
      if (dataflow) {
        dataflow->record(action.phase, action.stage, action.mb, clock[rank]);
        if (std::optional<int64_t> consumer =
                dataflow->getConsumerStage(action.phase, action.stage))
          worklist.push_back(dataflow->getStageRank()[*consumer]);
      }
      continue;
    }
    case TimedAction::Kind::allReduce:
      // An all-reduce runs in the background; its stage's optimizer step
      // waits for it.
      intervals[id] = {now, now + duration};
      if (action.stage >= 0 && action.stage < numStages)
        reduced[action.stage] = intervals[id].end;
      continue;
    case TimedAction::Kind::optimizerStep:
      if (action.stage >= 0 && action.stage < numStages)
        now = std::max(now, reduced[action.stage]);
      break;
    default:
      break;
    }
    intervals[id] = {now, now + duration};
    clock[rank] = intervals[id].end;
  }
}

LogicalResult ScheduleTiming::run(const ActionCosts &costs,
                                  TransferSemantics newSemantics) {
  int64_t numRanks = getNumRanks();
  semantics = newSemantics;
  transferTime = costs.transferTime();
  intervals.assign(actions.size(), Interval());
  if (!matchingSend.empty()) {
    sendReached.assign(actions.size(), -1.0);
    recvReached.assign(actions.size(), -1.0);
    completes.assign(actions.size(), -1.0);
    firstWaiter.assign(actions.size(), -1);
    nextWaiter.assign(numRanks, -1);
  }
  if (dataflow) {
    dataflow->setTransferTime(transferTime);
    dataflow->reset();
  }
  clock.assign(numRanks, 0.0);
  held.assign(numRanks, 0.0);
  peak.assign(numRanks, 0.0);
  reduced.assign(numStages, 0.0);
  position.assign(rankBegin.begin(), rankBegin.end() - 1);
  worklist.clear();
  for (int64_t rank = numRanks - 1; rank >= 0; --rank)
    worklist.push_back(rank);
  while (!worklist.empty())
    advance(worklist.pop_back_val(), costs);
  return success(llvm::all_of(llvm::seq<int64_t>(0, numRanks), [&](int64_t r) {
    return position[r] == rankBegin[r + 1];
  }));
}

SmallVector<int64_t> ScheduleTiming::getWaitChain() const {
  SmallVector<int64_t> chain;
  int64_t rank = 0;
  while (rank < getNumRanks() && !getBlockedAction(rank))
    ++rank;
  llvm::SmallDenseSet<int64_t> seen;
  while (rank >= 0 && rank < getNumRanks() && seen.insert(rank).second) {
    chain.push_back(rank);
    if (waitsForever(rank))
      return chain;
    rank = actions[*getBlockedAction(rank)].peer;
  }
  if (rank >= 0 && rank < getNumRanks())
    chain.push_back(rank);
  return chain;
}
