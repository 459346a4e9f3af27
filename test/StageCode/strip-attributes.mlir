// RUN: pp-opt %s --pp-strip-attributes | FileCheck %s

// pp attributes go, from functions and from ops inside them; others stay.
// CHECK-LABEL: llvm.func @f_s0_forward()
// CHECK-SAME: attributes {keep = 1 : i64}
// CHECK-NOT: pp.
// CHECK: llvm.return {other}
llvm.func @f_s0_forward() attributes {pp.stage = 0 : i64, pp.phase = "forward", keep = 1 : i64} {
  llvm.return {pp.slot = "x", other}
}

// CHECK: module attributes {test.mine = 2 : i64}
// CHECK-NOT: pp.
module attributes {pp.note = 1 : i64, test.mine = 2 : i64} {
}
