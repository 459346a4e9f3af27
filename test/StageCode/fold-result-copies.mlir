// RUN: pp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pp-fold-result-copies))' | FileCheck %s

// A saved value computed as [2, 3, 4] and returned as [6, 4] is computed in
// its out-param, seen as [2, 3, 4]; the copy goes.
// CHECK-LABEL: func.func @collapsed
// CHECK-SAME: %[[X:[^:]*]]: memref<2x3x4xf32>, %[[OUT:[^:]*]]: memref<6x4xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[T:.*]] = memref.expand_shape %[[OUT]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
// CHECK: linalg.exp ins(%[[X]] : memref<2x3x4xf32>) outs(%[[T]] : memref<2x3x4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @collapsed(%x: memref<2x3x4xf32>, %out: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) {
  %t = memref.alloc() : memref<2x3x4xf32>
  linalg.exp ins(%x : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
  %c = memref.collapse_shape %t [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  memref.copy %c, %out : memref<6x4xf32> to memref<6x4xf32>
  return
}

// -----

// Through an expand_shape and a collapse_shape, undone in reverse order;
// the other copies after it (into arguments) do not stop it, and the one
// from an argument stays.
// CHECK-LABEL: func.func @two_reshapes
// CHECK-SAME: %[[X:[^:]*]]: memref<6x4xf32>, %[[OUT:[^:]*]]: memref<2x12xf32> {{.*}}, %[[OUT2:[^:]*]]: memref<6x4xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[V:.*]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2]] output_shape [2, 3, 4] : memref<2x12xf32> into memref<2x3x4xf32>
// CHECK: %[[T:.*]] = memref.collapse_shape %[[V]] {{\[}}[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
// CHECK: linalg.exp ins(%[[X]] : memref<6x4xf32>) outs(%[[T]] : memref<6x4xf32>)
// CHECK-NOT: memref.copy %{{.*}}, %[[OUT]]
// CHECK: memref.copy %[[X]], %[[OUT2]]
// CHECK-NEXT: return
func.func @two_reshapes(%x: memref<6x4xf32>, %out: memref<2x12xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}, %out2: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 1>}) {
  %t = memref.alloc() : memref<6x4xf32>
  linalg.exp ins(%x : memref<6x4xf32>) outs(%t : memref<6x4xf32>)
  %e = memref.expand_shape %t [[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
  %c = memref.collapse_shape %e [[0], [1, 2]] : memref<2x3x4xf32> into memref<2x12xf32>
  memref.copy %c, %out : memref<2x12xf32> to memref<2x12xf32>
  memref.copy %x, %out2 : memref<6x4xf32> to memref<6x4xf32>
  return
}

// -----

// One temporary copied into two out-params: the first computes it, the
// second is copied from the first.
// CHECK-LABEL: func.func @copied_twice
// CHECK-SAME: %[[OUT:[^:]*]]: memref<6x4xf32> {{.*}}, %[[OUT2:[^:]*]]: memref<24xf32>
// CHECK: %[[T:.*]] = memref.expand_shape %[[OUT]]
// CHECK: %[[C2:.*]] = memref.collapse_shape %[[T]] {{\[}}[0, 1, 2]]
// CHECK: memref.copy %[[C2]], %[[OUT2]]
func.func @copied_twice(%x: memref<2x3x4xf32>, %out: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}, %out2: memref<24xf32> {pp.slot = #pp.slot<saved stage 0 value 1>}) {
  %t = memref.alloc() : memref<2x3x4xf32>
  linalg.exp ins(%x : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
  %c = memref.collapse_shape %t [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  %c2 = memref.collapse_shape %t [[0, 1, 2]] : memref<2x3x4xf32> into memref<24xf32>
  memref.copy %c, %out : memref<6x4xf32> to memref<6x4xf32>
  memref.copy %c2, %out2 : memref<24xf32> to memref<24xf32>
  return
}

// -----

// Left alone: an out-param in the slot of another argument (its buffer may
// be the input, which the function reads after the temporary is written),
// one without a slot, and a copy with other work after it.
// CHECK-LABEL: func.func @shared_slot
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @shared_slot(%x: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}, %out: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) {
  %t = memref.alloc() : memref<2x3x4xf32>
  %xe = memref.expand_shape %x [[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
  linalg.exp ins(%xe : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
  %c = memref.collapse_shape %t [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  memref.copy %c, %out : memref<6x4xf32> to memref<6x4xf32>
  return
}

// CHECK-LABEL: func.func @no_slot
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @no_slot(%x: memref<2x3x4xf32>, %out: memref<6x4xf32>) {
  %t = memref.alloc() : memref<2x3x4xf32>
  linalg.exp ins(%x : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
  %c = memref.collapse_shape %t [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  memref.copy %c, %out : memref<6x4xf32> to memref<6x4xf32>
  return
}

// CHECK-LABEL: func.func @written_after
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK: linalg.exp
func.func @written_after(%x: memref<2x3x4xf32>, %out: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) {
  %t = memref.alloc() : memref<2x3x4xf32>
  linalg.exp ins(%x : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
  %c = memref.collapse_shape %t [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
  memref.copy %c, %out : memref<6x4xf32> to memref<6x4xf32>
  linalg.exp ins(%x : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
  return
}
