// Counts past the limits of docs/Reliability.md are rejected with the limit:
// num-stages=9223372036854775807 ended in "LLVM ERROR: SmallVector unable to
// grow", num-stages=2147483648 ran out of memory.
// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=gpipe num-stages=9223372036854775807" -o /dev/null
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=2147483648" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=4 num-ranks=65537" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=4 num-microbatches=1048577" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MBS
// A generated schedule has at most 2^18 stage micro-batches (2^20 took
// 17 s of CPU and 1.5 GB); the largest runs within seconds.
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=1 num-microbatches=1048576" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRODUCT
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=65536 num-microbatches=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRODUCT2
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=1 num-microbatches=262144" | FileCheck %s --check-prefix=MAX

// STAGES: error: num-stages is 2147483648; at most 65536 stages are supported
// RANKS: error: num-ranks is 65537; at most 65536 ranks are supported
// MBS: error: num-microbatches is 1048577; at most 1048576 micro-batches are supported
// PRODUCT: error: 1 stages x 1048576 micro-batches is too large a schedule to generate: at most 262144 stage micro-batches are supported
// PRODUCT2: error: 65536 stages x 8 micro-batches is too large a schedule to generate: at most 262144 stage micro-batches are supported
// MAX: pp.compute backward stage 0 mb 262143

// expected-error @+1 {{num-stages is 9223372036854775807; at most 65536 stages are supported}}
module {
}
