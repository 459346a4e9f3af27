// RUN: pp-opt %s -split-input-file --convert-gemm-to-runtime=precision=bf16 --cse | FileCheck %s

// A and B are rounded into row-major bf16 copies (B, a transposed view, is
// copied as the matrix it shows, so trans_b becomes 0 and ldb n); the call
// reads them as bf16 (ab_type 2) into the f32 C (c_type 0), with bf16
// element offsets, and frees them after.
// CHECK-LABEL: func.func @bf16_inputs
// CHECK-SAME: (%[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<16x32xf32>, %[[C:.*]]: memref<64x16xf32>)
// CHECK: %[[BT:.*]] = memref.transpose %[[B]]
// CHECK: %[[A16:.*]] = memref.alloc() : memref<64x32xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[A]] : memref<64x32xf32>) outs(%[[A16]] : memref<64x32xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[B16:.*]] = memref.alloc() : memref<32x16xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[BT]] : memref<32x16xf32, strided<[1, 32]>>) outs(%[[B16]] : memref<32x16xbf16>)
// CHECK: memref.extract_aligned_pointer_as_index %[[A16]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B16]]
// CHECK: memref.extract_aligned_pointer_as_index %[[C]]
// Types bf16, f32; trans_a 0, trans_b 0; batch 1, m 64, n 16, k 32; lda 32,
// ldb 16, ldc 16.
// CHECK: call @pprt_gemm(%c2_i32, %c0_i32, %c0_i32, %c0_i32, %c1_i64, %c64_i64, %c16_i64, %c32_i64, %{{.*}}, %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %{{.*}}, %c16_i64, %c0_i64)
// CHECK: memref.dealloc %[[A16]]
// CHECK: memref.dealloc %[[B16]]
// CHECK-NOT: linalg.matmul
func.func @bf16_inputs(%a: memref<64x32xf32>, %b: memref<16x32xf32>,
                       %c: memref<64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %bt = memref.transpose %b (i, j) -> (j, i)
      : memref<16x32xf32> to memref<32x16xf32, strided<[1, 32]>>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x16xf32>)
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %bt : memref<64x32xf32>, memref<32x16xf32, strided<[1, 32]>>)
      outs(%c : memref<64x16xf32>)
  return
}

// -----

// A subview's offset is the copy's business: the call reads the copy from
// its start, with bf16 (2-byte) steps per batch loop iteration.
// CHECK-LABEL: func.func @offset_view
// CHECK: %[[V:.*]] = memref.subview
// CHECK: %[[V16:.*]] = memref.alloc() : memref<8x4xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[V]] : {{.*}}) outs(%[[V16]] : memref<8x4xbf16>)
// CHECK: call @pprt_gemm(%c2_i32, %c0_i32
func.func @offset_view(%a: memref<16x4xf32>, %b: memref<4x4xf32>,
                       %c: memref<8x4xf32>) {
  %v = memref.subview %a[8, 0] [8, 4] [1, 1]
      : memref<16x4xf32> to memref<8x4xf32, strided<[4, 1], offset: 32>>
  linalg.matmul {pp.gemm = "library"}
      ins(%v, %b : memref<8x4xf32, strided<[4, 1], offset: 32>>, memref<4x4xf32>)
      outs(%c : memref<8x4xf32>)
  return
}
