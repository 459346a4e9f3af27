// RUN: not pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=4 num-microbatches=8" 2>&1 | FileCheck %s --check-prefix=UNSLICED
// RUN: not pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=8 num-ranks=4 num-microbatches=8 slices=2" 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=4 num-microbatches=4 slices=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2 slices=2" 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not pp-opt %s --pp-schedule="schedule=seq1f1b num-stages=4 num-microbatches=4 slices=2 memory-cap=2" 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: not pp-opt %s --pp-schedule="schedule=auto num-stages=4 num-microbatches=4 slices=2" 2>&1 | FileCheck %s --check-prefix=AUTO

// UNSLICED: error: schedule 'seq1f1b' slices the sequence: it needs at least 2 slices per micro-batch (with one slice it is 1f1b)
// RANKS: error: schedule 'seq1f1b' runs one stage per rank, but there are 8 stages on 4 ranks
// ZERO: error: slices must be at least 1 and at most 1048576 with the micro-batches, got 0

// 1F1B over the slices runs slice 0's backward before slice 1's.
// ORDER: error: schedule '1f1b' generated an invalid schedule: backward of stage 0 mb 0 (micro-batch 0 slice 0) runs before the backward of stage 0 mb 1 (micro-batch 0 slice 1), which yields its keys' and values' gradients

// The searches order whole micro-batches.
// AUTO: error: schedule 'auto' does not order sequence slices; with slices = 2 use seq1f1b

// Rank 0 holds p + k - 1 = 5 slices of half a micro-batch's activation.
// CAP: error: schedule 'seq1f1b' holds 2.5 units of activation memory on rank 0, over its memory cap of 2
module {
}
