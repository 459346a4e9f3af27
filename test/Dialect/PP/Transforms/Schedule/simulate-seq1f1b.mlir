// Seq1F1B against its closed forms: per micro-batch F = B = W = 1 (fused
// backward 2), m micro-batches cut into k uniform slices, no transfer time.
// Makespan (m k + p - 1)(F + B + W) / k, the bubble of 1f1b divided by k;
// rank r holds at most p - r + k - 1 slices (activation-memory = k makes
// one slice one unit). 1f1b, for reference, (m + p - 1)(F + B + W) and p - r.
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4M8K1
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=4 num-microbatches=8 slices=2 activation-memory=2" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4M8K2
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=4 num-microbatches=8 slices=4 activation-memory=4" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4M8K4
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=8 num-microbatches=16 slices=4 activation-memory=4" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P8M16K4
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=2 num-microbatches=4 slices=2 activation-memory=2" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P2M4K2
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=2 num-microbatches=4 slices=4 activation-memory=4" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=P2M4K4
// The rendezvous program pp-insert-transfers orders by default, and the
// async one, both run in the closed form's time.
// RUN: pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=4 num-microbatches=8 slices=2 activation-memory=2 semantics=async" --pp-insert-transfers=semantics=async --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4M8K2

// (8 + 3) 3 = 33
// P4M8K1: remark: makespan 33, bubble 27.3% (idle per rank: 9, 9, 9, 9), peak activation memory per rank: 4, 3, 2, 1
// (16 + 3) 3 / 2 = 28.5
// P4M8K2: remark: makespan 28.5, bubble 15.8% (idle per rank: 4.5, 4.5, 4.5, 4.5), peak activation memory per rank: 5, 4, 3, 2
// (32 + 3) 3 / 4 = 26.25
// P4M8K4: remark: makespan 26.25, bubble 8.6% (idle per rank: 2.25, 2.25, 2.25, 2.25), peak activation memory per rank: 7, 6, 5, 4
// (64 + 7) 3 / 4 = 53.25
// P8M16K4: remark: makespan 53.25, bubble 9.9% (idle per rank: 5.25, 5.25, 5.25, 5.25, 5.25, 5.25, 5.25, 5.25), peak activation memory per rank: 11, 10, 9, 8, 7, 6, 5, 4
// (8 + 1) 3 / 2 = 13.5
// P2M4K2: remark: makespan 13.5, bubble 11.1% (idle per rank: 1.5, 1.5), peak activation memory per rank: 3, 2
// (16 + 1) 3 / 4 = 12.75
// P2M4K4: remark: makespan 12.75, bubble 5.9% (idle per rank: 0.75, 0.75), peak activation memory per rank: 5, 4
module {
}
