// RUN: pp-opt %s -split-input-file --pp-select-gemm="gemm=library print-plans" -verify-diagnostics | FileCheck %s --check-prefix=LIB


// A plain matmul: row-major A and B.
// LIB-LABEL: func @matmul
// LIB: linalg.matmul {pp.gemm = "library"}
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>,
                  %c: tensor<64x16xf32>) -> tensor<64x16xf32> {
  // expected-remark @+1 {{gemm library: batch=1 m=64 n=16 k=32 trans_a=0 trans_b=0 calls=1}}
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>)
                     outs(%c : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}

// -----

// dY W^T as the backward writes it, with an unused input: B is transposed.
// LIB-LABEL: func @input_gradient
// LIB: linalg.generic {{.*}}pp.gemm = "library"
#dy = affine_map<(b, t, e, f) -> (b, t, f)>
#w = affine_map<(b, t, e, f) -> (e, f)>
#dx = affine_map<(b, t, e, f) -> (b, t, e)>
func.func @input_gradient(%dy: tensor<4x8x16xf32>, %w: tensor<32x16xf32>,
                          %x: tensor<4x8x32xf32>, %init: tensor<4x8x32xf32>)
    -> tensor<4x8x32xf32> {
  // expected-remark @+1 {{gemm library: batch=1 m=32 n=32 k=16 trans_a=0 trans_b=1 calls=1}}
  %r = linalg.generic {indexing_maps = [#dy, #dx, #w, #dx],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dy, %x, %w : tensor<4x8x16xf32>, tensor<4x8x32xf32>, tensor<32x16xf32>)
      outs(%init : tensor<4x8x32xf32>) {
  ^bb0(%g: f32, %unused: f32, %v: f32, %acc: f32):
    %p = arith.mulf %g, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8x32xf32>
  return %r : tensor<4x8x32xf32>
}

// -----

// X^T dY (a weight gradient): A is transposed, (b, t) collapse into K.
// LIB-LABEL: func @weight_gradient
// LIB: linalg.generic {{.*}}pp.gemm = "library"
#x = affine_map<(e, f, b, t) -> (b, t, e)>
#g = affine_map<(e, f, b, t) -> (b, t, f)>
#dw = affine_map<(e, f, b, t) -> (e, f)>
func.func @weight_gradient(%x: tensor<4x8x32xf32>, %dy: tensor<4x8x16xf32>,
                           %init: tensor<32x16xf32>) -> tensor<32x16xf32> {
  // expected-remark @+1 {{gemm library: batch=1 m=32 n=16 k=32 trans_a=1 trans_b=0 calls=1}}
  %r = linalg.generic {indexing_maps = [#x, #g, #dw],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %dy : tensor<4x8x32xf32>, tensor<4x8x16xf32>)
      outs(%init : tensor<32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}

// -----

// Attention scores Q K^T times a scale: (b, h) collapse into the batch and
// the scale is alpha.
// LIB-LABEL: func @scores
// LIB: linalg.generic {{.*}}pp.gemm = "library"
#q = affine_map<(b, h, t, s, e) -> (b, h, t, e)>
#k = affine_map<(b, h, t, s, e) -> (b, h, s, e)>
#sc = affine_map<(b, h, t, s, e) -> (b, h, t, s)>
func.func @scores(%q: tensor<4x2x8x16xf32>, %k: tensor<4x2x8x16xf32>,
                  %init: tensor<4x2x8x8xf32>) -> tensor<4x2x8x8xf32> {
  %scale = arith.constant 0.25 : f32
  // expected-remark @+1 {{gemm library: batch=8 m=8 n=8 k=16 trans_a=0 trans_b=1 calls=1}}
  %r = linalg.generic {indexing_maps = [#q, #k, #sc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x2x8x16xf32>, tensor<4x2x8x16xf32>)
      outs(%init : tensor<4x2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %ps = arith.mulf %p, %scale : f32
    %s = arith.addf %acc, %ps : f32
    linalg.yield %s : f32
  } -> tensor<4x2x8x8xf32>
  return %r : tensor<4x2x8x8xf32>
}

// -----

// The head projection x[b, t, e] W[e, h, k] -> [b, h, t, k]: neither M (b, t)
// nor N (h, k) collapses in the output, so b, the larger of the two left,
// is the batch (W's batch stride 0) and h a loop of 2 calls.
// LIB-LABEL: func @heads
// LIB: linalg.generic {{.*}}pp.gemm = "library"
#hx = affine_map<(b, h, t, k, e) -> (b, t, e)>
#hw = affine_map<(b, h, t, k, e) -> (e, h, k)>
#ho = affine_map<(b, h, t, k, e) -> (b, h, t, k)>
func.func @heads(%x: tensor<4x8x32xf32>, %w: tensor<32x2x16xf32>,
                 %init: tensor<4x2x8x16xf32>) -> tensor<4x2x8x16xf32> {
  // expected-remark @+1 {{gemm library: batch=4 m=8 n=16 k=32 trans_a=0 trans_b=0 calls=2}}
  %r = linalg.generic {indexing_maps = [#hx, #hw, #ho],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8x32xf32>, tensor<32x2x16xf32>)
      outs(%init : tensor<4x2x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x2x8x16xf32>
  return %r : tensor<4x2x8x16xf32>
}

// -----

// A column-major output: computed as C^T = B^T A^T (A and B swap).
// LIB-LABEL: func @transposed_output
// LIB: linalg.generic {{.*}}pp.gemm = "library"
#ta = affine_map<(m, n, k) -> (m, k)>
#tb = affine_map<(m, n, k) -> (k, n)>
#tc = affine_map<(m, n, k) -> (n, m)>
func.func @transposed_output(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>,
                             %init: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-remark @+1 {{gemm library: batch=1 m=16 n=64 k=32 trans_a=1 trans_b=1 calls=1}}
  %r = linalg.generic {indexing_maps = [#ta, #tb, #tc],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>)
      outs(%init : tensor<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// Not GEMMs: row sums of squares (no M or N), a max-plus, an f64 matmul.
// LIB-LABEL: func @not_gemms
// LIB-NOT: pp.gemm
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @not_gemms(%a: tensor<8x8xf32>, %v: tensor<8xf32>,
                     %d: tensor<8x8xf64>, %dc: tensor<8x8xf64>)
    -> (tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf64>) {
  // expected-remark @+1 {{gemm generated: not a contraction: a loop is not a batch, M, N or K dimension}}
  %sq = linalg.generic {indexing_maps = [#id, #id, #row],
                        iterator_types = ["parallel", "reduction"]}
      ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%v : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %mp = linalg.generic {indexing_maps = [#id, #id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%a : tensor<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.maximumf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  // expected-remark @+1 {{gemm generated: an operand is not f32}}
  %f64 = linalg.matmul ins(%d, %d : tensor<8x8xf64>, tensor<8x8xf64>)
                       outs(%dc : tensor<8x8xf64>) -> tensor<8x8xf64>
  return %sq, %mp, %f64 : tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf64>
}

// -----

// The named family: batch_matmul, and matmul with a transposed A through
// its indexing maps.
// LIB-LABEL: func @named
// LIB: linalg.batch_matmul {pp.gemm = "library"}
// LIB: linalg.matmul indexing_maps = [{{.*}}] {pp.gemm = "library"}
func.func @named(%a: tensor<4x8x16xf32>, %b: tensor<4x16x32xf32>,
                 %c: tensor<4x8x32xf32>, %at: tensor<16x8xf32>,
                 %d: tensor<16x32xf32>, %e: tensor<8x32xf32>)
    -> (tensor<4x8x32xf32>, tensor<8x32xf32>) {
  // expected-remark @+1 {{gemm library: batch=4 m=8 n=32 k=16 trans_a=0 trans_b=0 calls=1}}
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x32xf32>)
                           outs(%c : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  // expected-remark @+1 {{gemm library: batch=1 m=8 n=32 k=16 trans_a=1 trans_b=0 calls=1}}
  %t = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                      affine_map<(m, n, k) -> (k, n)>,
                                      affine_map<(m, n, k) -> (m, n)>]
                     ins(%at, %d : tensor<16x8xf32>, tensor<16x32xf32>)
                     outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r, %t : tensor<4x8x32xf32>, tensor<8x32xf32>
}
