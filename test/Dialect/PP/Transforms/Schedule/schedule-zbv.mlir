// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=4 num-ranks=2 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=4 num-ranks=2 num-microbatches=4 split-backward=true" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=4 num-ranks=2 num-microbatches=4" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=8 num-ranks=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=8 num-ranks=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=8 num-ranks=4 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-M32
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=16 num-ranks=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=16 num-ranks=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=zbv num-stages=16 num-ranks=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P8-M32

// Exact order for p = 2 ranks (stages 0 and 3 on rank 0, 1 and 2 on rank 1),
// m = 4, with or without split-backward: the backward is always split. Rank r
// runs 2(p - r) - 1 chunk-0 forwards, r pairs of chunk-1 and chunk-0
// forwards, and p - r chunk-1 F B W; then F B W of chunk 0 and of chunk 1 in
// turn; then r pairs of B's with their W's deferred, p - r chunk-0 B W, and
// the deferred W's (PyTorch's ScheduleZBVZeroBubble).
// LIST-LABEL: pp.schedule @train_step_schedule "zbv" for @train_step microbatches 4 stage_rank [0, 1, 1, 0] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute forward stage 3 mb 0
// LIST-NEXT:      pp.compute backward_input stage 3 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 1
// LIST-NEXT:      pp.compute backward_input stage 3 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute backward_input stage 0 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 2
// LIST-NEXT:      pp.compute backward_input stage 3 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 2
// LIST-NEXT:      pp.compute backward_input stage 0 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 3
// LIST-NEXT:      pp.compute backward_input stage 3 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 3
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
// LIST-NEXT:      pp.compute backward_input stage 2 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute backward_input stage 1 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 2
// LIST-NEXT:      pp.compute backward_input stage 2 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute backward_input stage 1 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 3
// LIST-NEXT:      pp.compute backward_input stage 2 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 2
// LIST-NEXT:      pp.compute backward_input stage 1 mb 2
// LIST-NEXT:      pp.compute backward_input stage 2 mb 3
// LIST-NEXT:      pp.compute backward_input stage 1 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 3
// LIST-NEXT:    }
// LIST-NEXT:  }

// Unit costs: rank 1 idles only while the first activation arrives, rank 0
// only after its last W; 6m + p - 1 = 25.
// TIME: time   |0                        5                        10                       15                       20
// TIME-NEXT: rank 0 |F0.0 F0.1 F0.2 F3.0 B3.0 W3.0 F3.1 B3.1 W3.1 F0.3 B0.0 W0.0 F3.2 B3.2 W3.2 B0.1 W0.1 F3.3 B3.3 W3.3 B0.2 W0.2 B0.3 W0.3 .    |
// TIME-NEXT: rank 1 |.    F1.0 F2.0 F1.1 F2.1 B2.0 W2.0 F1.2 B1.0 W1.0 F2.2 B2.1 W2.1 F1.3 B1.1 W1.1 F2.3 B2.2 W2.2 B1.2 B2.3 B1.3 W1.2 W2.3 W1.3 |
// TIME-NEXT: makespan 25, bubble: rank 0 4.0%, rank 1 4.0%

// Makespan and peak activation memory per rank for p in {4, 8}, m in
// {8, 16, 32}, in chunk units (F = B = W = 1 per chunk of half a stage; one
// activation unit per micro-batch per chunk). The same model on p ranks with
// one whole stage each costs twice as much per action: zb-h1's makespan
// 3m + p - 1 is 2(3m + p - 1) chunk units, and 1f1b's peak of p stages on
// rank 0 is 2p.
//
//   p   m | zbv makespan  zb-h1 x2  1f1b x2 | zbv peak  1f1b peak x2
//   4   8 |     51           54       66    |    8          8
//   4  16 |     99          102      114    |    8          8
//   4  32 |    195          198      210    |    8          8
//   8   8 |     62           62       90    |   16         16
//   8  16 |    103          110      138    |   16         16
//   8  32 |    199          206      234    |   16         16
//
// zbv's makespan <= zb-h1's and its peak <= 1f1b's in every row. Once
// m >= 2p - 1 every rank idles p - 1 units in all (rank p - 1's start-up):
// makespan 6m + p - 1. With p = 8, m = 8 < 2p - 1 the micro-batches the
// schedule was built for but that do not exist leave gaps: idle 2p - 2, as
// zb-h1's, and less memory towards rank 0.
// P4-M8: remark: makespan 51, bubble 5.9% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 8, 8, 8, 8
// P4-M16: remark: makespan 99, bubble 3.0% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 8, 8, 8, 8
// P4-M32: remark: makespan 195, bubble 1.5% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 8, 8, 8, 8
// P8-M8: remark: makespan 62, bubble 22.6% (idle per rank: 14, 14, 14, 14, 14, 14, 14, 14), peak activation memory per rank: 9, 10, 11, 12, 13, 14, 15, 16
// P8-M16: remark: makespan 103, bubble 6.8% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 16, 16, 16, 16, 16, 16, 16, 16
// P8-M32: remark: makespan 199, bubble 3.5% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 16, 16, 16, 16, 16, 16, 16, 16

module {
}
