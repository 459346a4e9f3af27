// RUN: pp-opt %s --pp-partition-stages=num-stages=1 --pp-derive-backward | FileCheck %s

// A weight's pp.split reaches every stage-function argument that holds it
// and its gradient's result; unsplit weights and data carry none.
// CHECK-LABEL: func.func @train_step_s0_forward(
// CHECK-SAME: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}
// CHECK-SAME: tensor<16x4xf32> {pp.slot = #pp.slot<param 1>, pp.split = {{\[\[}}], [0]]}
// CHECK-SAME: tensor<4xf32> {pp.slot = #pp.slot<param 2>}
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: -> (tensor<16x4xf32> {pp.slot = #pp.slot<param_grad 1>, pp.split = {{\[\[}}], [0]]}, tensor<4xf32> {pp.slot = #pp.slot<param_grad 2>})
func.func @train_step(%x: tensor<8x16xf32>, %w: tensor<16x4xf32> {pp.param, pp.split = [[], [0]]}, %b: tensor<4xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %bb = linalg.broadcast ins(%b : tensor<4xf32>) outs(%e : tensor<8x4xf32>) dimensions = [0]
  %y = linalg.add ins(%mm, %bb : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%y : tensor<8x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<f32>
}
