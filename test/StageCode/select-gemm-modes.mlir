// RUN: pp-opt %s --pp-select-gemm="gemm=generated" | FileCheck %s --check-prefix=GEN
// RUN: pp-opt %s --pp-select-gemm="gemm=auto min-library-flops=50000 max-library-calls=1 vectorize-contractions=false" | FileCheck %s --check-prefix=AUTO
// RUN: pp-opt %s --pp-select-gemm="gemm=auto min-library-flops=1000 max-library-calls=2 vectorize-contractions=false" | FileCheck %s --check-prefix=AUTO-LOOPS
// RUN: pp-opt %s --pp-select-gemm="gemm=auto" | FileCheck %s --check-prefix=AUTO-VEC
// A negative threshold was taken as 0 (or as no call at all).
// RUN: not pp-opt %s --pp-select-gemm="gemm=auto max-library-calls=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: pp-select-gemm: max-library-calls must not be negative, got -1

// GEN-NOT: pp.gemm

// AUTO-LABEL: func @modes
// AUTO-LOOPS-LABEL: func @modes
// AUTO-VEC-LABEL: func @modes
func.func @modes(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>,
                 %c: tensor<64x16xf32>, %s: tensor<8x4xf32>,
                 %t: tensor<4x4xf32>, %u: tensor<8x4xf32>,
                 %x: tensor<4x8x32xf32>, %w: tensor<32x2x16xf32>,
                 %h: tensor<4x2x8x16xf32>, %v: tensor<32x1xf32>,
                 %cv: tensor<64x1xf32>)
    -> (tensor<64x16xf32>, tensor<8x4xf32>, tensor<4x2x8x16xf32>,
        tensor<64x1xf32>) {
  // 65536 flops in one call: the library with both rules.
  // AUTO: linalg.matmul {pp.gemm = "library"} ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>
  // AUTO-LOOPS: linalg.matmul {pp.gemm = "library"} ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>
  // With pp-vectorize-contractions to come (the default), only what it
  // leaves scalar goes to the library: the one-column output below.
  // AUTO-VEC-NOT: pp.gemm
  // AUTO-VEC: linalg.matmul {pp.gemm = "library"} ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x1xf32>)
  // AUTO-VEC-NOT: pp.gemm
  %big = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>)
                       outs(%c : tensor<64x16xf32>) -> tensor<64x16xf32>
  // 256 flops: generated with both.
  // AUTO: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>
  // AUTO-LOOPS: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>
  %small = linalg.matmul ins(%s, %t : tensor<8x4xf32>, tensor<4x4xf32>)
                         outs(%u : tensor<8x4xf32>) -> tensor<8x4xf32>
  // 2 calls of 32768 flops: generated unless 2 calls are allowed.
  // AUTO: linalg.generic
  // AUTO-NOT: pp.gemm
  // AUTO-LOOPS: linalg.generic {{.*}}pp.gemm = "library"
  %heads = linalg.generic {
      indexing_maps = [affine_map<(b, h, t, k, e) -> (b, t, e)>,
                       affine_map<(b, h, t, k, e) -> (e, h, k)>,
                       affine_map<(b, h, t, k, e) -> (b, h, t, k)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8x32xf32>, tensor<32x2x16xf32>)
      outs(%h : tensor<4x2x8x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x2x8x16xf32>
  // A matrix-vector product: one call of 4096 flops.
  // AUTO: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x1xf32>)
  // AUTO-LOOPS: linalg.matmul {pp.gemm = "library"} ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x1xf32>)
  %column = linalg.matmul ins(%a, %v : tensor<64x32xf32>, tensor<32x1xf32>)
                          outs(%cv : tensor<64x1xf32>) -> tensor<64x1xf32>
  return %big, %small, %heads, %column : tensor<64x16xf32>, tensor<8x4xf32>,
         tensor<4x2x8x16xf32>, tensor<64x1xf32>
}
