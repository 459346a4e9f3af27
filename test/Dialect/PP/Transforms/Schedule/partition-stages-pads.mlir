// A padding value that tensor.pad's region yields, in two stages: each
// stage re-creates the constant; no scalar crosses the cut.
// RUN: pp-opt %s --pp-partition-stages | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[S0:.*]] = pp.stage 0 (%arg0) : (tensor<4xf32>) -> tensor<6xf32> {
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad
// CHECK: pp.stage 1 (%[[S0]], %arg1) : (tensor<6xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad
func.func @train_step(%x: tensor<4xf32>, %w: tensor<8xf32> {pp.param}) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  %cut = pp.boundary %p : tensor<6xf32>
  %q = tensor.pad %cut low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<6xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.mul ins(%q, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
