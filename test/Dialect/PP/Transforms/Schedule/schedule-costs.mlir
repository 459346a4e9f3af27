// pp-schedule attaches the costs and memory cap its options describe, and
// pp-simulate uses them.
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=3 forward-cost=1,3 backward-input-cost=2 comm-cost=0.5 memory-cap=2" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s
// RUN: not pp-opt %s --pp-schedule="num-stages=2 forward-cost=1,2,3" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not pp-opt %s --pp-schedule="num-stages=2 activation-memory=1 stash-memory=2" 2>&1 | FileCheck %s --check-prefix=STASH
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 num-microbatches=3 memory-cap=2" --pp-insert-transfers --pp-verify-schedule 2>&1 | FileCheck %s --check-prefix=CAP

// Rank 1: F 3 and BW 2 + 1 per micro-batch, 18 busy; the gradients take
// 0.5 to reach rank 0, whose last BW starts at 20 and ends at 23.
// CHECK: remark: makespan 23, bubble 34.8% (idle per rank: 11, 5), peak activation memory per rank: 2, 1
// CHECK: pp.schedule @train_step_schedule "1f1b" {{.*}}attributes {cost = #pp.cost<forward = [1.000000e+00, 3.000000e+00], backward_input = [2.000000e+00, 2.000000e+00], backward_weight = [1.000000e+00, 1.000000e+00], comm = 5.000000e-01 : f64, activation = [1.000000e+00, 1.000000e+00], stash = [0.000000e+00, 0.000000e+00]>, memory_cap = 2.000000e+00 : f64

// COUNT: error: forward-cost has 3 values, expected 1 or one per stage (2)
// STASH: error: stage 0 stashes 2 for W but holds only 1
// CAP: error: schedule 'gpipe' holds 3 units of activation memory on rank 0, over its memory cap of 2; 1f1b, greedy and auto schedule within per-rank caps
module {
}
