// `auto` times its candidates as the program pp-insert-transfers makes of
// them under the transfer semantics it is given (`semantics`, rendezvous by
// default): its makespan is pp-simulate's after pp-insert-transfers with
// the same semantics. Eight ranks, 32 micro-batches, transfers about as long
// as a forward, a memory cap of 8 or of 8, 7, ..., 1.
// RUN: pp-opt %s --pp-schedule="schedule=auto num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8" --pp-insert-transfers --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=rendezvous -o /dev/null 2>&1 | FileCheck %s --check-prefix=RENDEZVOUS
// RUN: pp-opt %s --pp-schedule="schedule=auto semantics=async num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASYNC
// RUN: pp-opt %s --pp-schedule="schedule=auto num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8,7,6,5,4,3,2,1" --pp-insert-transfers --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=rendezvous -o /dev/null 2>&1 | FileCheck %s --check-prefix=RENDEZVOUS-CAPS
// RUN: pp-opt %s --pp-schedule="schedule=auto semantics=async num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8,7,6,5,4,3,2,1" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASYNC-CAPS
// The same problem with zb-h1, for comparison.
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8" --pp-insert-transfers --pp-simulate=semantics=rendezvous -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZB-RENDEZVOUS
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8" --pp-insert-transfers=semantics=async --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZB-ASYNC

// With rendezvous transfers every transfer holds both of its ranks: 1F1B's
// send-forward-receive-backward groups win (191.375, where zb-h1 takes
// 257.487). With async ones the Zero Bubble heuristic's schedule wins
// (144.304, also under the per-rank caps), where zb-h1 takes 148.304.
// RENDEZVOUS: remark: auto: makespan [[M:191.375]] (1f1b)
// RENDEZVOUS: remark: makespan [[M]],
// ASYNC: remark: auto: makespan [[M:144.304]] (zero-bubble greedy)
// ASYNC: remark: makespan [[M]],
// RENDEZVOUS-CAPS: remark: auto: makespan [[M:191.375]] (1f1b)
// RENDEZVOUS-CAPS: remark: makespan [[M]],
// ASYNC-CAPS: remark: auto: makespan [[M:144.304]] (zero-bubble greedy)
// ASYNC-CAPS: remark: makespan [[M]],
// ZB-RENDEZVOUS: remark: makespan 257.487,
// ZB-ASYNC: remark: makespan 148.304,
module {
}
