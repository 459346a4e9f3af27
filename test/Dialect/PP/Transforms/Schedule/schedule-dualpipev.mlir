// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=4 num-ranks=2 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=4 num-ranks=2 num-microbatches=4 split-backward=true" | FileCheck %s --check-prefix=SPLIT
// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=4 num-ranks=2 num-microbatches=4" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=8 num-ranks=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=8 num-ranks=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=8 num-ranks=4 num-microbatches=16 split-backward=true" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=8 num-ranks=4 num-microbatches=9" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-M9
// RUN: pp-opt %s --pp-schedule="schedule=dualpipev num-stages=16 num-ranks=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P8-M16

// Exact order for p = 2 ranks (stages 0 and 3 on rank 0, 1 and 2 on rank 1),
// m = 4, in DeepSeek's eight phases. Rank r runs 2(p - r - 1) chunk-0
// forwards (rank 0: F0.0 F0.1), r + 1 chunk-0 and chunk-1 forward pairs,
// p - r - 1 chunk-1 B W F (rank 0: B3.0 W3.0 F3.1); then m - 2p + r + 1
// steady-state steps F0 BW1 F1 BW0, each forward next to the backward of the
// other chunk (rank 0: F0.3 BW3.1 F3.2 BW0.0); then p - r - 1 steps BW1 F1
// BW0 (rank 0: BW3.2 F3.3 BW0.1), r + 1 pairs BW1 BW0 whose second half
// defers its W's, p - r - 1 W B0 with the B's W deferred, and the deferred
// W's, oldest first.
// LIST-LABEL: pp.schedule @train_step_schedule "dualpipev" for @train_step microbatches 4 stage_rank [0, 1, 1, 0] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute forward stage 3 mb 0
// LIST-NEXT:      pp.compute backward_input stage 3 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute backward stage 3 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 2
// LIST-NEXT:      pp.compute backward stage 0 mb 0
// LIST-NEXT:      pp.compute backward stage 3 mb 2
// LIST-NEXT:      pp.compute forward stage 3 mb 3
// LIST-NEXT:      pp.compute backward stage 0 mb 1
// LIST-NEXT:      pp.compute backward stage 3 mb 3
// LIST-NEXT:      pp.compute backward_input stage 0 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 2
// LIST-NEXT:      pp.compute backward_input stage 0 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 1 {
// LIST-NEXT:      pp.compute forward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute backward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 2
// LIST-NEXT:      pp.compute backward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute backward stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 3
// LIST-NEXT:      pp.compute backward stage 1 mb 1
// LIST-NEXT:      pp.compute backward stage 2 mb 2
// LIST-NEXT:      pp.compute backward stage 1 mb 2
// LIST-NEXT:      pp.compute backward_input stage 2 mb 3
// LIST-NEXT:      pp.compute backward_input stage 1 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 3
// LIST-NEXT:    }
// LIST-NEXT:  }

// With split-backward the whole backwards become B then W in place; the
// deferred W's stay where they were.
// SPLIT:      pp.rank 0 {
// SPLIT:        pp.compute forward stage 0 mb 3
// SPLIT-NEXT:   pp.compute backward_input stage 3 mb 1
// SPLIT-NEXT:   pp.compute backward_weight stage 3 mb 1
// SPLIT-NEXT:   pp.compute forward stage 3 mb 2
// SPLIT:      pp.rank 1 {
// SPLIT:        pp.compute backward_input stage 1 mb 2
// SPLIT-NEXT:   pp.compute backward_weight stage 1 mb 2
// SPLIT-NEXT:   pp.compute backward_input stage 2 mb 3
// SPLIT-NEXT:   pp.compute backward_input stage 1 mb 3
// SPLIT-NEXT:   pp.compute backward_weight stage 2 mb 3
// SPLIT-NEXT:   pp.compute backward_weight stage 1 mb 3
// SPLIT-NOT:    pp.compute backward stage

// Unit costs (BW takes 2): each rank idles p - 1 = 1 unit in all,
// 6m + p - 1 = 25.
// TIME: time   |0                        5                        10                       15                       20
// TIME-NEXT: rank 0 |F0.0 F0.1 F0.2 F3.0 B3.0 W3.0 F3.1 F0.3 BW3.1     F3.2 BW0.0     BW3.2     F3.3 .    BW0.1     BW3.3     B0.2 W0.2 B0.3 W0.3 |
// TIME-NEXT: rank 1 |.    F1.0 F2.0 F1.1 F2.1 F1.2 BW2.0     F2.2 BW1.0     F1.3 BW2.1     F2.3 BW1.1     BW2.2     BW1.2     B2.3 B1.3 W2.3 W1.3 |
// TIME-NEXT: makespan 25, bubble: rank 0 4.0%, rank 1 4.0%

// Makespan and peak activation memory per rank, in chunk units (F = B = W = 1
// per chunk of half a stage, one activation unit per micro-batch per chunk).
// Like zbv, every rank idles only p - 1 units in all: makespan 6m + p - 1,
// with or without split-backward. Its peak is 2p + 1 chunks on every rank,
// one more than zbv's and 1F1B's 2p: the price of running a chunk's forward
// next to the other chunk's backward.
//
//   p   m | dualpipev makespan  zbv   | dualpipev peak  zbv peak
//   4   8 |        51            51   |       9            8
//   4   9 |        57            -    |       9            -
//   4  16 |        99            99   |       9            8
//   8  16 |       103           103   |      17           16
// P4-M8: remark: makespan 51, bubble 5.9% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 9, 9, 9, 9
// P4-M16: remark: makespan 99, bubble 3.0% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 9, 9, 9, 9
// P4-M9: remark: makespan 57, bubble 5.3% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 9, 9, 9, 9
// P8-M16: remark: makespan 103, bubble 6.8% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 17, 17, 17, 17, 17, 17, 17, 17

module {
}
