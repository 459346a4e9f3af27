// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=hanayo num-stages=12 num-ranks=4"
// RUN: not pp-opt %s --pp-schedule="schedule=hanayo num-stages=8 num-microbatches=4" 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not pp-opt %s --pp-schedule="schedule=hanayo num-stages=4 num-ranks=2 num-microbatches=4 memory-cap=1" 2>&1 | FileCheck %s --check-prefix=CAP

// W waves need 2W stages per rank: 12 stages on 4 ranks is 3.
// expected-error @+1 {{hanayo needs 2W stages per rank for W waves (num-stages a multiple of 2 * num-ranks = 8), got 12 stages on 4 ranks}}
module {
}

// Without num-ranks every rank runs one stage, and there is no wave.
// ONE: error: hanayo needs 2W stages per rank for W waves (num-stages a multiple of 2 * num-ranks = 16), got 8 stages on 8 ranks

// A micro-batch enters a rank only with room for all its chunks there.
// CAP: error: hanayo needs room on every rank for one micro-batch's activations of its 2 stages (2), above rank 0's memory cap of 1
