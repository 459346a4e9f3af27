// Finite-difference check of pp-derive-backward's gradients for tanh (linalg.tanh).
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x5xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e_h = tensor.empty() : tensor<4x5xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.tanh ins(%h : tensor<4x5xf32>) outs(%e_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %ed = tensor.empty() : tensor<4x5xf32>
  %d = linalg.sub ins(%r, %y : tensor<4x5xf32>, tensor<4x5xf32>) outs(%ed : tensor<4x5xf32>) -> tensor<4x5xf32>
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
