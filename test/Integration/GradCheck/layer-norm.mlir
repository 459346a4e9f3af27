// Finite-difference check of layer norm with its statistics computed by one
// linalg.generic with two results (sum and sum of squares):
// y = (x - mean) * rsqrt(E[x^2] - mean^2 + eps) * g + b.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#x = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
#c = affine_map<(i, j) -> (j)>
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x6xf32> {pp.target},
                      %w: tensor<3x6xf32> {pp.param},
                      %g: tensor<6xf32> {pp.param},
                      %b: tensor<6xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x6xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s:2 = linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x6xf32>) outs(%z4, %z4 : tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%a: f32, %s1: f32, %s2: f32):
      %a2 = arith.mulf %a, %a : f32
      %n1 = arith.addf %s1, %a : f32
      %n2 = arith.addf %a2, %s2 : f32
      linalg.yield %n1, %n2 : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %ln = linalg.generic {indexing_maps = [#x, #r, #r, #c, #c, #x], iterator_types = ["parallel", "parallel"]}
      ins(%h, %s#0, %s#1, %g, %b : tensor<4x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<6xf32>, tensor<6xf32>)
      outs(%e : tensor<4x6xf32>) {
    ^bb0(%a: f32, %sum: f32, %sumsq: f32, %gg: f32, %bb: f32, %o: f32):
      %inv = arith.constant 0.166666672 : f32
      %eps = arith.constant 1.0e-05 : f32
      %mean = arith.mulf %sum, %inv : f32
      %m2 = arith.mulf %sumsq, %inv : f32
      %mm = arith.mulf %mean, %mean : f32
      %var = arith.subf %m2, %mm : f32
      %ve = arith.addf %var, %eps : f32
      %r = math.rsqrt %ve : f32
      %c = arith.subf %a, %mean : f32
      %n = arith.mulf %c, %r : f32
      %ng = arith.mulf %n, %gg : f32
      %out = arith.addf %ng, %bb : f32
      linalg.yield %out : f32
  } -> tensor<4x6xf32>
  %d = linalg.sub ins(%ln, %y : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x6xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %loss : tensor<f32>
}
