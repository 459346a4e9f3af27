// Idle time and peak activation memory of the built-in schedules against the
// closed forms of docs/ClosedForms.md, unit costs (F = B = W = 1, one unit of
// activation per micro-batch of a stage), m = 16 micro-batches.
//   gpipe: idle (p-1)(F+B+W), peak m on every rank
//   1f1b:  idle (p-1)(F+B+W), peak p - r on rank r
//   zb-h1: idle (p-1)(F+B-W), peak p - r (1f1b's)
//   zb-h2: idle (p-1)(F+B-W), peak 2(p - r) - 1 <= 2p - 1
//   interleaved-1f1b, v = 2 chunks of half a stage: idle (p-1)(F+B+W)/v and
//     peak p + (p-1)/v stages' worth on rank 0, here in chunk units (x v).
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPIPE
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF4
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=8 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF8
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBH1
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=8 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBH1P8
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBH2
// RUN: pp-opt %s --pp-schedule="schedule=zb-h2 num-stages=8 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBH2P8
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=16" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTER

// GPIPE: remark: makespan 57, bubble 15.8% (idle per rank: 9, 9, 9, 9), peak activation memory per rank: 16, 16, 16, 16
// ONEF4: remark: makespan 57, bubble 15.8% (idle per rank: 9, 9, 9, 9), peak activation memory per rank: 4, 3, 2, 1
// ONEF8: remark: makespan 69, bubble 30.4% (idle per rank: 21, 21, 21, 21, 21, 21, 21, 21), peak activation memory per rank: 8, 7, 6, 5, 4, 3, 2, 1
// ZBH1: remark: makespan 51, bubble 5.9% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 4, 3, 2, 1
// ZBH1P8: remark: makespan 55, bubble 12.7% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 8, 7, 6, 5, 4, 3, 2, 1
// ZBH2: remark: makespan 51, bubble 5.9% (idle per rank: 3, 3, 3, 3), peak activation memory per rank: 7, 5, 3, 1
// ZBH2P8: remark: makespan 55, bubble 12.7% (idle per rank: 7, 7, 7, 7, 7, 7, 7, 7), peak activation memory per rank: 15, 13, 11, 9, 7, 5, 3, 1
// INTER: remark: makespan 105, bubble 8.6% (idle per rank: 9, 9, 9, 9), peak activation memory per rank: 11, 9, 7, 5
module {
}
