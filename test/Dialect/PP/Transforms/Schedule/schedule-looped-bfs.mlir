// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=4 num-ranks=2 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=4 num-ranks=2 num-microbatches=4" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=ONE
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=8 num-ranks=4 num-microbatches=8 split-backward=true" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=SPLIT
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=8 num-ranks=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=8 num-ranks=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=8 num-ranks=4 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P4-M32
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=16 num-ranks=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=16 num-ranks=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=looped-bfs num-stages=16 num-ranks=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P8-M32

// Exact order for p = 2 ranks, v = 2 stages per rank (stage s on rank s mod
// 2), m = 4: all micro-batches through stage r, then through stage r + p;
// the backwards in exactly the reverse order.
// LIST-LABEL: pp.schedule @train_step_schedule "looped-bfs" for @train_step microbatches 4 stage_rank [0, 1, 0, 1] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute forward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 2
// LIST-NEXT:      pp.compute forward stage 2 mb 3
// LIST-NEXT:      pp.compute backward stage 2 mb 3
// LIST-NEXT:      pp.compute backward stage 2 mb 2
// LIST-NEXT:      pp.compute backward stage 2 mb 1
// LIST-NEXT:      pp.compute backward stage 2 mb 0
// LIST-NEXT:      pp.compute backward stage 0 mb 3
// LIST-NEXT:      pp.compute backward stage 0 mb 2
// LIST-NEXT:      pp.compute backward stage 0 mb 1
// LIST-NEXT:      pp.compute backward stage 0 mb 0
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 1 {
// LIST-NEXT:      pp.compute forward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute forward stage 3 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 2
// LIST-NEXT:      pp.compute forward stage 3 mb 3
// LIST-NEXT:      pp.compute backward stage 3 mb 3
// LIST-NEXT:      pp.compute backward stage 3 mb 2
// LIST-NEXT:      pp.compute backward stage 3 mb 1
// LIST-NEXT:      pp.compute backward stage 3 mb 0
// LIST-NEXT:      pp.compute backward stage 1 mb 3
// LIST-NEXT:      pp.compute backward stage 1 mb 2
// LIST-NEXT:      pp.compute backward stage 1 mb 1
// LIST-NEXT:      pp.compute backward stage 1 mb 0
// LIST-NEXT:    }
// LIST-NEXT:  }

// Exact timing of the same schedule.
// TIME: time   |0                        5                        10                       15                       20                       25
// TIME-NEXT: rank 0 |F0.0 F0.1 F0.2 F0.3 F2.0 F2.1 F2.2 F2.3 .    .    .    BW2.3     BW2.2     BW2.1     BW2.0     BW0.3     BW0.2     BW0.1     BW0.0     |
// TIME-NEXT: rank 1 |.    F1.0 F1.1 F1.2 F1.3 F3.0 F3.1 F3.2 F3.3 BW3.3     BW3.2     BW3.1     BW3.0     BW1.3     BW1.2     BW1.1     BW1.0     .    .    |
// TIME-NEXT: makespan 27, bubble: rank 0 11.1%, rank 1 11.1%

// One stage per rank: GPipe with the backwards reversed, 3(m + p - 1).
// ONE: makespan 33,

// Split backward: only B is on the critical path, 3mv + 2(p-1) = 48 + 6.
// SPLIT: makespan 54,

// Closed form, v = 2, m >= p and unit chunk costs: rank r starts after r
// units, its forwards run back to back (the chunk-0 results of every
// micro-batch are ready before the next chunk needs them), the first
// gradient returns 2(p-1-r) units after its last forward and the backwards
// run back to back: 3mv + 3(p-1) = 6m + 3(p-1), the same as interleaved-1f1b
// with zero-cost transfers but with all m v forwards in flight.
// V2-P4-M8: makespan 57,
// V2-P4-M16: makespan 105,
// V2-P4-M32: makespan 201,
// V2-P8-M8: makespan 69,
// V2-P8-M16: makespan 117,
// V2-P8-M32: makespan 213,

module {
}
