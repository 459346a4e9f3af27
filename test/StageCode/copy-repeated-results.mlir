// RUN: pp-opt %s --pass-pipeline='builtin.module(func.func(pp-copy-repeated-results))' | FileCheck %s

// The second return of %h gets its own copy; %s, returned once, does not.
// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[H:.*]]: tensor<4x3xf32>, %[[S:.*]]: tensor<4xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[C:.*]] = linalg.copy ins(%[[H]] : tensor<4x3xf32>) outs(%[[E]] : tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NOT: linalg.copy
// CHECK: return %[[H]], %[[S]], %[[C]]
func.func @twice(%h: tensor<4x3xf32>, %s: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>) {
  return %h, %s, %h : tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>
}

// Three returns of one value: two copies, each its own.
// CHECK-LABEL: func.func @thrice
// CHECK: %[[C1:.*]] = linalg.copy
// CHECK: %[[C2:.*]] = linalg.copy
// CHECK: return %arg0, %[[C1]], %[[C2]]
func.func @thrice(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  return %x, %x, %x : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// Scalars repeat freely: they are not buffers.
// CHECK-LABEL: func.func @scalars
// CHECK-NOT: linalg.copy
// CHECK: return %arg0, %arg0 : f32, f32
func.func @scalars(%x: f32) -> (f32, f32) {
  return %x, %x : f32, f32
}
