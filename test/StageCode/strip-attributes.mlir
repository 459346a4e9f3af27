// RUN: pp-opt %s --pp-strip-attributes | FileCheck %s

// pp attributes go, from functions and from ops inside them; others stay.
// CHECK-LABEL: llvm.func @f_s0_forward()
// CHECK-SAME: attributes {keep = 1 : i64}
// CHECK-NOT: pp.
// CHECK: llvm.return {other}
llvm.func @f_s0_forward() attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>, pp.recompute, keep = 1 : i64} {
  llvm.return {other}
}

// CHECK-LABEL: func.func @gemm
// CHECK: linalg.matmul {other}
// CHECK-NOT: pp.
func.func @gemm(%a: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul {pp.gemm = "library", other}
      ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>)
      outs(%c : memref<4x4xf32>)
  return
}
