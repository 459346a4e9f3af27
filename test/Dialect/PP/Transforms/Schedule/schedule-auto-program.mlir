// `auto` times its candidates as the program pp-insert-transfers makes of
// them under the transfer semantics it is given (`semantics`, async by
// default), which the schedule records for the passes after it: its
// makespan is pp-simulate's after pp-insert-transfers. Eight ranks, 32 micro-batches, transfers about as long
// as a forward, a memory cap of 8 or of 8, 7, ..., 1.
// RUN: pp-opt %s --pp-schedule="schedule=auto num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=rendezvous -o /dev/null 2>&1 | FileCheck %s --check-prefix=RENDEZVOUS
// RUN: pp-opt %s --pp-schedule="schedule=auto semantics=async num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASYNC
// RUN: pp-opt %s --pp-schedule="schedule=auto num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8,7,6,5,4,3,2,1 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=rendezvous -o /dev/null 2>&1 | FileCheck %s --check-prefix=RENDEZVOUS-CAPS
// RUN: pp-opt %s --pp-schedule="schedule=auto semantics=async num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8,7,6,5,4,3,2,1" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASYNC-CAPS
// Semantics given to pp-schedule alone reach the later passes: 3 stages,
// 5 micro-batches, a cap per rank.
// RUN: pp-opt %s --pp-schedule="schedule=auto num-stages=3 num-microbatches=5 forward-cost=1.14,1.09,0.88 backward-input-cost=0.8,0.87,1.19 backward-weight-cost=0.89,1.05,1.0 comm-cost=0.785 memory-cap=3,2,1 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=RECORDED
// RUN: pp-opt %s --pp-schedule="schedule=auto num-stages=3 num-microbatches=5 forward-cost=1.14,1.09,0.88 backward-input-cost=0.8,0.87,1.19 backward-weight-cost=0.89,1.05,1.0 comm-cost=0.785 memory-cap=3,2,1" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=DEFAULT
// The same problem with zb-h1, for comparison.
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=8 num-microbatches=32 forward-cost=1,1.1,0.9,1,1.05,0.95,1,1.1 backward-input-cost=1,0.9,1.1,1,1,1.05,0.95,1 backward-weight-cost=1,1,0.9,1.1,1,1,1.05,0.95 comm-cost=0.953 memory-cap=8 semantics=rendezvous" --pp-insert-transfers --pp-simulate=semantics=rendezvous -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZB-RENDEZVOUS
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
// RECORDED: remark: auto: makespan [[M:29.645]] (1f1b)
// RECORDED: remark: makespan [[M]],
// RECORDED: pp.schedule {{.*}} attributes {{{.*}}semantics = #pp<semantics rendezvous>}
// DEFAULT: remark: auto: makespan [[M:21.2]] (exhaustive search){{.*}}proven optimal
// DEFAULT: remark: makespan [[M]],
// DEFAULT-NOT: semantics =
// ZB-RENDEZVOUS: remark: makespan 257.487,
// ZB-ASYNC: remark: makespan 148.304,
module {
}
