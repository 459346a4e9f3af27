// RUN: not pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=4 num-microbatches=3" 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: not pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=8 num-ranks=4 num-microbatches=8" 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=4 num-microbatches=4 memory-cap=3" 2>&1 | FileCheck %s --check-prefix=CAP

// PipeDream-2BW asks for m >= p: back to back, step t + 1's first forward
// reads W(t), which needs step t - 1's last backward.
// FEW: error: pipedream-2bw needs at least one micro-batch per stage (got 3 for 4 stages), so that each step's new weight version is made before the next step's forwards read it

// RANKS: error: schedule 'pipedream-2bw' runs one stage per rank, but there are 8 stages on 4 ranks

// Rank 0 holds p = 4 activations, as in 1f1b.
// CAP: error: schedule 'pipedream-2bw' holds 4 units of activation memory on rank 0, over its memory cap of 3
module {
}
