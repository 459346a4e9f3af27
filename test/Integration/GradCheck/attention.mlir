// Finite-difference check of causal self-attention in linalg.generic ops on
// an embedded one-hot input: embedding lookup as a contraction of one-hot
// [B, T, V] with the table [V, C], q/k/v projections, scores masked by
// arith.select on linalg.index with -inf, a max-shifted softmax, and the
// weighted sum of values. Also split into two micro-batches.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// RUN: pp-compile %s --microbatches 2 -o %t.2
// RUN: %t.2 --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#btv = affine_map<(b, t, c, v) -> (b, t, v)>
#vc = affine_map<(b, t, c, v) -> (v, c)>
#btc4 = affine_map<(b, t, c, v) -> (b, t, c)>
#btu = affine_map<(b, t, u) -> (b, t, u)>
#bt = affine_map<(b, t, u) -> (b, t)>
func.func @train_step(%tok: tensor<2x3x5xf32>, %y: tensor<2x3x4xf32> {pp.target},
                      %emb: tensor<5x4xf32> {pp.param},
                      %wq: tensor<4x4xf32> {pp.param},
                      %wk: tensor<4x4xf32> {pp.param},
                      %wv: tensor<4x4xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e3 = tensor.empty() : tensor<2x3x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %x = linalg.generic {indexing_maps = [#btv, #vc, #btc4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%tok, %emb : tensor<2x3x5xf32>, tensor<5x4xf32>) outs(%z3 : tensor<2x3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(b, t, d, c) -> (b, t, c)>, affine_map<(b, t, d, c) -> (c, d)>, affine_map<(b, t, d, c) -> (b, t, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wq : tensor<2x3x4xf32>, tensor<4x4xf32>) outs(%z3 : tensor<2x3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(b, t, d, c) -> (b, t, c)>, affine_map<(b, t, d, c) -> (c, d)>, affine_map<(b, t, d, c) -> (b, t, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wk : tensor<2x3x4xf32>, tensor<4x4xf32>) outs(%z3 : tensor<2x3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(b, t, d, c) -> (b, t, c)>, affine_map<(b, t, d, c) -> (c, d)>, affine_map<(b, t, d, c) -> (b, t, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wv : tensor<2x3x4xf32>, tensor<4x4xf32>) outs(%z3 : tensor<2x3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  // scores[b, t, u] = (q[b, t] . k[b, u]) / 2, -inf where u > t
  %es = tensor.empty() : tensor<2x3x3xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %dots = linalg.generic {indexing_maps = [affine_map<(b, t, u, d) -> (b, t, d)>, affine_map<(b, t, u, d) -> (b, u, d)>, affine_map<(b, t, u, d) -> (b, t, u)>],
                          iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%zs : tensor<2x3x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x3x3xf32>
  %scores = linalg.generic {indexing_maps = [#btu, #btu], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dots : tensor<2x3x3xf32>) outs(%es : tensor<2x3x3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %half = arith.constant 0.5 : f32
      %t = linalg.index 1 : index
      %u = linalg.index 2 : index
      %future = arith.cmpi ugt, %u, %t : index
      %s = arith.mulf %a, %half : f32
      %m = arith.select %future, %ninf, %s : f32
      linalg.yield %m : f32
  } -> tensor<2x3x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %lo2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %mx = linalg.generic {indexing_maps = [#btu, #bt], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scores : tensor<2x3x3xf32>) outs(%lo2 : tensor<2x3xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %m = arith.maximumf %a, %acc : f32
      linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %ex = linalg.generic {indexing_maps = [#btu, #bt, #btu], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scores, %mx : tensor<2x3x3xf32>, tensor<2x3xf32>) outs(%es : tensor<2x3x3xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %x1 = math.exp %d : f32
      linalg.yield %x1 : f32
  } -> tensor<2x3x3xf32>
  %den = linalg.generic {indexing_maps = [#btu, #bt], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x3x3xf32>) outs(%z2 : tensor<2x3xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
  } -> tensor<2x3xf32>
  %p = linalg.generic {indexing_maps = [#btu, #bt, #btu], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %den : tensor<2x3x3xf32>, tensor<2x3xf32>) outs(%es : tensor<2x3x3xf32>) {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %r = arith.divf %a, %s : f32
      linalg.yield %r : f32
  } -> tensor<2x3x3xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, t, d, u) -> (b, t, u)>, affine_map<(b, t, d, u) -> (b, u, d)>, affine_map<(b, t, d, u) -> (b, t, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x3xf32>, tensor<2x3x4xf32>) outs(%z3 : tensor<2x3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %d = linalg.sub ins(%o, %y : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%e3 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %sq = linalg.mul ins(%d, %d : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%e3 : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<2x3x4xf32>) outs(%zl : tensor<f32>) dimensions = [0, 1, 2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %loss : tensor<f32>
}
