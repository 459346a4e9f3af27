// Finite-difference check of softmax cross-entropy against one-hot targets:
// loss = -sum(t * log_softmax(logits)) / rows, with the log-sum-exp
// stabilised by the row max. Also split into two micro-batches.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// RUN: pp-compile %s --microbatches 2 -o %t.2
// RUN: %t.2 --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#x = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @train_step(%x: tensor<4x3xf32>, %t: tensor<4x5xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %lo4 = linalg.fill ins(%lowest : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<4x5xf32>) outs(%lo4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %mx = arith.maximumf %a, %acc : f32
      linalg.yield %mx : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%logits, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%z4 : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %d = arith.subf %a, %b : f32
      %x1 = math.exp %d : f32
      %r1 = arith.addf %acc, %x1 : f32
      linalg.yield %r1 : f32
  } -> tensor<4xf32>
  // t * (logits - m - log(s)), summed over rows and classes
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %ce = linalg.generic {indexing_maps = [#x, #x, #r, #r, affine_map<(i, j) -> ()>],
                        iterator_types = ["reduction", "reduction"]}
      ins(%t, %logits, %m, %s : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4xf32>, tensor<4xf32>)
      outs(%zs : tensor<f32>) {
    ^bb0(%ti: f32, %l: f32, %mi: f32, %si: f32, %acc: f32):
      %ls = math.log %si : f32
      %c = arith.subf %l, %mi : f32
      %lp = arith.subf %c, %ls : f32
      %p = arith.mulf %ti, %lp : f32
      %r1 = arith.addf %acc, %p : f32
      linalg.yield %r1 : f32
  } -> tensor<f32>
  %scale = arith.constant dense<-0.25> : tensor<f32>
  %loss = linalg.mul ins(%ce, %scale : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
