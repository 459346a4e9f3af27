// RUN: pp-opt %s --pass-pipeline='builtin.module(func.func(pp-clone-shared-fills))' | FileCheck %s
// RUN: pp-opt %s --pass-pipeline='builtin.module(func.func(pp-clone-shared-fills),one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUF
// RUN: pp-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=SHARED

// Each matmul gets its own zero fill, right before it.
// CHECK-LABEL: func.func @two_gemms
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[A:.*]] = linalg.matmul ins(%arg0, %arg2 : {{.*}}) outs(%[[Z0]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[B:.*]] = linalg.matmul ins(%arg1, %arg2 : {{.*}}) outs(%[[Z1]] : tensor<4x3xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return %[[A]], %[[B]]
// After bufferization each result is filled in its own buffer, not copied.
// BUF-LABEL: func.func @two_gemms
// BUF-NOT: memref.copy
// BUF: return
// SHARED-LABEL: func.func @two_gemms
// SHARED: memref.copy
func.func @two_gemms(%x: tensor<4x5xf32>, %y: tensor<4x5xf32>, %w: tensor<5x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x5xf32>, tensor<5x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = linalg.matmul ins(%y, %w : tensor<4x5xf32>, tensor<5x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %a, %b : tensor<4x3xf32>, tensor<4x3xf32>
}

// The loop's init gets a clone; the use inside the loop body keeps the
// original, since a clone there would fill once per iteration.
// CHECK-LABEL: func.func @loop_use
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK-NEXT: %[[INIT:.*]] = linalg.fill
// CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK-NEXT: linalg.matmul ins({{.*}}) outs(%[[Z]] : tensor<4x3xf32>)
func.func @loop_use(%x: tensor<4x5xf32>, %w: tensor<5x3xf32>, %n: index) -> tensor<4x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = scf.for %i = %i0 to %n step %i1 iter_args(%acc = %z) -> tensor<4x3xf32> {
    %m = linalg.matmul ins(%x, %w : tensor<4x5xf32>, tensor<5x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
    %s = linalg.add ins(%m, %acc : tensor<4x3xf32>, tensor<4x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
    scf.yield %s : tensor<4x3xf32>
  }
  return %r : tensor<4x3xf32>
}
