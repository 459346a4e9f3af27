// RUN: pp-opt %s -verify-diagnostics --pp-schedule="num-stages=4 num-ranks=2"
// RUN: not pp-opt %s --pp-schedule="num-stages=4 num-ranks=3" 2>&1 | FileCheck %s

// CHECK: error: num-ranks must divide the 4 stages, got 3

// expected-error @+1 {{schedule '1f1b' runs one stage per rank, but there are 4 stages on 2 ranks}}
module {
}
