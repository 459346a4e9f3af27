//===- TransferOrder.cpp - where a schedule's transfers go ----------------===//
//
// Inserts the transfers of compute-only schedules, stamps transfers with
// their send time under async semantics and posts both ends in that order
// (see TransferOrder.h for why it is safe).
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/TransferOrder.h"
#include "pp/Scheduling/ActionTable.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

void mlir::pp::sched::getTransfers(const TimedAction &compute,
                                   ArrayRef<int64_t> stageRank,
                                   SmallVectorImpl<TimedAction> &recvs,
                                   SmallVectorImpl<TimedAction> &sends) {
  if (compute.phase == Phase::backward_weight)
    return;
  int64_t stage = compute.stage, last = stageRank.size() - 1;
  int64_t rank = stageRank[stage];
  auto add = [&](SmallVectorImpl<TimedAction> &into, TimedAction::Kind kind,
                 TransferKind transfer, int64_t peerStage) {
    if (peerStage < 0 || peerStage > last || stageRank[peerStage] == rank)
      return;
    TimedAction action;
    action.kind = kind;
    action.transfer = transfer;
    action.stage = stage;
    action.mb = compute.mb;
    action.peer = stageRank[peerStage];
    into.push_back(action);
  };
  // An activation comes from the stage before and goes to the one after; a
  // gradient the other way.
  bool forward = compute.phase == Phase::forward;
  TransferKind kind =
      forward ? TransferKind::activation : TransferKind::gradient;
  int64_t from = forward ? stage - 1 : stage + 1;
  int64_t to = forward ? stage + 1 : stage - 1;
  add(recvs, TimedAction::Kind::recv, kind, from);
  add(sends, TimedAction::Kind::send, kind, to);
}

RankActions
mlir::pp::sched::insertTransfers(const GeneratedSchedule &schedule) {
  RankActions result;
  SmallVector<TimedAction, 2> recvs, sends;
  for (const auto &rank : schedule.ranks) {
    for (const ScheduledAction &action : rank) {
      TimedAction compute =
          TimedAction::getCompute(action.phase, action.stage, action.mb);
      recvs.clear();
      sends.clear();
      getTransfers(compute, schedule.stageRank, recvs, sends);
      result.actions.insert(result.actions.end(), recvs.begin(), recvs.end());
      result.actions.push_back(compute);
      result.actions.insert(result.actions.end(), sends.begin(), sends.end());
    }
    result.rankBegin.push_back(result.actions.size());
  }
  return result;
}

void mlir::pp::sched::groupAdjacentTransfers(
    MutableArrayRef<TimedAction> rank) {
  for (auto [i, action] : llvm::enumerate(rank))
    if (action.isTransfer())
      action.grouped = i > 0 && rank[i - 1].isTransfer();
}

namespace {
/// A transfer to place: the compute action it goes right before (the
/// number of compute actions: the end), whether it receives, when its send
/// is posted, and its index in the rank.
struct PlacedTransfer {
  size_t before;
  bool isRecv;
  double stamp;
  int64_t index;
};
} // namespace

/// The key of the tensor a send or receive moves.
static ActionKey getKey(const TimedAction &transfer) {
  return {static_cast<int32_t>(transfer.transfer), transfer.getProducerStage(),
          transfer.mb};
}

/// Moves every transfer of one rank between the last compute action that
/// starts before the transfer's stamp and the next one, right after the
/// former; `order` gets the indices of the rank's actions in their new
/// order.
static void placeTransfers(ArrayRef<TimedAction> actions,
                           ArrayRef<ScheduleTiming::Interval> intervals,
                           const ActionTable<double> &posted,
                           SmallVectorImpl<int64_t> &order) {
  SmallVector<double> starts;
  for (auto [action, interval] : llvm::zip(actions, intervals))
    if (action.kind == TimedAction::Kind::compute)
      starts.push_back(interval.start);
  SmallVector<PlacedTransfer> transfers;
  for (auto [i, action] : llvm::enumerate(actions)) {
    if (!action.isTransfer())
      continue;
    double stamp = posted.lookup(getKey(action));
    size_t before = llvm::lower_bound(starts, stamp) - starts.begin();
    transfers.push_back(
        {before, action.kind == TimedAction::Kind::recv, stamp, int64_t(i)});
  }
  // A group's sends go first, so that a backend posting its transfers in
  // order never holds a send behind a receive.
  llvm::stable_sort(transfers, [](const auto &a, const auto &b) {
    return std::tie(a.before, a.isRecv, a.stamp) <
           std::tie(b.before, b.isRecv, b.stamp);
  });
  // Each group goes right after the compute action before it; other
  // actions keep their places among the compute actions.
  const PlacedTransfer *next = transfers.begin(), *end = transfers.end();
  auto placeGap = [&](size_t gap) {
    for (; next != end && next->before == gap; ++next)
      order.push_back(next->index);
  };
  placeGap(0);
  size_t computes = 0;
  for (auto [i, action] : llvm::enumerate(actions)) {
    if (action.isTransfer())
      continue;
    order.push_back(i);
    if (action.kind == TimedAction::Kind::compute)
      placeGap(++computes);
  }
}

