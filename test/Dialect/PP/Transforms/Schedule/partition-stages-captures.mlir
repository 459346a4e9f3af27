// Values that linalg bodies capture from the step are carried from earlier
// stages or re-created when cheap.
// RUN: pp-opt %s --pp-partition-stages | FileCheck %s

#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @train_step
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4xf32>
  // CHECK: %[[S0:.*]]:2 = pp.stage 0 (%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, f32)
  // CHECK: %[[A:.*]] = linalg.add
  // CHECK: %[[T:.*]] = tensor.extract %[[A]]
  // CHECK: pp.yield %[[A]], %[[T]] : tensor<4xf32>, f32
  %a = linalg.add ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %t = tensor.extract %a[%c0] : tensor<4xf32>
  %cut = pp.boundary %a : tensor<4xf32>
  // CHECK: pp.stage 1 (%[[S0]]#0, %[[S0]]#1) : (tensor<4xf32>, f32) -> tensor<4xf32> {
  // CHECK: ^bb0(%[[IN:.*]]: tensor<4xf32>, %[[CAP:.*]]: f32):
  // CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: linalg.generic
  // CHECK: arith.maximumf %{{.*}}, %[[Z]] : f32
  // CHECK: arith.addf %{{.*}}, %[[CAP]] : f32
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%cut : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %in, %zero : f32
      %r = arith.addf %m, %t : f32
      linalg.yield %r : f32
  } -> tensor<4xf32>
  return %g : tensor<4xf32>
}
