// RUN: pp-opt %s --pass-pipeline='builtin.module(func.func(pp-clone-shared-fills))' | FileCheck %s
// RUN: pp-opt %s --pass-pipeline='builtin.module(func.func(pp-clone-shared-fills),one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUF
// RUN: pp-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=SHARED

// Each matmul gets its own zero fill, right before it, into its own empty
// tensor.
// CHECK-LABEL: func.func @two_gemms
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[A:.*]] = linalg.matmul ins(%arg0, %arg2 : {{.*}}) outs(%[[Z0]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[B:.*]] = linalg.matmul ins(%arg1, %arg2 : {{.*}}) outs(%[[Z1]] : tensor<4x3xf32>)
// CHECK-NOT: linalg.fill
// CHECK-NOT: tensor.empty
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
// CHECK-NEXT: tensor.empty
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

// An empty tensor CSE shared between elementwise ops is cloned right before
// each; one used inside a loop body stays where it is.
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[N:.*]] = linalg.negf ins(%arg0 : tensor<8xf32>) outs(%[[E0]] : tensor<8xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.exp ins(%[[N]] : tensor<8xf32>) outs(%[[E1]] : tensor<8xf32>)
// CHECK-NOT: tensor.empty
// BUF-LABEL: func.func @shared_empty
// BUF-COUNT-2: memref.alloc()
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_empty(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %n = linalg.negf ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %x2 = linalg.exp ins(%n : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %n, %x2 : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @empty_in_loop
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[INIT:.*]] = linalg.negf ins(%arg0 : tensor<8xf32>) outs(%[[E0]] : tensor<8xf32>)
// CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK-NEXT: linalg.negf ins(%{{.*}} : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK-NOT: tensor.empty
func.func @empty_in_loop(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.negf ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = scf.for %i = %i0 to %n step %i1 iter_args(%acc = %init) -> tensor<8xf32> {
    %m = linalg.negf ins(%acc : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %s = linalg.add ins(%m, %acc : tensor<8xf32>, tensor<8xf32>) outs(%acc : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
