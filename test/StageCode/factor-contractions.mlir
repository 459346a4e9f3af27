// RUN: pp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pp-factor-contractions))' | FileCheck %s
// The rewritten contractions are GEMMs for pp-select-gemm:
// RUN: pp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pp-factor-contractions),pp-select-gemm{gemm=library print-plans=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN

#ik = affine_map<(i, j, k) -> (i, k)>
#kj = affine_map<(i, j, k) -> (k, j)>
#i = affine_map<(i, j, k) -> (i)>
#ij = affine_map<(i, j, k) -> (i, j)>

// A row normalisation inside the product (probs x v): s multiplies the
// smallest of A, B and the output that has its dims, here the output; the
// plain contraction goes into zeros and an epilogue adds it, divided by s,
// to the init.
// CHECK-LABEL: func.func @row_factor
// CHECK-SAME: (%[[A:.*]]: tensor<64x128xf32>, %[[B:.*]]: tensor<128x48xf32>, %[[S:.*]]: tensor<64xf32>, %[[OUT:.*]]: tensor<64x48xf32>)
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[C:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<64x128xf32>, tensor<128x48xf32>) outs(%[[Z]] : tensor<64x48xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: arith.addf %[[O]], %[[P]]
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[C]], %[[S]], %[[OUT]] : tensor<64x48xf32>, tensor<64xf32>, tensor<64x48xf32>)
// CHECK-NEXT: ^bb0(%[[SUM:.*]]: f32, %[[D:.*]]: f32, %[[INIT:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[SUM]], %[[D]]
// CHECK-NEXT: arith.addf %[[INIT]], %[[Q]]
// CHECK: return %[[R]]
// PLAN: remark: gemm library: batch=1 m=64 n=48 k=128 trans_a=0 trans_b=0 calls=1
func.func @row_factor(%a: tensor<64x128xf32>, %b: tensor<128x48xf32>, %s: tensor<64xf32>, %out: tensor<64x48xf32>) -> tensor<64x48xf32> {
  %r = linalg.generic {indexing_maps = [#ik, #kj, #i, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b, %s : tensor<64x128xf32>, tensor<128x48xf32>, tensor<64xf32>) outs(%out : tensor<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.divf %p, %z : f32
    %t = arith.addf %o, %q : f32
    linalg.yield %t : f32
  } -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

// -----

#ik = affine_map<(i, j, k) -> (i, k)>
#kj = affine_map<(i, j, k) -> (k, j)>
#ij = affine_map<(i, j, k) -> (i, j)>

// A constant scale (attention's 1/sqrt(d)) and a subtraction: the scale and
// -1 multiply the smallest of A, B and the output (here B, 8x16), and the
// contraction accumulates into the init directly (B is its first operand,
// as the body read it first).
// CHECK-LABEL: func.func @scaled
// CHECK-SAME: (%[[A:.*]]: tensor<64x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[OUT:.*]]: tensor<64x16xf32>)
// CHECK-DAG: %[[CST:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[NEG:.*]] = arith.constant -1.000000e+00 : f32
// CHECK: %[[BS:.*]] = linalg.generic
// CHECK-SAME: ins(%[[B]] : tensor<8x16xf32>)
// CHECK: arith.mulf %{{.*}}, %[[CST]]
// CHECK: arith.mulf %{{.*}}, %[[NEG]]
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[BS]], %[[A]] : tensor<8x16xf32>, tensor<64x8xf32>) outs(%[[OUT]] : tensor<64x16xf32>)
// CHECK: return %[[R]]
// PLAN: remark: gemm library: batch=1 m=64 n=16 k=8
func.func @scaled(%a: tensor<64x8xf32>, %b: tensor<8x16xf32>, %out: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %c = arith.constant 0.125 : f32
  %r = linalg.generic {indexing_maps = [#ik, #kj, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x8xf32>, tensor<8x16xf32>) outs(%out : tensor<64x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %c : f32
    %q = arith.mulf %y, %p : f32
    %t = arith.subf %o, %q : f32
    linalg.yield %t : f32
  } -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}

// -----

#bst = affine_map<(b, t, d, s) -> (b, s, t)>
#bs = affine_map<(b, t, d, s) -> (b, s)>
#bsd = affine_map<(b, t, d, s) -> (b, s, d)>
#btd = affine_map<(b, t, d, s) -> (b, t, d)>

// A factor that reads a contracted dimension (dV = (e / sum)^T dO): it
// divides the smaller operand that has its dims, dO (2x16x8; e is 2x16x16).
// CHECK-LABEL: func.func @operand_factor
// CHECK-SAME: (%[[E:.*]]: tensor<2x16x16xf32>, %[[S:.*]]: tensor<2x16xf32>, %[[G:.*]]: tensor<2x16x8xf32>, %[[OUT:.*]]: tensor<2x16x8xf32>)
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-SAME: ins(%[[G]], %[[S]] : tensor<2x16x8xf32>, tensor<2x16xf32>)
// CHECK: arith.divf
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[E]], %[[P]] : tensor<2x16x16xf32>, tensor<2x16x8xf32>) outs(%[[OUT]] : tensor<2x16x8xf32>)
// CHECK: return %[[R]]
// PLAN: remark: gemm library: batch=2 m=16 n=8 k=16 trans_a=1 trans_b=0
func.func @operand_factor(%e: tensor<2x16x16xf32>, %s: tensor<2x16xf32>, %g: tensor<2x16x8xf32>, %out: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %r = linalg.generic {indexing_maps = [#bst, #bs, #bsd, #btd], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %s, %g : tensor<2x16x16xf32>, tensor<2x16xf32>, tensor<2x16x8xf32>) outs(%out : tensor<2x16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %p = arith.divf %x, %y : f32
    %q = arith.mulf %p, %z : f32
    %t = arith.addf %o, %q : f32
    linalg.yield %t : f32
  } -> tensor<2x16x8xf32>
  return %r : tensor<2x16x8xf32>
}

// -----

#st = affine_map<(s, t, d) -> (s, t)>
#td = affine_map<(s, t, d) -> (t, d)>
#s = affine_map<(s, t, d) -> (s)>
#sd = affine_map<(s, t, d) -> (s, d)>

// Three factors over two contracted dimensions (the softmax sum's
// gradient, sum over t and d of e * v * dO / s^2): e and v are contracted
// first over t (their result, 16x8, is smaller than v dO's 16x32), then a
// row reduction over d goes into zeros, and the epilogue divides by s twice.
// CHECK-LABEL: func.func @three_factors
// CHECK-SAME: (%[[E:.*]]: tensor<16x32xf32>, %[[V:.*]]: tensor<32x8xf32>, %[[G:.*]]: tensor<16x8xf32>, %[[S:.*]]: tensor<16xf32>, %[[OUT:.*]]: tensor<16xf32>)
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK-SAME: -> tensor<16x8xf32>
// CHECK: %[[EV:.*]] = linalg.generic
// CHECK-SAME: ins(%[[E]], %[[V]] : tensor<16x32xf32>, tensor<32x8xf32>) outs(%[[Z]] : tensor<16x8xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[G]], %[[EV]] : tensor<16x8xf32>, tensor<16x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]], %[[S]], %[[S]], %[[OUT]] : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
// CHECK: arith.divf
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return %[[R]]
// PLAN: remark: gemm library: batch=1 m=16 n=8 k=32
func.func @three_factors(%e: tensor<16x32xf32>, %v: tensor<32x8xf32>, %g: tensor<16x8xf32>, %s: tensor<16xf32>, %out: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [#st, #td, #sd, #s, #s], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%e, %v, %g, %s : tensor<16x32xf32>, tensor<32x8xf32>, tensor<16x8xf32>, tensor<16xf32>) outs(%out : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.divf %p, %w : f32
    %q2 = arith.divf %q, %w : f32
    %n = arith.negf %q2 : f32
    %m = arith.mulf %n, %z : f32
    %t = arith.addf %o, %m : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

#ik = affine_map<(i, j, k) -> (i, k)>
#kj = affine_map<(i, j, k) -> (k, j)>
#ij = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, k) -> (i, k)>
#row = affine_map<(i, k) -> (i)>
#jk = affine_map<(j, k) -> (j, k)>
#k = affine_map<(j, k) -> (k)>
#j = affine_map<(j, k) -> (j)>

// Left alone: a plain contraction, one pp-select-gemm takes with its scale,
// a sum of squares (no GEMM), and a weighted column sum whose operands
// share all their dims (a batched dot product, no m or n).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
func.func @left_alone(%a: tensor<64x8xf32>, %b: tensor<8x16xf32>, %out: tensor<64x16xf32>, %rows: tensor<64xf32>, %w: tensor<16x8xf32>, %v: tensor<8xf32>, %cols: tensor<16xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<16xf32>) {
  %c = arith.constant 0.5 : f32
  %plain = linalg.generic {indexing_maps = [#ik, #kj, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x8xf32>, tensor<8x16xf32>) outs(%out : tensor<64x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %o, %p : f32
    linalg.yield %t : f32
  } -> tensor<64x16xf32>
  %alpha = linalg.generic {indexing_maps = [#ik, #kj, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x8xf32>, tensor<8x16xf32>) outs(%out : tensor<64x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.mulf %p, %c : f32
    %t = arith.addf %o, %q : f32
    linalg.yield %t : f32
  } -> tensor<64x16xf32>
  %squares = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<64x8xf32>) outs(%rows : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.mulf %x, %x : f32
    %t = arith.addf %o, %p : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %dot = linalg.generic {indexing_maps = [#jk, #k, #jk, #j], iterator_types = ["parallel", "reduction"]}
      ins(%w, %v, %w : tensor<16x8xf32>, tensor<8xf32>, tensor<16x8xf32>) outs(%cols : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.mulf %p, %z : f32
    %t = arith.addf %o, %q : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  return %plain, %alpha, %squares, %dot : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<16xf32>
}
