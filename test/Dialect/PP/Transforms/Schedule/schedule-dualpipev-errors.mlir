// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=dualpipev num-stages=8 num-ranks=4 num-microbatches=7"
// RUN: not pp-opt %s --pp-schedule="schedule=dualpipev num-stages=12 num-ranks=4 num-microbatches=8" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not pp-opt %s --pp-schedule="schedule=dualpipev num-stages=4 num-ranks=2" 2>&1 | FileCheck %s --check-prefix=DEFAULT

// Not a V: dualpipev runs stages r and 2p - 1 - r on rank r.
// SHAPE: error: dualpipev needs two stages per rank (8 stages on 4 ranks), got 12

// Without a micro-batch count there is one, fewer than the 2p the warm-up
// fills on rank 0.
// DEFAULT: error: dualpipev needs at least twice as many micro-batches as ranks (4 for 2 ranks), got 1

// expected-error @+1 {{dualpipev needs at least twice as many micro-batches as ranks (8 for 4 ranks), got 7}}
module {
}
