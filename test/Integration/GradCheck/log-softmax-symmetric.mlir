// Finite-difference check of a CLIP-style symmetric cross-entropy: the
// log-softmax of the logits' rows and of their transpose's rows (the
// columns), each stabilised by its own row max (which gets no gradient,
// docs/Autodiff.md), both against one-hot targets and summed.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#x = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#r = affine_map<(i, j) -> (i)>
#i = affine_map<(i) -> (i)>
#all = affine_map<(i, j) -> ()>
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>, %t: tensor<4x4xf32> {pp.target},
                      %w: tensor<3x3xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %e3 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %logits = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>],
                            iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xw, %y : tensor<4x3xf32>, tensor<4x3xf32>) outs(%z : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %lo4 = linalg.fill ins(%lowest : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %am = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<4x4xf32>) outs(%lo4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %v = arith.maximumf %a, %acc : f32
      linalg.yield %v : f32
  } -> tensor<4xf32>
  %as = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %am : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %v = arith.subf %a, %b : f32
      linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %ae = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%as : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = math.exp %a : f32
      linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %ar = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%ae : tensor<4x4xf32>) outs(%z4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %v = arith.addf %a, %acc : f32
      linalg.yield %v : f32
  } -> tensor<4xf32>
  %al = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
      ins(%ar : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = math.log %a : f32
      linalg.yield %v : f32
  } -> tensor<4xf32>
  %ay = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%as, %al : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %v = arith.subf %a, %b : f32
      linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %lt = linalg.generic {indexing_maps = [#t, #x], iterator_types = ["parallel", "parallel"]}
      ins(%logits : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %bm = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%lt : tensor<4x4xf32>) outs(%lo4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %v = arith.maximumf %a, %acc : f32
      linalg.yield %v : f32
  } -> tensor<4xf32>
  %bs = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%lt, %bm : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %v = arith.subf %a, %b : f32
      linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %be = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%bs : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = math.exp %a : f32
      linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %br = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%be : tensor<4x4xf32>) outs(%z4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %v = arith.addf %a, %acc : f32
      linalg.yield %v : f32
  } -> tensor<4xf32>
  %bl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
      ins(%br : tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %v = math.log %a : f32
      linalg.yield %v : f32
  } -> tensor<4xf32>
  %by = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%bs, %bl : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %v = arith.subf %a, %b : f32
      linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %ce = linalg.generic {indexing_maps = [#x, #x, #x, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t, %ay, %by : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%zs : tensor<f32>) {
    ^bb0(%ti: f32, %p: f32, %q: f32, %acc: f32):
      %pq = arith.addf %p, %q : f32
      %v = arith.mulf %ti, %pq : f32
      %s = arith.addf %acc, %v : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  %scale = arith.constant dense<-0.125> : tensor<f32>
  %loss = linalg.mul ins(%ce, %scale : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
