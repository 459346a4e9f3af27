//===- ScheduleTiming.cpp - the one timing model of pp schedules ----------===//
//
// The costs table and the run of a schedule's ranks against each other.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleTiming.h"
#include "pp/Scheduling/ActionTable.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

std::string mlir::pp::sched::formatQuantity(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

std::string mlir::pp::sched::formatPrecisely(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.12g", value);
  return text;
}

//===----------------------------------------------------------------------===//
// ActionCosts
//===----------------------------------------------------------------------===//

StageCosts StageCosts::getUnit(int64_t numStages) {
  StageCosts unit;
  unit.forward.assign(numStages, 1.0);
  unit.backwardInput.assign(numStages, 1.0);
  unit.backwardWeight.assign(numStages, 1.0);
  unit.activation.assign(numStages, 1.0);
  unit.stash.assign(numStages, 0.0);
  return unit;
}

std::array<double, 5> StageCosts::get(int64_t stage, int64_t mb) const {
  const MicrobatchCosts &table = perMicrobatch;
  size_t at = stage * table.numMicrobatches + mb;
  auto pick = [&](ArrayRef<double> perStage, ArrayRef<double> perMb) {
    return perMb.empty() ? perStage[stage] : perMb[at];
  };
  return {pick(forward, table.forward),
          pick(backwardInput, table.backwardInput),
          pick(backwardWeight, table.backwardWeight),
          pick(activation, table.activation), pick(stash, table.stash)};
}

std::string StageCosts::check(int64_t numStages,
                              int64_t numMicrobatches) const {
  std::string problem;
  llvm::raw_string_ostream os(problem);
  if (getNumStages() != numStages) {
    os << "the costs describe " << getNumStages() << " stages, not "
       << numStages;
    return problem;
  }
  if (!optimizer.empty() &&
      static_cast<int64_t>(optimizer.size()) != numStages) {
    os << "the optimizer costs describe " << optimizer.size() << " stages, not "
       << numStages;
    return problem;
  }
  const MicrobatchCosts &table = perMicrobatch;
  if (table.empty())
    return problem;
  if (table.numMicrobatches != numMicrobatches) {
    os << "the per-micro-batch costs describe " << table.numMicrobatches
       << " micro-batches, not " << numMicrobatches;
    return problem;
  }
  size_t size = numStages * numMicrobatches;
  for (ArrayRef<double> field :
       {ArrayRef<double>(table.forward), ArrayRef<double>(table.backwardInput),
        ArrayRef<double>(table.backwardWeight),
        ArrayRef<double>(table.activation), ArrayRef<double>(table.stash)})
    if (!field.empty() && field.size() != size) {
      os << "a per-micro-batch cost table has " << field.size()
         << " entries, not " << size;
      return problem;
    }
  for (int64_t s = 0; s < numStages; ++s)
    for (int64_t mb = 0; mb < numMicrobatches; ++mb) {
      std::array<double, 5> at = get(s, mb);
      if (at[4] > at[3]) {
        os << "stage " << s << " micro-batch " << mb << " stashes "
           << formatQuantity(at[4]) << " for W but holds only "
           << formatQuantity(at[3]);
        return problem;
      }
    }
  return problem;
}

ActionCosts::ActionCosts(const StageCosts &cost)
    : numStages(cost.getNumStages()),
      optimizer(cost.optimizer.begin(), cost.optimizer.end()),
      transfer(cost.transfer), overhead(cost.stepOverhead) {
  // In the order of Phase: forward, backward_input, backward_weight,
  // backward.
  static_assert(static_cast<int>(Phase::forward) == 0 &&
                static_cast<int>(Phase::backward_input) == 1 &&
                static_cast<int>(Phase::backward_weight) == 2 &&
                static_cast<int>(Phase::backward) == 3);
  if (!cost.perMicrobatch.empty()) {
    width = cost.getNumMicrobatches();
    mbStride = 1;
  }
  size_t size = 4 * numStages * width;
  durations.resize(size);
  deltas.resize(size);
  for (int64_t s = 0; s < numStages; ++s)
    for (int64_t mb = 0; mb < width; ++mb) {
      auto [forward, input, weight, held, stash] = cost.get(s, mb);
      auto set = [&](Phase phase, double time, double delta) {
        durations[index(phase, s, mb)] = time;
        deltas[index(phase, s, mb)] = delta;
      };
      set(Phase::forward, forward, held);
      set(Phase::backward_input, input, stash - held);
      set(Phase::backward_weight, weight, -stash);
      set(Phase::backward, input + weight, -held);
    }
}

double ActionCosts::getLargestDuration(Phase phase, int64_t stage) const {
  ArrayRef<double> row(&durations[index(phase, stage, 0)], width);
  return *llvm::max_element(row);
}

double ActionCosts::getLargestMemoryDelta(Phase phase, int64_t stage) const {
  ArrayRef<double> row(&deltas[index(phase, stage, 0)], width);
  return *llvm::max_element(row);
}

double ActionCosts::getTotalDuration(Phase phase, int64_t stage,
                                     int64_t numMicrobatches) const {
  if (isUniform())
    return numMicrobatches * duration(phase, stage, 0);
  double total = 0.0;
  for (int64_t mb = 0; mb < numMicrobatches; ++mb)
    total += duration(phase, stage, mb);
  return total;
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
  if (kind == Kind::send)
    return stage;
  return getNeighbourStage(transfer, /*isSend=*/false, stage);
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

double ScheduleTiming::reachTransfers(int64_t rank, int64_t id, int64_t end,
                                      double now) {
  // An exchange group's transfers all start when the rank reaches its first
  // one.
  if (!actions[id].grouped)
    for (int64_t member = id + 1; member < end && actions[member].grouped;
         ++member)
      reach(member, now);
  int64_t send = reach(id, now);
  if (send == kNoSend)
    return kBlockedForever;
  if (send == kNotARecv)
    return now;
  // An async send returns at once; everything else waits for the transfer
  // to complete.
  if (send == id && semantics == TransferSemantics::async)
    return now;
  double done = tryComplete(send);
  if (done < 0) {
    nextWaiter[rank] = firstWaiter[send];
    firstWaiter[send] = rank;
    return -1.0;
  }
  return std::max(now, done);
}

void ScheduleTiming::startRun(const ActionCosts &costs,
                              TransferSemantics newSemantics,
                              bool withIntervals) {
  int64_t numRanks = getNumRanks();
  size_t numActions = rankBegin.back();
  semantics = newSemantics;
  transferTime = costs.transferTime();
  recordIntervals = withIntervals;
  intervals.assign(withIntervals ? numActions : 0, Interval());
  if (!matchingSend.empty()) {
    sendReached.assign(numActions, -1.0);
    recvReached.assign(numActions, -1.0);
    completes.assign(numActions, -1.0);
    firstWaiter.assign(numActions, -1);
    nextWaiter.assign(numRanks, -1);
  }
  if (dataflow) {
    dataflow->setTransferTime(transferTime);
    dataflow->reset();
  }
  // Each rank's step starts with its set-up.
  clock.assign(numRanks, costs.stepOverhead());
  held.assign(numRanks, 0.0);
  peak.assign(numRanks, 0.0);
  reduced.assign(numStages, 0.0);
  gathered.assign(numStages, 0.0);
  computed.assign(numStages, false);
  position.assign(rankBegin.begin(), rankBegin.end() - 1);
  worklist.clear();
}

LogicalResult ScheduleTiming::run(const ActionCosts &costs,
                                  TransferSemantics semantics) {
  SmallVector<ArrayRef<TimedAction>> ranks;
  for (int64_t rank = 0, e = getNumRanks(); rank < e; ++rank)
    ranks.push_back(getActions(rank));
  startRun(costs, semantics, /*withIntervals=*/true);
  return runRanks(ranks, costs);
}

SmallVector<int64_t> ScheduleTiming::getWaitChain() const {
  SmallVector<int64_t> chain;
  int64_t rank = 0;
  while (rank < getNumRanks() && !getBlockedAction(rank))
    ++rank;
  // A rank that finished ends the chain: under rendezvous semantics a send
  // to it waits for a receive it never reaches.
  auto isBlocked = [&](int64_t rank) {
    return rank >= 0 && rank < getNumRanks() && getBlockedAction(rank);
  };
  llvm::SmallDenseSet<int64_t> seen;
  while (isBlocked(rank) && seen.insert(rank).second) {
    chain.push_back(rank);
    if (waitsForever(rank))
      return chain;
    rank = actions[*getBlockedAction(rank)].peer;
  }
  if (isBlocked(rank))
    chain.push_back(rank);
  return chain;
}
