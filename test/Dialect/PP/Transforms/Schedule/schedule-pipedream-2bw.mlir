// RUN: pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=4 num-microbatches=8" 2>&1 | FileCheck %s
// RUN: pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=DRAINED
// RUN: pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=4 num-microbatches=8 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule="semantics=rendezvous" 2>/dev/null | FileCheck %s --check-prefix=TRANSFERS
// RUN: pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=8 num-microbatches=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=P8
// RUN: pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=4 num-microbatches=8 forward-cost=1,2,1,1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW
// RUN: pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=4 num-microbatches=8 comm-cost=0.5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMM
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8" | FileCheck %s --check-prefix=SYNC

// PipeDream-2BW runs one step per call in 1F1B order (rank r: p - r - 1
// warm-up forwards) without a flush: the warm-up runs in the first step
// only (`first_step`), and each cool-down backward follows the forward of
// the next step's micro-batch that the warm-up would run (`next_step`,
// skipped in the last step). The schedule keeps two weight versions; the
// steady state, steps back to back, is 1F1B over all their micro-batches.
// With unit costs (F = B = W = 1) a step then takes m (F + B + W) = 24 and
// no rank idles, where a drained step (1f1b) takes (m + p - 1)(F + B + W) =
// 33, a bubble of (p - 1) / (m + p - 1) = 27.3%.

// CHECK: remark: pipedream-2bw steady state (steps back to back, no flush): 24 per step of 8 micro-batches, bubble 0.0%
// CHECK-LABEL: pp.schedule @train_step_schedule "pipedream-2bw" for @train_step microbatches 8 stage_rank [0, 1, 2, 3]
// CHECK-SAME: attributes {{.*}}weight_versions = 2 : i64
// CHECK-NEXT:  pp.rank 0 {
// CHECK-NEXT:    pp.compute forward stage 0 mb 0 first_step
// CHECK-NEXT:    pp.compute forward stage 0 mb 1 first_step
// CHECK-NEXT:    pp.compute forward stage 0 mb 2 first_step
// CHECK-NEXT:    pp.compute forward stage 0 mb 3
// CHECK-NEXT:    pp.compute backward stage 0 mb 0
// CHECK-NEXT:    pp.compute forward stage 0 mb 4
// CHECK-NEXT:    pp.compute backward stage 0 mb 1
// CHECK:         pp.compute forward stage 0 mb 7
// CHECK-NEXT:    pp.compute backward stage 0 mb 4
// CHECK-NEXT:    pp.compute forward stage 0 mb 0 next_step
// CHECK-NEXT:    pp.compute backward stage 0 mb 5
// CHECK-NEXT:    pp.compute forward stage 0 mb 1 next_step
// CHECK-NEXT:    pp.compute backward stage 0 mb 6
// CHECK-NEXT:    pp.compute forward stage 0 mb 2 next_step
// CHECK-NEXT:    pp.compute backward stage 0 mb 7
// CHECK-NEXT:  }
// CHECK:       pp.rank 3 {
// CHECK-NEXT:    pp.compute forward stage 3 mb 0
// CHECK-NEXT:    pp.compute backward stage 3 mb 0
// CHECK-NEXT:    pp.compute forward stage 3 mb 1
// CHECK-NOT:     _step
// CHECK:       }

// The transfers run in the steps of their computes; pp-simulate times one
// step as a run of one step runs it (the drained 1f1b step) and the steps
// back to back, whose difference is the steady state's 24 per step.
// DRAINED: remark: makespan 33, bubble 27.3%
// DRAINED: remark: no flush: 3 steps back to back take 81, 24 per step in the steady state
// TRANSFERS:      pp.compute forward stage 1 mb 0 first_step
// TRANSFERS-NEXT: pp.send activation stage 1 mb 0 to 2 first_step
// TRANSFERS:      pp.recv activation stage 1 mb 0 from 0 grouped next_step
// TRANSFERS-NEXT: pp.compute forward stage 1 mb 0 next_step
// TRANSFERS-NEXT: pp.send activation stage 1 mb 0 to 2 next_step

// m = p is the fewest micro-batches that two versions allow; still no
// bubble in the steady state (a drained step: 45, 46.7%).
// P8: remark: pipedream-2bw steady state (steps back to back, no flush): 24 per step of 8 micro-batches, bubble 0.0%

// A slower stage sets the pace: stage 1's F + B + W = 4 makes a step
// 8 x 4 = 32, and the others idle 8 of it: 1 - (24 + 32 + 24 + 24) / (4 x 32)
// = 18.75%.
// SLOW: remark: pipedream-2bw steady state (steps back to back, no flush): 32 per step of 8 micro-batches, bubble 18.8%

// Transfers of c = 0.5 each way: rank 0 has p micro-batches in flight, and
// one of them takes F + (p - 1)(F + B + W) + 2(p - 1)c + B + W = 15 from
// its forward to the end of its backward, so a micro-batch takes
// 15 / p = 3.75 instead of 3: a step of 8 takes 30, bubble 1 - 24/30 = 20%.
// COMM: remark: pipedream-2bw steady state (steps back to back, no flush): 30 per step of 8 micro-batches, bubble 20.0%

// The synchronous 1f1b keeps one version.
// SYNC-LABEL: pp.schedule @train_step_schedule "1f1b"
// SYNC-NOT: weight_versions
// SYNC: pp.rank 0 {
module {
}
