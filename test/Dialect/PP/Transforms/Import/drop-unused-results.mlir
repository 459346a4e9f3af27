// RUN: pp-opt %s -split-input-file --pp-drop-unused-results | FileCheck %s

// The max a softmax subtracts, as torch-mlir imports it: the argmax index
// beside it is unused, so it goes with its destination and the index
// computation; the max stays.
// CHECK-LABEL: func.func @row_max(
// CHECK-SAME: %[[X:.*]]: tensor<16x4xf32>
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<16x4xf32>) outs(%[[INIT]] : tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = arith.maximumf %[[IN]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<16xf32>
// CHECK: return %[[MAX]] : tensor<16xf32>
// CHECK-NOT: i64
#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_max(%x: tensor<16x4xf32>) -> tensor<16xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<16xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %ei = tensor.empty() : tensor<16xi64>
  %initi = linalg.fill ins(%zero : i64) outs(%ei : tensor<16xi64>) -> tensor<16xi64>
  %m:2 = linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x4xf32>) outs(%init, %initi : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_i: i64):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %v = arith.maximumf %in, %out : f32
      %gt = arith.cmpf ogt, %in, %out : f32
      %i = arith.select %gt, %ji, %out_i : i64
      linalg.yield %v, %i : f32, i64
  } -> (tensor<16xf32>, tensor<16xi64>)
  return %m#0 : tensor<16xf32>
}

// -----

// An index that is used stays.
// CHECK-LABEL: func.func @argmax(
// CHECK: %{{.*}}:2 = linalg.generic
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, i64
#x = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @argmax(%x: tensor<16x4xf32>, %init: tensor<16xf32>, %initi: tensor<16xi64>) -> tensor<16xi64> {
  %m:2 = linalg.generic {indexing_maps = [#x, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x4xf32>) outs(%init, %initi : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_i: i64):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %v = arith.maximumf %in, %out : f32
      %gt = arith.cmpf ogt, %in, %out : f32
      %i = arith.select %gt, %ji, %out_i : i64
      linalg.yield %v, %i : f32, i64
  } -> (tensor<16xf32>, tensor<16xi64>)
  return %m#1 : tensor<16xi64>
}
