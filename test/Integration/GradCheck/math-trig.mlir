// Finite-difference check of the payload rules for sin, cos, atan, exp2
// and log2 in one linalg.generic.
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
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x5xf32>) outs(%e_h : tensor<4x5xf32>) {
    ^bb0(%a: f32, %out: f32):
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %s = math.sin %a : f32
      %c = math.cos %a : f32
      %t = math.atan %a : f32
      %hf = arith.mulf %a, %half : f32
      %e = math.exp2 %hf : f32
      %ab = math.absf %a : f32
      %p = arith.addf %ab, %one : f32
      %l = math.log2 %p : f32
      %s1 = arith.addf %s, %c : f32
      %s2 = arith.addf %s1, %t : f32
      %s3 = arith.addf %s2, %e : f32
      %s4 = arith.addf %s3, %l : f32
      linalg.yield %s4 : f32
  } -> tensor<4x5xf32>
  %d = linalg.sub ins(%g, %y : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x5xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %loss : tensor<f32>
}
