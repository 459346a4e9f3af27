// RUN: pp-opt %s --pass-pipeline='builtin.module(func.func(pp-expand-strided-copies))' | FileCheck %s

// CHECK-LABEL: func.func @into_slice
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%arg0 : memref<4xf32>) outs(%arg1 : memref<4xf32, strided<[3], offset: ?>>)
func.func @into_slice(%src: memref<4xf32>, %dst: memref<4xf32, strided<[3], offset: ?>>) {
  memref.copy %src, %dst : memref<4xf32> to memref<4xf32, strided<[3], offset: ?>>
  return
}

// CHECK-LABEL: func.func @out_of_slice
// CHECK: linalg.copy ins(%arg0 : memref<2x2xf32, strided<[4, 1]>>) outs(%arg1 : memref<2x2xf32>)
func.func @out_of_slice(%src: memref<2x2xf32, strided<[4, 1]>>, %dst: memref<2x2xf32>) {
  memref.copy %src, %dst : memref<2x2xf32, strided<[4, 1]>> to memref<2x2xf32>
  return
}

// Dense to dense stays a memref.copy (a memcpy).
// CHECK-LABEL: func.func @dense
// CHECK: memref.copy %arg0, %arg1 : memref<8xf32> to memref<8xf32>
// CHECK-NOT: linalg.copy
func.func @dense(%src: memref<8xf32>, %dst: memref<8xf32>) {
  memref.copy %src, %dst : memref<8xf32> to memref<8xf32>
  return
}
