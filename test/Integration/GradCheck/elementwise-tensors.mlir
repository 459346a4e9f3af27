// Finite-difference check of elementwise arith and math ops on whole
// tensors, which pp-compile turns into linalg.generic ops first
// (convert-elementwise-to-linalg); the select's mask is computed, too.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x5xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %t = math.tanh %h : tensor<4x5xf32>
  %ex = math.exp %h : tensor<4x5xf32>
  %p = arith.mulf %t, %ex : tensor<4x5xf32>
  %pos = arith.cmpf ogt, %h, %z : tensor<4x5xf32>
  %s = arith.select %pos, %p, %t : tensor<4x5xi1>, tensor<4x5xf32>
  %d = arith.subf %s, %y : tensor<4x5xf32>
  %sq = arith.mulf %d, %d : tensor<4x5xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x5xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %loss : tensor<f32>
}
