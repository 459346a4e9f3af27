// The pp-opt route for TOSA models documented in docs/Autodiff.md: lower to
// linalg, tensor and arith, then split, partition and differentiate.
// RUN: pp-opt %s --pass-pipeline='builtin.module(tosa-to-linalg-pipeline,func.func(tosa-to-tensor,tosa-to-arith,convert-elementwise-to-linalg),canonicalize)' \
// RUN: | pp-opt --pp-split-microbatches=num-microbatches=2 --pp-partition-stages=num-stages=1 --pp-derive-backward \
// RUN: | FileCheck %s
// CHECK-LABEL: func.func @train_step_s0_forward(
// CHECK-SAME: tensor<2x3xf32> {pp.slot = #pp.slot<data 0>}
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: -> (tensor<3x5xf32> {pp.slot = #pp.slot<param_grad 1>})
// CHECK: linalg.generic
// CHECK-NOT: tosa.
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x5xf32> {pp.param}) -> tensor<f32> {
  %s13 = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s35 = tosa.const_shape {values = dense<[1, 3, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %x3 = tosa.reshape %x, %s13 : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %w3 = tosa.reshape %w, %s35 : (tensor<3x5xf32>, !tosa.shape<3>) -> tensor<1x3x5xf32>
  %h = tosa.matmul %x3, %w3, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x5xf32>
  %m = tosa.reduce_max %h {axis = 2 : i32} : (tensor<1x4x5xf32>) -> tensor<1x4x1xf32>
  %d = tosa.sub %h, %m : (tensor<1x4x5xf32>, tensor<1x4x1xf32>) -> tensor<1x4x5xf32>
  %e = tosa.exp %d : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %l1 = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<1x4x5xf32>) -> tensor<1x1x5xf32>
  %l2 = tosa.reduce_sum %l1 {axis = 2 : i32} : (tensor<1x1x5xf32>) -> tensor<1x1x1xf32>
  %loss = tosa.reshape %l2, %s0 : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %loss : tensor<f32>
}
