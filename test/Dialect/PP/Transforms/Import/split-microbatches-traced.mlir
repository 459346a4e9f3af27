// RUN: pp-opt %s --pp-split-microbatches=num-microbatches=4 | FileCheck %s

// A step traced at the micro-batch shape (pp.torch.export's microbatches)
// keeps its shapes: its batch of 4 rows is one micro-batch's.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %{{.*}}: tensor<4x3xf32>
// CHECK-SAME: -> tensor<4x2xf32>
// CHECK-SAME: pp.microbatches = 4 : i64
// CHECK: linalg.matmul {{.*}} -> tensor<4x2xf32>
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x2xf32> {pp.param}) -> tensor<4x2xf32> attributes {pp.microbatches = 4 : i64} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %h : tensor<4x2xf32>
}
