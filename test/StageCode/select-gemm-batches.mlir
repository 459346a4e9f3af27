// RUN: pp-opt %s --pp-select-gemm="gemm=auto batch-by-product" | FileCheck %s --check-prefix=PRODUCT
// RUN: pp-opt %s --pp-select-gemm="gemm=auto" | FileCheck %s --check-prefix=BATCH
// RUN: pp-opt %s --pp-select-gemm="gemm=auto batch-by-product vectorize-contractions=false" | FileCheck %s --check-prefix=BATCH

// Attention's batched products under gemm=auto: 8 heads of 2.1 MFLOP each
// (16.8 MFLOP a call). By product (batch-by-product) each head is below
// min-vectorized-library-flops, so pp-vectorize-contractions' tiles compute
// them; by the whole batch (the default), or without the vectorizer, the
// library does. A
// scaled product (Q K^T / sqrt(d)) keeps the library, which takes the scale
// as its alpha.

// PRODUCT-LABEL: func @heads
// PRODUCT:         linalg.batch_matmul ins(
// PRODUCT:         linalg.generic {{.*}}pp.gemm = "library"
// BATCH-LABEL:   func @heads
// BATCH:           linalg.batch_matmul {pp.gemm = "library"}
// BATCH:           linalg.generic {{.*}}pp.gemm = "library"
func.func @heads(%q: tensor<8x128x64xf32>, %kt: tensor<8x64x128xf32>,
                 %k: tensor<8x128x64xf32>, %s: tensor<8x128x128xf32>,
                 %scale: f32) -> (tensor<8x128x128xf32>, tensor<8x128x128xf32>) {
  %p = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xf32>, tensor<8x64x128xf32>)
                           outs(%s : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %scores = linalg.generic {
      indexing_maps = [affine_map<(b, i, j, e) -> (b, i, e)>,
                       affine_map<(b, i, j, e) -> (b, j, e)>,
                       affine_map<(b, i, j, e) -> (b, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<8x128x64xf32>, tensor<8x128x64xf32>)
      outs(%s : tensor<8x128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.mulf %m, %scale : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<8x128x128xf32>
  return %p, %scores : tensor<8x128x128xf32>, tensor<8x128x128xf32>
}
