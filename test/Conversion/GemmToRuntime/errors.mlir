// RUN: pp-opt %s -split-input-file -verify-diagnostics --convert-gemm-to-runtime | FileCheck %s

// Dynamic strides cannot be checked: the op stays, unmarked, with a remark.
// CHECK-LABEL: func.func @dynamic_strides
// CHECK: linalg.matmul ins
// CHECK-NOT: pprt_gemm
func.func @dynamic_strides(%a: memref<64x32xf32, strided<[?, 1]>>,
                           %b: memref<32x16xf32>, %c: memref<64x16xf32>) {
  // expected-remark @+1 {{pp.gemm = "library" kept as generated code: an operand has dynamic strides or shape}}
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %b : memref<64x32xf32, strided<[?, 1]>>, memref<32x16xf32>)
      outs(%c : memref<64x16xf32>)
  return
}

// -----

// No unit stride in the rows or columns of A.
func.func @no_unit_stride(%a: memref<64x32xf32, strided<[64, 2]>>,
                          %b: memref<32x16xf32>, %c: memref<64x16xf32>) {
  // expected-remark @+1 {{kept as generated code: an input has no unit stride in its rows or columns}}
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %b : memref<64x32xf32, strided<[64, 2]>>, memref<32x16xf32>)
      outs(%c : memref<64x16xf32>)
  return
}

// -----

// Still on tensors: not converted.
func.func @tensors(%a: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-remark @+1 {{kept as generated code: it is not bufferized}}
  %r = linalg.matmul {pp.gemm = "library"}
      ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>)
      outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A declaration of pprt_gemm with another type.
// expected-error @+1 {{'pprt_gemm' is declared with type}}
func.func private @pprt_gemm(i32)
func.func @wrong_declaration(%a: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>)
      outs(%c : memref<8x8xf32>)
  return
}
