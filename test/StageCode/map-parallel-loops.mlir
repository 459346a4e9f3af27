// pp-map-parallel-loops tiles parallel loops into thread blocks along their
// contiguous dimension; convert-parallel-loops-to-gpu then builds launches
// whose extents the CHECK lines read.
// RUN: pp-opt %s --pp-map-parallel-loops --convert-parallel-loops-to-gpu --canonicalize | FileCheck %s
// RUN: pp-opt %s --pp-map-parallel-loops="block-size=64" --convert-parallel-loops-to-gpu --canonicalize | FileCheck %s --check-prefix=SMALL
// RUN: not pp-opt %s --pp-map-parallel-loops="block-size=96" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: block-size must be a power of two between 1 and 1024, got 96

// 128 columns on threadIdx.x, 2 rows per block on threadIdx.y, 32 blocks
// along y: every row of the 64 is covered once.
// CHECK-LABEL: func.func @rows
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C32]], {{.*}} = %[[C1]]) threads({{.*}}) in ({{.*}} = %[[C128]], {{.*}} = %[[C2]], {{.*}} = %[[C1]])
// CHECK-NOT: scf.for
// SMALL-LABEL: func.func @rows
// SMALL: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c64, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1)
func.func @rows(%a: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<64x128xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%i, %j] : memref<64x128xf32>
    scf.reduce
  }
  return
}

// 1000 elements: 4 blocks of 256 threads, the last 24 threads guarded off.
// CHECK-LABEL: func.func @vector
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C1000:.*]] = arith.constant 1000 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C4]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C256]],
// CHECK: %[[I:.*]] = arith.addi %[[TX]],
// CHECK: arith.cmpi ult, %{{.*}}, %[[C1000]] : index
// CHECK: scf.if
func.func @vector(%a: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<1000xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %a[%i] : memref<1000xf32>
    scf.reduce
  }
  return
}

// Three dimensions: 4 columns by 64 rows per block, blocks along y (1094)
// and z (the batch of 2).
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1094, {{.*}} = %c2) threads({{.*}}) in ({{.*}} = %c4, {{.*}} = %c64, {{.*}} = %c1)
func.func @batched(%a: memref<2x70000x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %n = arith.constant 70000 : index
  scf.parallel (%b, %i, %j) = (%c0, %c0, %c0) to (%c2, %n, %c4) step (%c1, %c1, %c1) {
    %v = memref.load %a[%b, %i, %j] : memref<2x70000x4xf32>
    memref.store %v, %a[%b, %i, %j] : memref<2x70000x4xf32>
    scf.reduce
  }
  return
}

// 70000 rows of 256 do not fit in grid y: each thread loops over them.
// CHECK-LABEL: func.func @tall
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for %{{.*}} = %c0 to %c70000 step %c1
func.func @tall(%a: memref<70000x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = arith.constant 70000 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c256) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<70000x256xf32>
    memref.store %v, %a[%i, %j] : memref<70000x256xf32>
    scf.reduce
  }
  return
}
