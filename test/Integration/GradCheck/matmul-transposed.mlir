// Finite-difference check of pp-derive-backward's gradients for linalg.matmul with transposed operands (A^T B and A B^T).
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @train_step(%x: tensor<3x4xf32>, %y: tensor<4x2xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param},
                      %v: tensor<2x5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e_h = tensor.empty() : tensor<4x5xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<3x4xf32>, tensor<3x5xf32>) outs(%z_h : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e_o = tensor.empty() : tensor<4x2xf32>
  %z_o = linalg.fill ins(%zero : f32) outs(%e_o : tensor<4x2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%h, %v : tensor<4x5xf32>, tensor<2x5xf32>) outs(%z_o : tensor<4x2xf32>) -> tensor<4x2xf32>
  %ed = tensor.empty() : tensor<4x2xf32>
  %d = linalg.sub ins(%o, %y : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ed : tensor<4x2xf32>) -> tensor<4x2xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x2xf32>, tensor<4x2xf32>) outs(%ed : tensor<4x2xf32>) -> tensor<4x2xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %loss : tensor<f32>
}
