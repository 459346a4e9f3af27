// RUN: pp-opt %s -split-input-file --pp-plan-tensor-parallel | FileCheck %s

// Megatron's MLP: the products pair column then row; the first's bias
// splits with it, the second's stays whole.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<8x16xf32>,
// CHECK-SAME: %{{.*}}: tensor<16x32xf32> {pp.param, pp.split = {{\[\[}}], [0]]},
// CHECK-SAME: %{{.*}}: tensor<32xf32> {pp.param, pp.split = {{\[\[}}0]]},
// CHECK-SAME: %{{.*}}: tensor<32x4xf32> {pp.param, pp.split = {{\[\[}}0]]},
// CHECK-SAME: %{{.*}}: tensor<4xf32> {pp.param})
func.func @train_step(%x: tensor<8x16xf32>, %w0: tensor<16x32xf32> {pp.param}, %b0: tensor<32xf32> {pp.param}, %w1: tensor<32x4xf32> {pp.param}, %b1: tensor<4xf32> {pp.param}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x32xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm0 = linalg.matmul ins(%x, %w0 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %bb0 = linalg.broadcast ins(%b0 : tensor<32xf32>) outs(%e0 : tensor<8x32xf32>) dimensions = [0]
  %pre0 = linalg.add ins(%mm0, %bb0 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h0 = linalg.max ins(%pre0, %z0 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm1 = linalg.matmul ins(%h0, %w1 : tensor<8x32xf32>, tensor<32x4xf32>) outs(%z1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %bb1 = linalg.broadcast ins(%b1 : tensor<4xf32>) outs(%e1 : tensor<8x4xf32>) dimensions = [0]
  %out = linalg.add ins(%mm1, %bb1 : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %out : tensor<8x4xf32>
}

// -----

// A pair with a weight the user split is the user's: left as it is.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<16x32xf32> {pp.param, pp.split = {{\[\[}}0]]},
// CHECK-SAME: tensor<32x4xf32> {pp.param})
func.func @train_step(%x: tensor<8x16xf32>, %w0: tensor<16x32xf32> {pp.param, pp.split = [[0]]}, %w1: tensor<32x4xf32> {pp.param}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x32xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm0 = linalg.matmul ins(%x, %w0 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm1 = linalg.matmul ins(%mm0, %w1 : tensor<8x32xf32>, tensor<32x4xf32>) outs(%z1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %mm1 : tensor<8x4xf32>
}
