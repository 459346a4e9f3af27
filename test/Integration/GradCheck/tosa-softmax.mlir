// Finite-difference check of a model written in TOSA, which pp-compile
// lowers with tosa-to-linalg first: matmul, a broadcast bias, tanh and erf,
// a softmax from reduce_max, exp, reduce_sum and reciprocal, and reshapes.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x5xf32> {pp.target},
                      %w: tensor<1x3x5xf32> {pp.param},
                      %b: tensor<1x1x5xf32> {pp.param}) -> tensor<f32> {
  %s43 = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s45 = tosa.const_shape {values = dense<[1, 4, 5]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %x3 = tosa.reshape %x, %s43 : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %h = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x5xf32>
  %hb = tosa.add %h, %b : (tensor<1x4x5xf32>, tensor<1x1x5xf32>) -> tensor<1x4x5xf32>
  %th = tosa.tanh %hb : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %er = tosa.erf %hb : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %a = tosa.add %th, %er : (tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %m = tosa.reduce_max %a {axis = 2 : i32} : (tensor<1x4x5xf32>) -> tensor<1x4x1xf32>
  %d = tosa.sub %a, %m : (tensor<1x4x5xf32>, tensor<1x4x1xf32>) -> tensor<1x4x5xf32>
  %e = tosa.exp %d : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<1x4x5xf32>) -> tensor<1x4x1xf32>
  %r = tosa.reciprocal %sum : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<1x4x5xf32>, tensor<1x4x1xf32>, tensor<1xi8>) -> tensor<1x4x5xf32>
  %y3 = tosa.reshape %y, %s45 : (tensor<4x5xf32>, !tosa.shape<3>) -> tensor<1x4x5xf32>
  %diff = tosa.sub %p, %y3 : (tensor<1x4x5xf32>, tensor<1x4x5xf32>) -> tensor<1x4x5xf32>
  %sq = tosa.mul %diff, %diff, %shift : (tensor<1x4x5xf32>, tensor<1x4x5xf32>, tensor<1xi8>) -> tensor<1x4x5xf32>
  %l1 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<1x4x5xf32>) -> tensor<1x1x5xf32>
  %l2 = tosa.reduce_sum %l1 {axis = 2 : i32} : (tensor<1x1x5xf32>) -> tensor<1x1x1xf32>
  %loss = tosa.reshape %l2, %s0 : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %loss : tensor<f32>
}
