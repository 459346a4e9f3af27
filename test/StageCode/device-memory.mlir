// pp-device-memory gives temporaries and dense copies to the GPU runtime,
// and rejects host memory that a kernel would read.
// RUN: pp-opt %s --split-input-file --pp-device-memory --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @temporaries
// CHECK-SAME: (%[[N:.*]]: index, %[[OUT:.*]]: memref<4xf32>, %[[VIEW:.*]]: memref<4xf32, strided<[2]>>)
// CHECK: %[[T:.*]] = gpu.alloc host_shared () : memref<4xf32>
// CHECK: %[[D:.*]] = gpu.alloc host_shared (%[[N]]) : memref<?xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[T]] : memref<4xf32>)
// CHECK: %[[S0:.*]] = gpu.wait async
// CHECK: %[[S1:.*]] = gpu.memcpy async [%[[S0]]] %[[OUT]], %[[T]] : memref<4xf32>, memref<4xf32>
// CHECK: gpu.wait [%[[S1]]]
// A strided copy stays (pp-expand-strided-copies makes it a kernel).
// CHECK: memref.copy %[[T]], %[[VIEW]]
// CHECK: %[[S2:.*]] = gpu.wait async
// CHECK: %[[S3:.*]] = gpu.dealloc async [%[[S2]]] %[[T]] : memref<4xf32>
// CHECK: gpu.wait [%[[S3]]]
// CHECK: gpu.dealloc async
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @temporaries(%n: index, %out: memref<4xf32>,
                       %view: memref<4xf32, strided<[2]>>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%t : memref<4xf32>)
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  memref.copy %t, %view : memref<4xf32> to memref<4xf32, strided<[2]>>
  memref.dealloc %t : memref<4xf32>
  memref.dealloc %d : memref<?xf32>
  return
}

// -----

memref.global "private" @scratch : memref<4xf32> = uninitialized

func.func @global(%out: memref<4xf32>) {
  // expected-error @+1 {{host memory that GPU code would read (lower without pp-static-scratch)}}
  %g = memref.get_global @scratch : memref<4xf32>
  // expected-note @+1 {{read here}}
  linalg.copy ins(%g : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

memref.global "private" constant @buffer : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func @constant(%out: memref<4xf32>) {
  // expected-error @+1 {{a constant tensor (a buffer of the model) that GPU code would read from host memory, which the CUDA target does not place on the device yet}}
  %g = memref.get_global @buffer : memref<4xf32>
  // expected-note @+1 {{read here}}
  linalg.copy ins(%g : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

func.func @stack(%x: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{host memory that GPU code would read}}
  %s = memref.alloca() : memref<4xf32>
  // expected-note @+1 {{read here}}
  linalg.fill ins(%zero : f32) outs(%s : memref<4xf32>)
  return
}
