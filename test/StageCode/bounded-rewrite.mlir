// Pattern sets that undo their own rewrites end in an error naming the pass
// and the set, within the rewrite bound, instead of looping (the
// vectorizers apply their sets this way); sets that converge are applied.
// RUN: pp-opt %s --verify-diagnostics --pp-test-bounded-rewrite=mode=commute
// RUN: pp-opt %s --pp-test-bounded-rewrite=mode=constants-right | FileCheck %s
// RUN: not pp-opt %s --pp-test-bounded-rewrite=mode=sideways 2>&1 | FileCheck %s --check-prefix=MODE

// CHECK-LABEL: func.func @add_one
// CHECK: arith.addi %{{.*}}, %c1_i32 : i32
// MODE: error: unknown mode 'sideways'; expected commute or constants-right

// expected-error @below {{pp-test-bounded-rewrite: swapping addition operands did not converge}}
func.func @add_one(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %c1, %x : i32
  return %0 : i32
}
