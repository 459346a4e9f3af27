// RUN: pp-opt %s --pp-select-gemm="gemm=generated" | FileCheck %s --check-prefix=GEN
// RUN: pp-opt %s --pp-select-gemm="gemm=library" | FileCheck %s --check-prefix=LIB
// RUN: pp-opt %s --pp-select-gemm="gemm=auto min-library-flops=50000 max-library-calls=1" | FileCheck %s --check-prefix=AUTO
// RUN: pp-opt %s --pp-select-gemm="gemm=auto min-library-flops=1000 max-library-calls=2" | FileCheck %s --check-prefix=AUTO-LOW

// GEN-NOT: pp.gemm

// LIB-LABEL: func @modes
// AUTO-LABEL: func @modes
// AUTO-LOW-LABEL: func @modes
func.func @modes(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>,
                 %c: tensor<64x16xf32>, %r: tensor<1x512xf32>,
                 %v: tensor<512x64xf32>, %o: tensor<1x64xf32>,
                 %s: tensor<1x4xf32>, %t: tensor<4x4xf32>,
                 %u: tensor<1x4xf32>, %x: tensor<1x8x32xf32>,
                 %w: tensor<32x2x16xf32>, %h: tensor<1x2x8x16xf32>)
    -> (tensor<64x16xf32>, tensor<1x64xf32>, tensor<1x4xf32>,
        tensor<1x2x8x16xf32>) {
  // No unit output dimension: pp-vectorize-contractions beats the library,
  // so auto leaves it generated.
  // LIB: linalg.matmul {pp.gemm = "library"} ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>
  // AUTO: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>
  // AUTO-LOW: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>
  %big = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>)
                       outs(%c : tensor<64x16xf32>) -> tensor<64x16xf32>
  // A single row of 65536 flops, which the vectorizer leaves as loops: the
  // library with both thresholds.
  // AUTO: linalg.matmul {pp.gemm = "library"} ins(%{{.*}}, %{{.*}} : tensor<1x512xf32>
  // AUTO-LOW: linalg.matmul {pp.gemm = "library"} ins(%{{.*}}, %{{.*}} : tensor<1x512xf32>
  %row = linalg.matmul ins(%r, %v : tensor<1x512xf32>, tensor<512x64xf32>)
                       outs(%o : tensor<1x64xf32>) -> tensor<1x64xf32>
  // 32 flops: generated with both.
  // AUTO: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x4xf32>
  // AUTO-LOW: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x4xf32>
  %small = linalg.matmul ins(%s, %t : tensor<1x4xf32>, tensor<4x4xf32>)
                         outs(%u : tensor<1x4xf32>) -> tensor<1x4xf32>
  // One batched call of 16384 flops: the library only with the low threshold.
  // AUTO: linalg.generic
  // AUTO-NOT: pp.gemm
  // AUTO-LOW: linalg.generic {{.*}}pp.gemm = "library"
  %heads = linalg.generic {
      indexing_maps = [affine_map<(b, h, t, k, e) -> (b, t, e)>,
                       affine_map<(b, h, t, k, e) -> (e, h, k)>,
                       affine_map<(b, h, t, k, e) -> (b, h, t, k)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x8x32xf32>, tensor<32x2x16xf32>)
      outs(%h : tensor<1x2x8x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r2 = arith.addf %acc, %m : f32
    linalg.yield %r2 : f32
  } -> tensor<1x2x8x16xf32>
  return %big, %row, %small, %heads : tensor<64x16xf32>, tensor<1x64xf32>,
      tensor<1x4xf32>, tensor<1x2x8x16xf32>
}
