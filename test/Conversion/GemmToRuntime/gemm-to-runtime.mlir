// RUN: pp-opt %s -split-input-file --convert-gemm-to-runtime --cse | FileCheck %s

// A zero fill before the op becomes beta = 0 and is dropped; B is a
// transposed view (trans_b = 1, ldb 32); the call is declared once.
// CHECK-LABEL: func.func @zero_init
// CHECK-SAME: (%[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<16x32xf32>, %[[C:.*]]: memref<64x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[BT:.*]] = memref.transpose %[[B]]
// CHECK: memref.extract_strided_metadata %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[BT]]
// CHECK-DAG: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f32
// Types f32, f32; trans_a 0, trans_b 1; batch 1, m 64, n 16, k 32; lda 32,
// ldb 32, ldc 16; batch strides 0.
// CHECK: call @pprt_gemm(%c0_i32, %c0_i32, %c0_i32, %c1_i32, %c1_i64, %c64_i64, %c16_i64, %c32_i64, %[[ALPHA]], %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c32_i64, %c0_i64, %[[BETA]], %{{.*}}, %c16_i64, %c0_i64)
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @accumulate
// CHECK: linalg.fill
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @pprt_gemm(%c0_i32, %c0_i32, %c0_i32, %c0_i32, %c1_i64, %c64_i64, %c16_i64, %c32_i64, %[[ONE]], %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %c16_i64, %c0_i64, %[[ONE]], %{{.*}}, %c16_i64, %c0_i64)
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @pprt_gemm(i32, i32, i32, i32, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK-NOT: func.func private @pprt_gemm
func.func @zero_init(%a: memref<64x32xf32>, %b: memref<16x32xf32>,
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

// Accumulating into the init: beta = 1; the fill of another value stays.
func.func @accumulate(%a: memref<64x32xf32>, %b: memref<32x16xf32>,
                      %c: memref<64x16xf32>, %d: memref<64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<64x16xf32>)
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %b : memref<64x32xf32>, memref<32x16xf32>)
      outs(%c : memref<64x16xf32>)
  return
}

// -----

// A slice of the output (row stride 32, offset 8): the pointer adds the
// offset, ldc is 32.
// CHECK-LABEL: func.func @strided_output
// CHECK: %[[SUB:.*]] = memref.subview
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[SUB]]
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[SUB]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4
// CHECK: %[[ADDR:.*]] = arith.addi %[[PTR]], %[[BYTES]]
// CHECK: %[[INT:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: %[[CP:.*]] = llvm.inttoptr %[[INT]] : i64 to !llvm.ptr
// CHECK: call @pprt_gemm({{.*}}, %[[CP]], %c32_i64, %c0_i64)
func.func @strided_output(%a: memref<64x32xf32>, %b: memref<32x16xf32>,
                          %c: memref<64x32xf32>) {
  %sub = memref.subview %c[0, 8] [64, 16] [1, 1]
      : memref<64x32xf32> to memref<64x16xf32, strided<[32, 1], offset: 8>>
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %b : memref<64x32xf32>, memref<32x16xf32>)
      outs(%sub : memref<64x16xf32, strided<[32, 1], offset: 8>>)
  return
}

// -----

// Attention's output projection y[b, t, e] = sum_{h, k} a[b, h, t, k] w[k, h, e]
// after a zero fill: b is the batch, h a
// reduction loop whose first iteration has beta = 0 and the others beta = 1,
// the scale is alpha.
// CHECK-LABEL: func.func @heads_reduction
// CHECK-SAME: %[[SCALE:[^:]*]]: f32
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[H:.*]] = %c0 to %c2 step %c1
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[H]], %c0
// CHECK: %[[BETA:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// Batch 4, m 16 (t), n 32 (e), k 16 (k); lda 16, ldb 64, ldc 32; batch
// strides 512, 0, 512.
// CHECK: func.call @pprt_gemm(%c0_i32, %c0_i32, %c0_i32, %c0_i32, %c4_i64, %c16_i64, %c32_i64, %c16_i64, %[[SCALE]], %{{.*}}, %c16_i64, %c512_i64, %{{.*}}, %c64_i64, %c0_i64, %[[BETA]], %{{.*}}, %c32_i64, %c512_i64)
func.func @heads_reduction(%a: memref<4x2x16x16xf32>, %w: memref<16x2x32xf32>,
                           %y: memref<4x16x32xf32>, %scale: f32) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4x16x32xf32>)
  linalg.generic {
      indexing_maps = [affine_map<(b, t, e, h, k) -> (b, h, t, k)>,
                       affine_map<(b, t, e, h, k) -> (k, h, e)>,
                       affine_map<(b, t, e, h, k) -> (b, t, e)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %w : memref<4x2x16x16xf32>, memref<16x2x32xf32>)
      outs(%y : memref<4x16x32xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %ms = arith.mulf %m, %scale : f32
    %r = arith.addf %acc, %ms : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A column-major output: A and B swap, both transposed.
// CHECK-LABEL: func.func @column_major_output
// CHECK-SAME: (%[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<32x16xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// trans_a 1, trans_b 1, m 16, n 64, k 32; lda 16, ldb 32, ldc 64.
// CHECK: call @pprt_gemm(%c0_i32, %c0_i32, %c1_i32, %c1_i32, %c1_i64, %c16_i64, %c64_i64, %c32_i64, %{{.*}}, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c32_i64, %c0_i64, %{{.*}}, %{{.*}}, %c64_i64, %c0_i64)
func.func @column_major_output(%a: memref<64x32xf32>, %b: memref<32x16xf32>,
                               %c: memref<16x64xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (n, m)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x16xf32>)
      outs(%c : memref<16x64xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The head projection y[b, h, t, k] = sum_e x[b, t, e] w[e, h, k]: b is the
// batch (strides 256, 0, 256), h a parallel loop that advances w by 16 and y
// by 128 elements per iteration, with beta = 1 (no fill).
// CHECK-LABEL: func.func @heads_parallel
// CHECK: scf.for %[[H:.*]] = %c0 to %c2 step %c1
// CHECK-NOT: arith.select
// CHECK: %[[OFFB:.*]] = arith.muli %[[H]], %c16 : index
// CHECK: %[[OFFC:.*]] = arith.muli %[[H]], %c128 : index
// CHECK: %[[BYTESB:.*]] = arith.muli %[[OFFB]], %c4 : index
// CHECK: arith.addi %{{.*}}, %[[BYTESB]] : index
// CHECK: %[[BYTESC:.*]] = arith.muli %[[OFFC]], %c4 : index
// CHECK: arith.addi %{{.*}}, %[[BYTESC]] : index
// Batch 4, m 8, n 16, k 32; lda 32, ldb 32, ldc 16; batch strides 256, 0,
// 256.
// CHECK: func.call @pprt_gemm(%c0_i32, %c0_i32, %c0_i32, %c0_i32, %c4_i64, %c8_i64, %c16_i64, %c32_i64, %[[ONE:[^,]*]], %{{.*}}, %c32_i64, %c256_i64, %{{.*}}, %c32_i64, %c0_i64, %[[ONE]], %{{.*}}, %c16_i64, %c256_i64)
func.func @heads_parallel(%x: memref<4x8x32xf32>, %w: memref<32x2x16xf32>,
                          %y: memref<4x2x8x16xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(b, h, t, k, e) -> (b, t, e)>,
                       affine_map<(b, h, t, k, e) -> (e, h, k)>,
                       affine_map<(b, h, t, k, e) -> (b, h, t, k)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x8x32xf32>, memref<32x2x16xf32>)
      outs(%y : memref<4x2x8x16xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}
