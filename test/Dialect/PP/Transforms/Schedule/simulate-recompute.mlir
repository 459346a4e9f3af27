// 1f1b on 4 ranks with 8 micro-batches, unit F, B and W, with and without
// every stage recomputing (its inputs: a quarter of its activations).
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8 recompute=0,1,2,3 input-memory=0.25" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=RECOMPUTE
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8 memory-cap=2" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=PLAIN-CAP
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8 memory-cap=2 recompute=0,1,2,3 input-memory=0.25" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=RECOMPUTE-CAP
// RUN: not pp-opt %s --pp-schedule="num-stages=4 recompute=4" 2>&1 | FileCheck %s --check-prefix=RANGE

// (m + p - 1)(F + B + W) = 11 x 3; rank r holds p - r micro-batches.
// PLAIN: remark: makespan 33, bubble 27.3% (idle per rank: 9, 9, 9, 9), peak activation memory per rank: 4, 3, 2, 1

// Each backward runs its forward again: 11 x (F + (B + F) + W) = 44, at a
// quarter of the memory.
// RECOMPUTE: remark: makespan 44, bubble 27.3% (idle per rank: 12, 12, 12, 12), peak activation memory per rank: 1, 0.75, 0.5, 0.25
// RECOMPUTE: cost = #pp.cost<forward = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], backward_input = [2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00], backward_weight = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], comm = 0.000000e+00 : f64, activation = [2.500000e-01, 2.500000e-01, 2.500000e-01, 2.500000e-01], stash = [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]>

// Under a cap of 2, 1f1b without recomputation runs at most 2 micro-batches
// in flight and waits for gradients; recomputing fits the whole warm-up.
// PLAIN-CAP: remark: makespan 69, bubble 65.2% (idle per rank: 45, 45, 45, 45), peak activation memory per rank: 2, 2, 2, 1
// RECOMPUTE-CAP: remark: makespan 44, bubble 27.3% (idle per rank: 12, 12, 12, 12), peak activation memory per rank: 1, 0.75, 0.5, 0.25

// RANGE: error: recompute names stage 4, but there are 4 stages
module {
}
