// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=2 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=4 num-microbatches=8 split-backward=true" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H2-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H2-P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=4 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H2-P4-M32
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H2-P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H2-P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H2-P8-M32

// Exact order for p = 2, m = 4. Rank r runs step x as F x, B x-2(p-1-r),
// W x-2(p-1), skipping micro-batches out of range: 2(p-1-r) warm-up
// forwards, so up to 2p - 1 forwards await their B on rank 0, and 2r
// deferred W's at the end. The backward is split without split-backward.
// LIST-LABEL: pp.schedule @train_step_schedule "zb-h2" for @train_step microbatches 4 stage_rank [0, 1] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute backward_input stage 0 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute backward_input stage 0 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 1
// LIST-NEXT:      pp.compute backward_input stage 0 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 2
// LIST-NEXT:      pp.compute backward_input stage 0 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 1 {
// LIST-NEXT:      pp.compute forward stage 1 mb 0
// LIST-NEXT:      pp.compute backward_input stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 1
// LIST-NEXT:      pp.compute backward_input stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute backward_input stage 1 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute backward_input stage 1 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 3
// LIST-NEXT:    }
// LIST-NEXT:  }

// Exact timing for p = 4, m = 8: a parallelogram, rank r busy from r to
// 3m + r without a gap.
// TIME: time   |0              5              10             15             20             25
// TIME-NEXT: rank 0 |F0 F1 F2 F3 F4 F5 F6 B0 W0 F7 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5 B6 W6 B7 W7 .  .  .  |
// TIME-NEXT: rank 1 |.  F0 F1 F2 F3 F4 B0 F5 B1 F6 B2 W0 F7 B3 W1 B4 W2 B5 W3 B6 W4 B7 W5 W6 W7 .  .  |
// TIME-NEXT: rank 2 |.  .  F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 W0 F7 B5 W1 B6 W2 B7 W3 W4 W5 W6 W7 .  |
// TIME-NEXT: rank 3 |.  .  .  F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 W0 F7 B7 W1 W2 W3 W4 W5 W6 W7 |
// TIME-NEXT: makespan 27, bubble: rank 0 11.1%, rank 1 11.1%, rank 2 11.1%, rank 3 11.1%

// Closed form: m(F+B+W) + (p-1)F = 3m + p - 1, and no idle cell between
// two actions of a row (an idle "." after a label and before another). Rank 0
// can only stay busy until its first B, 2p - 1 units after its first F, with
// m >= 2p - 1 forwards; p = 8, m = 8 keeps the makespan but not the shape.
// H2-P4-M8: time
// H2-P4-M8-NOT: {{[0-9] +(\. +)+[A-Z]}}
// H2-P4-M8: makespan 27,
// H2-P4-M16: time
// H2-P4-M16-NOT: {{[0-9] +(\. +)+[A-Z]}}
// H2-P4-M16: makespan 51,
// H2-P4-M32: time
// H2-P4-M32-NOT: {{[0-9] +(\. +)+[A-Z]}}
// H2-P4-M32: makespan 99,
// H2-P8-M8: makespan 31,
// H2-P8-M16: time
// H2-P8-M16-NOT: {{[0-9] +(\. +)+[A-Z]}}
// H2-P8-M16: makespan 55,
// H2-P8-M32: time
// H2-P8-M32-NOT: {{[0-9] +(\. +)+[A-Z]}}
// H2-P8-M32: makespan 103,

module {
}
