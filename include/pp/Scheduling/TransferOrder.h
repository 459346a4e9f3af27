//===- TransferOrder.h - where a schedule's transfers go --------*- C++ -*-===//
//
// The sends and receives a compute-only schedule becomes, on plain data:
// which transfers each compute action needs, and for rendezvous semantics
// (a send waits for its receive, NCCL) the exchange groups no rank can
// deadlock on. pp-insert-transfers materialises these decisions in the IR;
// `auto` times its candidates as the program they become, so that its
// makespan is pp-simulate's after pp-insert-transfers.
//
// Rendezvous order: first each run of adjacent transfers becomes a group
// (Megatron's send_forward_recv_backward); that keeps every receive right
// before its consumer, best with sends that never block, and suffices for
// GPipe, 1F1B and the zero-bubble schedules. Otherwise, the construction:
// simulate the schedule with sends that never block, and stamp each
// transfer with the time its send is posted there. Every rank then posts
// the transfer, at either end, right before its first compute action that
// starts at or after the stamp, and the transfers between two compute
// actions form one group (its sends first). Ranks go through the stamps in
// increasing order: when every transfer with an earlier stamp is done, both
// ends of the next one are reachable, because the compute actions before it
// start earlier and so need only earlier transfers. This needs compute
// actions of positive duration; ones the costs make free count as one unit.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_TRANSFERORDER_H
#define PP_SCHEDULING_TRANSFERORDER_H

#include "pp/Scheduling/ScheduleProblem.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include <vector>

namespace mlir::pp::sched {

/// The transfers compute action `compute` needs with stage s on rank
/// `stageRank[s]`: receives of its inputs from stages on other ranks (a
/// forward's activation, an input gradient's or fused backward's gradient)
/// and sends of its result to them. A weight gradient needs none.
void getTransfers(const TimedAction &compute, ArrayRef<int64_t> stageRank,
                  SmallVectorImpl<TimedAction> &recvs,
                  SmallVectorImpl<TimedAction> &sends);

/// The actions of every rank of a schedule with explicit transfers, as
/// ScheduleTiming runs them: rank r owns [rankBegin[r], rankBegin[r + 1]).
struct RankActions {
  std::vector<TimedAction> actions;
  SmallVector<int64_t> rankBegin = {0};

  int64_t getNumRanks() const { return rankBegin.size() - 1; }
  MutableArrayRef<TimedAction> getRank(int64_t rank) {
    return MutableArrayRef<TimedAction>(actions).slice(
        rankBegin[rank], rankBegin[rank + 1] - rankBegin[rank]);
  }
};

/// `schedule` with each compute action's receives right before it and its
/// sends right after it (the order pp-insert-transfers{semantics=async}
/// emits); no optimizer steps or all-reduces, which take no rank time.
RankActions insertTransfers(const GeneratedSchedule &schedule);

/// Makes each run of adjacent transfers of one rank an exchange group.
void groupAdjacentTransfers(MutableArrayRef<TimedAction> rank);

/// Orders the transfers of `schedule` into rendezvous-safe exchange groups
/// (see above), keeping every action's order relative to the compute
/// actions of its rank except that receives may come earlier. With `order`,
/// returns for every action the index it had before. Fails, with the
/// adjacent transfers grouped, if the ranks deadlock even with sends that
/// never block.
LogicalResult orderForRendezvous(RankActions &schedule, int64_t numStages,
                                 int64_t numMicrobatches,
                                 const ActionCosts &costs,
                                 std::vector<int64_t> *order = nullptr);

/// Runs `schedule` (compute-only) in `timing` as the program
/// pp-insert-transfers{semantics} makes of it, under those semantics, as
/// pp-simulate{semantics} runs it; fails if the ranks deadlock.
LogicalResult runProgram(const GeneratedSchedule &schedule,
                         const ActionCosts &costs, TransferSemantics semantics,
                         ScheduleTiming &timing);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_TRANSFERORDER_H
