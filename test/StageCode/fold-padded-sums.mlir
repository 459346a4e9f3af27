// RUN: pp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pp-fold-padded-sums))' | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>

// The gradient of a split into three: the pieces side by side in one empty
// tensor, with no zeros and no sum.
// CHECK-LABEL: func.func @covering
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x2xf32>, %[[B:[^:]*]]: tensor<4x2xf32>, %[[C:[^:]*]]: tensor<4x2xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x6xf32>
// CHECK: %[[S1:.*]] = tensor.insert_slice %[[C]] into %[[E]][0, 4] [4, 2] [1, 1]
// CHECK: %[[S2:.*]] = tensor.insert_slice %[[B]] into %[[S1]][0, 2] [4, 2] [1, 1]
// CHECK: %[[S3:.*]] = tensor.insert_slice %[[A]] into %[[S2]][0, 0] [4, 2] [1, 1]
// CHECK-NOT: linalg.generic
// CHECK: return %[[S3]]
func.func @covering(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>, %c: tensor<4x2xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %pc = tensor.insert_slice %c into %z[0, 4] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
  %pb = tensor.insert_slice %b into %z[0, 2] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
  %pa = tensor.insert_slice %a into %z[0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%pc, %pb, %pa : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %w: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %w : f32
    linalg.yield %t : f32
  } -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Slices that leave part of the tensor out go into the zeros.
// CHECK-LABEL: func.func @partial
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[S1:.*]] = tensor.insert_slice %{{.*}} into %[[Z]][0, 0] [4, 2]
// CHECK: %[[S2:.*]] = tensor.insert_slice %{{.*}} into %[[S1]][0, 4] [4, 2]
// CHECK-NOT: linalg.generic
// CHECK: return %[[S2]]
func.func @partial(%a: tensor<4x2xf32>, %b: tensor<4x2xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %pa = tensor.insert_slice %a into %z[0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
  %pb = tensor.insert_slice %b into %z[0, 4] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%pa, %pb : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %y, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Left alone: overlapping slices (their sum adds the overlap), slices padded
// with ones, and a body that is not a plain sum.
// CHECK-LABEL: func.func @overlapping
// CHECK: linalg.generic
func.func @overlapping(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %pa = tensor.insert_slice %a into %z[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x6xf32>
  %pb = tensor.insert_slice %b into %z[0, 2] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x6xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%pa, %pb : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @padded_with_ones
// CHECK: linalg.generic
func.func @padded_with_ones(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %pa = tensor.insert_slice %a into %z[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %pb = tensor.insert_slice %b into %z[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%pa, %pb : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @not_a_sum
// CHECK: linalg.generic
// CHECK: arith.mulf
func.func @not_a_sum(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %pa = tensor.insert_slice %a into %z[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %pb = tensor.insert_slice %b into %z[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%pa, %pb : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}
