// RUN: pp-opt %s --split-input-file --pp-parallelize-loop-nests="min-work=4096" | FileCheck %s

// 64 rows of 64 lanes (8192 element operations: a load and a store per
// row): the marked row loop runs in parallel, and no mark is left.
// CHECK-LABEL: func.func @large
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: vector.load %{{.*}}[%[[I]], %{{.*}}] : memref<64x64xf32>, vector<64xf32>
// CHECK-NEXT: vector.store
// CHECK-NEXT: scf.reduce
// CHECK-NOT: parallel_iterator
// CHECK-NOT: scf.for
// CHECK: return
func.func @large(%a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %v = vector.load %a[%i, %c0] : memref<64x64xf32>, vector<64xf32>
    vector.store %v, %b[%i, %c0] : memref<64x64xf32>, vector<64xf32>
  } {parallel_iterator}
  return
}

// -----

// 16 rows of 64 lanes (2048): too little to repay a fork and join.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-NOT: parallel_iterator
// CHECK: return
func.func @small(%a: memref<16x64xf32>, %b: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = vector.load %a[%i, %c0] : memref<16x64xf32>, vector<64xf32>
    vector.store %v, %b[%i, %c0] : memref<16x64xf32>, vector<64xf32>
  } {parallel_iterator}
  return
}

// -----

// The same work in an unmarked loop (a reduction's, say) stays serial; of
// two marked loops only the outer runs in parallel, its trip count times
// the inner's work (4 x 32 x 2 x 16 lanes = 4096) counting.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @unmarked(%a: memref<64x64xf32>, %b: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %v = vector.load %a[%i, %c0] : memref<64x64xf32>, vector<64xf32>
    vector.store %v, %b[%i, %c0] : memref<64x64xf32>, vector<64xf32>
  }
  return
}
func.func @nested(%a: memref<4x32x16xf32>, %b: memref<4x32x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %v = vector.load %a[%i, %j, %c0] : memref<4x32x16xf32>, vector<16xf32>
      vector.store %v, %b[%i, %j, %c0] : memref<4x32x16xf32>, vector<16xf32>
    } {parallel_iterator}
  } {parallel_iterator}
  return
}

// -----

// A marked loop of one iteration leaves the parallelism to the loop inside.
// CHECK-LABEL: func.func @single_trip
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.parallel
func.func @single_trip(%a: memref<1x64x64xf32>, %b: memref<1x64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %k = %c0 to %c1 step %c1 {
    scf.for %i = %c0 to %c64 step %c1 {
      %v = vector.load %a[%k, %i, %c0] : memref<1x64x64xf32>, vector<64xf32>
      vector.store %v, %b[%k, %i, %c0] : memref<1x64x64xf32>, vector<64xf32>
    } {parallel_iterator}
  } {parallel_iterator}
  return
}
