// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=8 split-backward=true" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H1-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H1-P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H1-P4-M32
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H1-P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H1-P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=H1-P8-M32

// Exact order for p = 4, m = 4. Rank r runs step x as F x, B x-(p-1-r),
// W x-(p-1), skipping micro-batches out of range: 1f1b's p-1-r warm-up
// forwards (so at most p - r forwards await their B), then r B's whose W
// is deferred, and those r W's last. The backward is split without
// split-backward.
// LIST-LABEL: pp.schedule @train_step_schedule "zb-h1" for @train_step microbatches 4 stage_rank [0, 1, 2, 3] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute backward_input stage 0 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 0
// LIST-NEXT:      pp.compute backward_input stage 0 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 1
// LIST-NEXT:      pp.compute backward_input stage 0 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 2
// LIST-NEXT:      pp.compute backward_input stage 0 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 1 {
// LIST-NEXT:      pp.compute forward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute backward_input stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute backward_input stage 1 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 0
// LIST-NEXT:      pp.compute backward_input stage 1 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 1
// LIST-NEXT:      pp.compute backward_input stage 1 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 2 {
// LIST-NEXT:      pp.compute forward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 1
// LIST-NEXT:      pp.compute backward_input stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 2
// LIST-NEXT:      pp.compute backward_input stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 3
// LIST-NEXT:      pp.compute backward_input stage 2 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 0
// LIST-NEXT:      pp.compute backward_input stage 2 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 3 {
// LIST-NEXT:      pp.compute forward stage 3 mb 0
// LIST-NEXT:      pp.compute backward_input stage 3 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 1
// LIST-NEXT:      pp.compute backward_input stage 3 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 2
// LIST-NEXT:      pp.compute backward_input stage 3 mb 2
// LIST-NEXT:      pp.compute forward stage 3 mb 3
// LIST-NEXT:      pp.compute backward_input stage 3 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 3
// LIST-NEXT:    }
// LIST-NEXT:  }

// Exact timing for p = 4, m = 8, with or without split-backward: each rank
// idles only while the first gradient travels, p - 1 units in all; the W's
// fill 1f1b's cool-down bubbles.
// TIME: time   |0              5              10             15             20             25
// TIME-NEXT: rank 0 |F0 F1 F2 F3 .  .  .  B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7 |
// TIME-NEXT: rank 1 |.  F0 F1 F2 .  .  B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7 |
// TIME-NEXT: rank 2 |.  .  F0 F1 .  B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7 |
// TIME-NEXT: rank 3 |.  .  .  F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7 |
// TIME-NEXT: makespan 27, bubble: rank 0 11.1%, rank 1 11.1%, rank 2 11.1%, rank 3 11.1%

// Closed form: m(F+B+W) + (p-1)(F+B-W) = 3m + p - 1.
// H1-P4-M8: makespan 27,
// H1-P4-M16: makespan 51,
// H1-P4-M32: makespan 99,
// H1-P8-M8: makespan 31,
// H1-P8-M16: makespan 55,
// H1-P8-M32: makespan 103,

module {
}
