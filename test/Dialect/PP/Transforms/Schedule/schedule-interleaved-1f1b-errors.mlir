// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=interleaved-1f1b num-stages=8 num-ranks=4 num-microbatches=6"
// RUN: not pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=4 num-microbatches=4" 2>&1 | FileCheck %s

// Without num-ranks every rank runs one stage, and there is nothing to
// interleave.
// CHECK: error: interleaved-1f1b needs at least 2 stages per rank, but there are 4 stages on 4 ranks

// expected-error @+1 {{interleaved-1f1b needs the micro-batch count (6) to be a multiple of the rank count (4)}}
module {
}
