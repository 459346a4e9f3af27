// Finite-difference check of pp-derive-backward's gradients for linalg.generic bodies using exp, log, sqrt, div, neg, min and select.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#id = affine_map<(i, j) -> (i, j)>
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x5xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e_h = tensor.empty() : tensor<4x5xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %eg = tensor.empty() : tensor<4x5xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x5xf32>) outs(%eg : tensor<4x5xf32>) {
    ^bb0(%a: f32, %out: f32):
      %one = arith.constant 1.0 : f32
      %half = arith.constant 0.5 : f32
      %a2 = arith.mulf %a, %a : f32
      %p = arith.addf %a2, %one : f32
      %e = math.exp %a : f32
      %q = arith.divf %e, %p : f32
      %l = math.log %p : f32
      %s = math.sqrt %p : f32
      %n = arith.negf %s : f32
      %m = arith.minimumf %q, %half : f32
      %c = arith.cmpf ogt, %a, %zero : f32
      %t = arith.select %c, %l, %n : f32
      %r1 = arith.addf %m, %t : f32
      %r = arith.subf %r1, %q : f32
      linalg.yield %r : f32
  } -> tensor<4x5xf32>
  %ed = tensor.empty() : tensor<4x5xf32>
  %d = linalg.sub ins(%g, %y : tensor<4x5xf32>, tensor<4x5xf32>) outs(%ed : tensor<4x5xf32>) -> tensor<4x5xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x5xf32>, tensor<4x5xf32>) outs(%ed : tensor<4x5xf32>) -> tensor<4x5xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x5xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %loss : tensor<f32>
}
