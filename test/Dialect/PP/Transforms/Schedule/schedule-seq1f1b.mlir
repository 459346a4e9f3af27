// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=3 num-microbatches=2 slices=2" | FileCheck %s
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=3 num-microbatches=2 slices=2" | pp-opt | FileCheck %s
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=2 num-microbatches=2 slices=2 forward-cost=2 backward-input-cost=3 backward-weight-cost=1 activation-memory=4 stash-memory=2 comm-cost=0.5" | FileCheck %s --check-prefix=COST
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=2 num-microbatches=2 slices=2" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=VERIFIED

// Seq1F1B, p = 3, m = 2, k = 2: slice j of micro-batch i is mb 2i + j.
// Stage s runs min(p - s - 2 + k, m k) = 3 - s warm-up slice forwards, the
// slices of a micro-batch forward in order and backward in reverse.
// CHECK-LABEL: pp.schedule @train_step_schedule "seq1f1b" for @train_step microbatches 4 stage_rank [0, 1, 2]
// CHECK-SAME: slices = 2
// CHECK: pp.rank 0 {
// CHECK-NEXT: pp.compute forward stage 0 mb 0
// CHECK-NEXT: pp.compute forward stage 0 mb 1
// CHECK-NEXT: pp.compute forward stage 0 mb 2
// CHECK-NEXT: pp.compute forward stage 0 mb 3
// CHECK-NEXT: pp.compute backward stage 0 mb 1
// CHECK-NEXT: pp.compute backward stage 0 mb 0
// CHECK-NEXT: pp.compute backward stage 0 mb 3
// CHECK-NEXT: pp.compute backward stage 0 mb 2
// CHECK-NEXT: }
// CHECK: pp.rank 1 {
// CHECK-NEXT: pp.compute forward stage 1 mb 0
// CHECK-NEXT: pp.compute forward stage 1 mb 1
// CHECK-NEXT: pp.compute forward stage 1 mb 2
// CHECK-NEXT: pp.compute backward stage 1 mb 1
// CHECK-NEXT: pp.compute forward stage 1 mb 3
// CHECK-NEXT: pp.compute backward stage 1 mb 0
// CHECK-NEXT: pp.compute backward stage 1 mb 3
// CHECK-NEXT: pp.compute backward stage 1 mb 2
// CHECK-NEXT: }
// CHECK: pp.rank 2 {
// CHECK-NEXT: pp.compute forward stage 2 mb 0
// CHECK-NEXT: pp.compute forward stage 2 mb 1
// CHECK-NEXT: pp.compute backward stage 2 mb 1
// CHECK-NEXT: pp.compute forward stage 2 mb 2
// CHECK-NEXT: pp.compute backward stage 2 mb 0
// CHECK-NEXT: pp.compute forward stage 2 mb 3
// CHECK-NEXT: pp.compute backward stage 2 mb 3
// CHECK-NEXT: pp.compute backward stage 2 mb 2
// CHECK-NEXT: }

// The costs describe a whole micro-batch; the schedule carries one slice's.
// COST: #pp.cost<forward = [1.000000e+00, 1.000000e+00], backward_input = [1.500000e+00, 1.500000e+00], backward_weight = [5.000000e-01, 5.000000e-01], comm = 2.500000e-01 : f64, activation = [2.000000e+00, 2.000000e+00], stash = [1.000000e+00, 1.000000e+00]>, slices = 2 : i64

// VERIFIED: pp.schedule @train_step_schedule "seq1f1b"
module {
}
