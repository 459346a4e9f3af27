// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=interleaved-zb num-stages=8 num-ranks=4 num-microbatches=9"
// RUN: not pp-opt %s --pp-schedule="schedule=interleaved-zb num-stages=4 num-ranks=2 num-microbatches=5" 2>&1 | FileCheck %s

// PyTorch's rule: m runs in max(1, m / p) rounds of equal size. 5 on 2
// ranks would be 2 rounds of 2.5.
// CHECK: error: interleaved-zb needs the micro-batch count (5) to be a multiple of its 2 rounds (max(1, m / p) with p = 2 ranks), as PyTorch's ScheduleInterleavedZeroBubble does

// expected-error @+1 {{interleaved-zb needs the micro-batch count (9) to be a multiple of its 2 rounds (max(1, m / p) with p = 4 ranks), as PyTorch's ScheduleInterleavedZeroBubble does}}
module {
}
