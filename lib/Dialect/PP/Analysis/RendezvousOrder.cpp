//===- RendezvousOrder.cpp - transfers NCCL cannot deadlock on ------------===//
//
// Stamps transfers with their send time under async semantics and posts
// both ends in that order (see RendezvousOrder.h for why it is safe).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/RendezvousOrder.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {
/// A transfer to place: the compute action it goes right before (the
/// number of compute actions: the end), whether it receives, and when its
/// send is posted.
struct PlacedTransfer {
  size_t before;
  bool isRecv;
  double stamp;
  Operation *op;
};
} // namespace

/// The key of the tensor a send or receive moves.
static std::tuple<int32_t, int64_t, int64_t> getKey(Operation *transfer) {
  if (auto send = dyn_cast<SendOp>(transfer))
    return TransferKey::get(send).asTuple();
  return TransferKey::get(cast<RecvOp>(transfer)).asTuple();
}

/// Moves every transfer of one rank between the last compute action that
/// starts before the transfer's stamp and the next one, right after the
/// former.
static void placeTransfers(
    ArrayRef<Operation *> actions,
    ArrayRef<ScheduleSimulator::Interval> intervals,
    const DenseMap<std::tuple<int32_t, int64_t, int64_t>, double> &posted) {
  SmallVector<double> starts;
  SmallVector<Operation *> computes;
  for (auto [op, interval] : llvm::zip(actions, intervals)) {
    if (isa<ComputeOp>(op)) {
      starts.push_back(interval.start);
      computes.push_back(op);
    }
  }
  SmallVector<PlacedTransfer> transfers;
  for (Operation *op : actions) {
    if (!isa<SendOp, RecvOp>(op))
      continue;
    double stamp = posted.at(getKey(op));
    size_t before = llvm::lower_bound(starts, stamp) - starts.begin();
    transfers.push_back({before, isa<RecvOp>(op), stamp, op});
  }
  // A group's sends go first, so that a backend posting its transfers in
  // order never holds a send behind a receive.
  llvm::stable_sort(transfers, [](const auto &a, const auto &b) {
    return std::tie(a.before, a.isRecv, a.stamp) <
           std::tie(b.before, b.isRecv, b.stamp);
  });
  // Each group starts right after the compute action before it.
  Operation *previous = nullptr;
  size_t gap = SIZE_MAX;
  for (const PlacedTransfer &transfer : transfers) {
    if (transfer.before != gap) {
      gap = transfer.before;
      previous = gap > 0 ? computes[gap - 1] : nullptr;
    }
    Block *block = transfer.op->getBlock();
    if (previous)
      transfer.op->moveAfter(previous);
    else
      transfer.op->moveBefore(block, block->begin());
    previous = transfer.op;
  }
}

/// Whether the ranks of `schedule` finish with rendezvous transfers.
static bool runsWithRendezvous(ScheduleOp schedule) {
  ScheduleSimulator simulator(schedule);
  return succeeded(simulator.run(TransferSemantics::rendezvous));
}

LogicalResult mlir::pp::orderForRendezvous(ScheduleOp schedule) {
  // Receives right before their consumers are best with sends that never
  // block; grouping adjacent transfers often makes them safe as they are.
  for (RankOp rank : schedule.getBody().getOps<RankOp>())
    groupAdjacentTransfers(rank);
  if (runsWithRendezvous(schedule))
    return success();
  // Compute actions that cost nothing still take time, so that the stamps
  // keep their order.
  ActionCosts costs = getActionCosts(schedule.getCostOrUnit());
  costs.replaceZeroDurations(1.0);
  ScheduleSimulator simulator(schedule);
  if (failed(simulator.run(costs, TransferSemantics::async)))
    return failure();
  DenseMap<std::tuple<int32_t, int64_t, int64_t>, double> posted;
  for (int64_t rank = 0, e = simulator.getNumRanks(); rank < e; ++rank)
    for (auto [op, interval] :
         llvm::zip(simulator.getActions(rank), simulator.getIntervals(rank)))
      if (auto send = dyn_cast<SendOp>(op))
        posted.try_emplace(getKey(send), interval.start);
  for (int64_t rank = 0, e = simulator.getNumRanks(); rank < e; ++rank)
    placeTransfers(simulator.getActions(rank), simulator.getIntervals(rank),
                   posted);
  for (RankOp rank : schedule.getBody().getOps<RankOp>())
    groupAdjacentTransfers(rank);
  return success();
}

void mlir::pp::groupAdjacentTransfers(RankOp rank) {
  for (Operation &op : rank.getBody().front()) {
    // A group may mix step parts: a step skips its members that do not
    // run in it (a no-flush schedule's next-step send goes with this
    // step's receive, which a rendezvous transport needs).
    bool grouped = isa_and_nonnull<SendOp, RecvOp>(op.getPrevNode());
    llvm::TypeSwitch<Operation *>(&op).Case<SendOp, RecvOp>(
        [&](auto transfer) { transfer.setGrouped(grouped); });
  }
}
