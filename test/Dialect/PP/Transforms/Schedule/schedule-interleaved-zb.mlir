// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=4 num-ranks=2 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=4 num-ranks=2 num-microbatches=4 split-backward=true" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=4 num-ranks=2 num-microbatches=4" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=8 num-ranks=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V2-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=8 num-ranks=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V2-P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=16 num-ranks=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V2-P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=16 num-ranks=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V2-P8-M32
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=12 num-ranks=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V3-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=24 num-ranks=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V3-P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=8 num-ranks=4 num-microbatches=10" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROUNDS
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=8 num-ranks=4 num-microbatches=2" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEW
// With one stage per rank it is ZB-H1.
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=4 num-microbatches=8" | FileCheck %s --check-prefix=ONE
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=4 num-microbatches=8" | grep pp.compute > %t.izb
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=8" | grep pp.compute | diff %t.izb -

// Exact order for p = 2 ranks, v = 2 stages per rank (stage s on rank s mod
// 2), m = 4, with or without split-backward: the backward is always split.
// The micro-batches run in rounds of m / max(1, m / p) = 2, each chunk
// taking a round before the next. Rank r runs (v - 1) * 2 + p - 1 - r
// warm-up forwards, then forward, B and (from its (r + 1)-th B on) the W of
// the B r steps back; B's and W's visit the chunks in reverse; the r
// deferred W's end the rank (PyTorch's ScheduleInterleavedZeroBubble,
// test/Target/pytorch-interleaved-zb-order.test).
// LIST-LABEL: pp.schedule @train_step_schedule "interleaved-zb" for @train_step microbatches 4 stage_rank [0, 1, 0, 1] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 1
// LIST-NEXT:      pp.compute backward_input stage 2 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute backward_input stage 2 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute backward_input stage 0 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 2
// LIST-NEXT:      pp.compute backward_input stage 0 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 3
// LIST-NEXT:      pp.compute backward_input stage 2 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 2
// LIST-NEXT:      pp.compute backward_input stage 2 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 2 mb 3
// LIST-NEXT:      pp.compute backward_input stage 0 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 2
// LIST-NEXT:      pp.compute backward_input stage 0 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 0 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 1 {
// LIST-NEXT:      pp.compute forward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 0
// LIST-NEXT:      pp.compute backward_input stage 3 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 1
// LIST-NEXT:      pp.compute backward_input stage 3 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute backward_input stage 1 mb 0
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute backward_input stage 1 mb 1
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 3 mb 2
// LIST-NEXT:      pp.compute backward_input stage 3 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 3 mb 3
// LIST-NEXT:      pp.compute backward_input stage 3 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 2
// LIST-NEXT:      pp.compute backward_input stage 1 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 3 mb 3
// LIST-NEXT:      pp.compute backward_input stage 1 mb 3
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 2
// LIST-NEXT:      pp.compute backward_weight stage 1 mb 3
// LIST-NEXT:    }
// LIST-NEXT:  }
// LIST-NEXT:  }

// Unit costs: rank 0 idles once before its first B, rank 1 once at the
// start; 6m + p - 1 = 25 like zbv, interleaved 1F1B's 27 less the B's of
// its bubble.
// TIME: time   |0                        5                        10                       15                       20
// TIME-NEXT: rank 0 |F0.0 F0.1 F2.0 F2.1 .    B2.0 W2.0 F0.2 B2.1 W2.1 F0.3 B0.0 W0.0 F2.2 B0.1 W0.1 F2.3 B2.2 W2.2 B2.3 W2.3 B0.2 W0.2 B0.3 W0.3 |
// TIME-NEXT: rank 1 |.    F1.0 F1.1 F3.0 B3.0 F3.1 B3.1 W3.0 F1.2 B1.0 W3.1 F1.3 B1.1 W1.0 F3.2 B3.2 W1.1 F3.3 B3.3 W3.2 B1.2 W3.3 B1.3 W1.2 W1.3 |
// TIME-NEXT: makespan 25, bubble: rank 0 4.0%, rank 1 4.0%

// Makespan and peak activation memory, in chunk units (F = B = W = 1 per
// chunk, one activation unit per micro-batch per chunk). With m >= p every
// rank idles only the p - 1 units of start-up: 3mv + p - 1, zbv's makespan
// for v = 2 (interleaved-1f1b: 3mv + 3(p - 1)). Rank r holds at most its
// warm-up plus one, (v - 1)m / rounds + p - r: zbv's 2p on rank 0 for
// v = 2 and m a multiple of p, less on the later ranks.
// V2-P4-M8: remark: makespan 51, bubble 5.9% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 8, 7, 6, 5
// V2-P4-M16: remark: makespan 99, bubble 3.0% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 8, 7, 6, 5
// V2-P8-M8: remark: makespan 55, bubble 12.7% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 16, 15, 14, 13, 12, 11, 10, 9
// V2-P8-M32: remark: makespan 199, bubble 3.5% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 16, 15, 14, 13, 12, 11, 10, 9
// V3-P4-M8: remark: makespan 75, bubble 4.0% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 12, 11, 10, 9
// V3-P8-M16: remark: makespan 151, bubble 4.6% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 24, 23, 22, 21, 20, 19, 18, 17

// m need not be a multiple of p: 10 micro-batches on 4 ranks run in
// 2 rounds of 5 (peak 5 + 4 - r), 3mv + p - 1 = 63.
// ROUNDS: remark: makespan 63, bubble 4.8% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 9, 8, 7, 6

// m < p: one round of all m; the ranks wait for the pipeline to fill.
// FEW: remark: makespan 19, bubble 36.8% (idle per rank: 7, 7, 7, 7), peak activation memory per rank: 4, 4, 4, 3

// ONE: pp.schedule @train_step_schedule "interleaved-zb" for @train_step microbatches 8 stage_rank [0, 1, 2, 3] {

module {
}
