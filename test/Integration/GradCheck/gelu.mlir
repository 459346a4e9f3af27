// Finite-difference check of GELU in its tanh form,
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with x^3 as math.powf,
// and in its erf form, 0.5 x (1 + erf(x / sqrt(2))).
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#x = affine_map<(i, j) -> (i, j)>
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x5xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param},
                      %v: tensor<3x5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %k = linalg.matmul ins(%x, %v : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%h, %k : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %three = arith.constant 3.0 : f32
      %c = arith.constant 0.044715 : f32
      %s2pi = arith.constant 0.797884583 : f32
      %rs2 = arith.constant 0.707106769 : f32
      // tanh form on a
      %a3 = math.powf %a, %three : f32
      %ca3 = arith.mulf %c, %a3 : f32
      %in = arith.addf %a, %ca3 : f32
      %sc = arith.mulf %s2pi, %in : f32
      %t = math.tanh %sc : f32
      %t1 = arith.addf %one, %t : f32
      %ha = arith.mulf %half, %a : f32
      %ga = arith.mulf %ha, %t1 : f32
      // erf form on b
      %bs = arith.mulf %b, %rs2 : f32
      %er = math.erf %bs : f32
      %e1 = arith.addf %one, %er : f32
      %hb = arith.mulf %half, %b : f32
      %gb = arith.mulf %hb, %e1 : f32
      %r = arith.addf %ga, %gb : f32
      linalg.yield %r : f32
  } -> tensor<4x5xf32>
  %d = linalg.sub ins(%g, %y : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x5xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %loss : tensor<f32>
}
