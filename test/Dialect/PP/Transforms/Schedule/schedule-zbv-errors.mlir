// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=zbv num-stages=12 num-ranks=4"
// RUN: not pp-opt %s --pp-schedule="schedule=zbv num-stages=8 num-microbatches=4" 2>&1 | FileCheck %s

// Without num-ranks every rank runs one stage, and there is no V.
// CHECK: error: zbv needs two stages per rank (16 stages on 8 ranks), got 8

// expected-error @+1 {{zbv needs two stages per rank (8 stages on 4 ranks), got 12}}
module {
}
