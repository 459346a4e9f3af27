// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=4 num-ranks=2 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=4 num-ranks=2 num-microbatches=4" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=4" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=CAPPED
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=8 split-backward=true" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=SPLIT
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P4-M32
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=16 num-ranks=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=16 num-ranks=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=16 num-ranks=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=V2-P8-M32

// Exact order for p = 2 ranks, v = 2 stages per rank (stage s on rank s mod
// 2), m = 4: rank r runs 2(p-r-1) + (v-1)p warm-up forwards, chunk by chunk
// in groups of p micro-batches, then one forward and one backward, the
// backwards visiting the chunks in reverse.
// LIST-LABEL: pp.schedule @train_step_schedule "interleaved-1f1b" for @train_step microbatches 4 stage_rank [0, 1, 0, 1] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute backward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute backward stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 2
// LIST-NEXT:      pp.compute backward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 3
// LIST-NEXT:      pp.compute backward stage 0 mb 1
// LIST-NEXT:      pp.compute backward stage 2 mb 2
// LIST-NEXT:      pp.compute backward stage 2 mb 3
// LIST-NEXT:      pp.compute backward stage 0 mb 2
// LIST-NEXT:      pp.compute backward stage 0 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 1 {
// LIST-NEXT:      pp.compute forward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 0
// LIST-NEXT:      pp.compute backward stage 3 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 1
// LIST-NEXT:      pp.compute backward stage 3 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute backward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute backward stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 2
// LIST-NEXT:      pp.compute backward stage 3 mb 2
// LIST-NEXT:      pp.compute forward stage 3 mb 3
// LIST-NEXT:      pp.compute backward stage 3 mb 3
// LIST-NEXT:      pp.compute backward stage 1 mb 2
// LIST-NEXT:      pp.compute backward stage 1 mb 3
// LIST-NEXT:    }
// LIST-NEXT:  }

// Exact timing of the same schedule; F2.1 is forward of stage 2, mb 1.
// TIME: time   |0                        5                        10                       15                       20                       25
// TIME-NEXT: rank 0 |F0.0 F0.1 F2.0 F2.1 F0.2 .    BW2.0     F0.3 BW2.1     F2.2 BW0.0     F2.3 BW0.1     .    BW2.2     .    BW2.3     BW0.2     BW0.3     |
// TIME-NEXT: rank 1 |.    F1.0 F1.1 F3.0 BW3.0     F3.1 BW3.1     F1.2 BW1.0     F1.3 BW1.1     F3.2 BW3.2     F3.3 BW3.3     BW1.2     BW1.3     .    .    |
// TIME-NEXT: makespan 27, bubble: rank 0 11.1%, rank 1 11.1%

// m = p: the warm-up is capped at the m v forwards there are.
// CAPPED: makespan 33,

// Split backward: B then W, and only B is on the critical path, so the
// bubble is (p-1)(F+B) = 2(p-1): 3mv + 2(p-1) = 48 + 6.
// SPLIT: makespan 54,

// Closed form, v = 2 and every chunk's F, B, W costing 1 unit: ideal time
// 3mv plus Megatron's bubble (p-1)(F+B+W)/v of whole stages, which is
// (p-1)(F+B+W) = 3(p-1) units of chunks: 3mv + 3(p-1) = 6m + 3(p-1).
// V2-P4-M8: makespan 57,
// V2-P4-M16: makespan 105,
// V2-P4-M32: makespan 201,
// V2-P8-M8: makespan 69,
// V2-P8-M16: makespan 117,
// V2-P8-M32: makespan 213,

module {
}
