//===- RendezvousOrder.h - transfers NCCL cannot deadlock on ----*- C++ -*-===//
//
// Orders the sends and receives of a schedule into exchange groups so that
// the ranks make progress even when a send waits for its receive (NCCL
// point-to-point, TransferSemantics::rendezvous).
//
// First each run of adjacent transfers becomes a group (Megatron's
// send_forward_recv_backward); that keeps every receive right before its
// consumer, best with sends that never block, and suffices for GPipe,
// 1F1B and the zero-bubble schedules. Otherwise, the construction: simulate the
// schedule with sends that never block, and stamp each transfer with the time
// its send is posted there. Every rank then posts the transfer, at either end,
// right before its first compute action that starts at or after the stamp, and
// the transfers between two compute actions form one group. Ranks go through
// the stamps in increasing order: when every transfer with an earlier stamp is
// done, both ends of the next one are reachable, because the compute actions
// before it start earlier and so need only earlier transfers. This needs
// compute actions of positive duration; ones the costs make free count as one
// unit.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_RENDEZVOUSORDER_H
#define PP_DIALECT_PP_ANALYSIS_RENDEZVOUSORDER_H

#include "pp/Dialect/PP/IR/PPOps.h"

namespace mlir::pp {

/// Makes the transfers of `schedule` rendezvous-safe exchange groups
/// (`grouped`). Where grouping adjacent transfers is not enough, moves them
/// as above, keeping every action's order relative to the compute actions
/// of its rank except that receives may come earlier. Fails, with the
/// adjacent transfers grouped, if the ranks deadlock even with sends that
/// never block.
LogicalResult orderForRendezvous(ScheduleOp schedule);

/// Makes each run of adjacent transfers in `rank` one exchange group.
void groupAdjacentTransfers(RankOp rank);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_RENDEZVOUSORDER_H
