//===- RendezvousOrder.h - transfers NCCL cannot deadlock on ----*- C++ -*-===//
//
// Orders the sends and receives of a schedule into exchange groups so that
// the ranks make progress even when a send waits for its receive (NCCL
// point-to-point, TransferSemantics::rendezvous): the IR side of the
// scheduling library's sched::orderForRendezvous (TransferOrder.h), which
// says why the order is safe and which `auto` times its candidates with.
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