/// Stamps the transfers of the actions set in `timing` (grouped, rank by
/// rank) with their send times in an async run and posts both ends in stamp
/// order (see TransferOrder.h); `placed` gets the actions in their new
/// order and `order` the index each had. Fails if the ranks deadlock even
/// so.
static LogicalResult placeByStamps(ScheduleTiming &timing,
                                   const ActionCosts &costs,
                                   RankActions &placed,
                                   std::vector<int64_t> *order) {
  int64_t numRanks = timing.getNumRanks();
  // Compute actions that cost nothing still take time, so that the stamps
  // keep their order.
  ActionCosts positive = costs;
  positive.replaceZeroDurations(1.0);
  if (failed(timing.run(positive, TransferSemantics::async)))
    return failure();
  size_t numActions = timing.getFirstAction(numRanks);
  ActionTable<double> posted(getMaxEnumValForTransferKind() + 1,
                             timing.getNumStages(), timing.getNumMicrobatches(),
                             numActions, /*empty=*/-1.0);
  for (int64_t rank = 0; rank < numRanks; ++rank)
    for (auto [action, interval] :
         llvm::zip(timing.getActions(rank), timing.getIntervals(rank)))
      if (action.kind == TimedAction::Kind::send)
        posted.insertFirst(getKey(action), interval.start);
  placed.actions.clear();
  placed.actions.reserve(numActions);
  placed.rankBegin.assign(1, 0);
  if (order)
    order->clear();
  SmallVector<int64_t> rankOrder;
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    rankOrder.clear();
    ArrayRef<TimedAction> actions = timing.getActions(rank);
    placeTransfers(actions, timing.getIntervals(rank), posted, rankOrder);
    for (int64_t index : rankOrder) {
      placed.actions.push_back(actions[index]);
      if (order)
        order->push_back(timing.getFirstAction(rank) + index);
    }
    placed.rankBegin.push_back(placed.actions.size());
    groupAdjacentTransfers(placed.getRank(rank));
  }
  return success();
}

/// Groups the adjacent transfers of `schedule`, sets its actions in
/// `timing` and runs them under rendezvous semantics: whether the ranks
/// deadlock depends on the order alone.
static LogicalResult runGroupedAsIs(RankActions schedule,
                                    const ActionCosts &costs,
                                    ScheduleTiming &timing) {
  for (int64_t rank = 0, e = schedule.getNumRanks(); rank < e; ++rank)
    groupAdjacentTransfers(schedule.getRank(rank));
  timing.setActions(std::move(schedule.actions), std::move(schedule.rankBegin));
  return timing.run(costs, TransferSemantics::rendezvous);
}

LogicalResult mlir::pp::sched::orderForRendezvous(RankActions &schedule,
                                                  int64_t numStages,
                                                  int64_t numMicrobatches,
                                                  const ActionCosts &costs,
                                                  std::vector<int64_t> *order) {
  if (order) {
    order->resize(schedule.actions.size());
    std::iota(order->begin(), order->end(), 0);
  }
  for (int64_t rank = 0, e = schedule.getNumRanks(); rank < e; ++rank)
    groupAdjacentTransfers(schedule.getRank(rank));
  ScheduleTiming timing(numStages, numMicrobatches);
  if (succeeded(runGroupedAsIs(schedule, costs, timing)))
    return success();
  return placeByStamps(timing, costs, schedule, order);
}

LogicalResult mlir::pp::sched::runProgram(const GeneratedSchedule &schedule,
                                          const ActionCosts &costs,
                                          TransferSemantics semantics,
                                          ScheduleTiming &timing) {
  RankActions program = insertTransfers(schedule);
  if (semantics == TransferSemantics::async) {
    timing.setActions(std::move(program.actions), std::move(program.rankBegin));
    return timing.run(costs, semantics);
  }
  // Mostly the grouped order runs as it is, and that run is the answer.
  if (succeeded(runGroupedAsIs(std::move(program), costs, timing)))
    return success();
  if (failed(placeByStamps(timing, costs, program, nullptr)))
    return failure();
  timing.setActions(std::move(program.actions), std::move(program.rankBegin));
  return timing.run(costs, semantics);
}
