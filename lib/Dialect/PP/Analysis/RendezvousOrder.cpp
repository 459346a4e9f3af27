//===- RendezvousOrder.cpp - transfers NCCL cannot deadlock on ------------===//
//
// Reads a schedule's ranks into the scheduling library's rendezvous order
// (sched::orderForRendezvous, TransferOrder.h) and moves the transfer ops
// to where it puts them.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/RendezvousOrder.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Scheduling/TransferOrder.h"

#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// Moves the transfers of one rank, `ops` in their new order: each right
/// after the action before it, or first. Actions that are not transfers stay
/// where they are, as do those the simulator skips (a next step's).
static void moveTransfers(ArrayRef<Operation *> ops) {
  Operation *previous = nullptr;
  for (Operation *op : ops) {
    if (isa<SendOp, RecvOp>(op)) {
      if (previous)
        op->moveAfter(previous);
      else
        op->moveBefore(op->getBlock(), op->getBlock()->begin());
    }
    previous = op;
  }
}

LogicalResult mlir::pp::orderForRendezvous(ScheduleOp schedule) {
  ScheduleSimulator simulator(schedule);
  RankActions actions;
  std::vector<Operation *> ops;
  for (int64_t rank = 0, e = simulator.getNumRanks(); rank < e; ++rank) {
    llvm::append_range(actions.actions, simulator.getTimedActions(rank));
    llvm::append_range(ops, simulator.getActions(rank));
    actions.rankBegin.push_back(actions.actions.size());
  }
  ActionCosts costs = getActionCosts(schedule.getCostOrUnit());
  std::vector<int64_t> order;
  LogicalResult ordered =
      sched::orderForRendezvous(actions, schedule.getNumStages(),
                                schedule.getNumMicrobatches(), costs, &order);
  if (succeeded(ordered) &&
      !llvm::equal(order, llvm::seq<int64_t>(0, order.size()))) {
    for (int64_t rank = 0, e = simulator.getNumRanks(); rank < e; ++rank) {
      SmallVector<Operation *> moved;
      for (int64_t i = actions.rankBegin[rank]; i < actions.rankBegin[rank + 1];
           ++i)
        moved.push_back(ops[order[i]]);
      moveTransfers(moved);
    }
  }
  // The groups as the IR holds them, a next step's transfers included.
  for (RankOp rank : schedule.getBody().getOps<RankOp>())
    groupAdjacentTransfers(rank);
  return ordered;
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
