// RUN: pp-opt %s --pp-lower-random-seeds --pp-partition-stages | FileCheck %s

// A cut between a seed and the dropout that reads it: the seed is
// re-created in the stage that uses it (like a constant), not sent.
// CHECK-LABEL: func.func @train_step
// CHECK: pp.stage 0
// CHECK-NOT: pp.random_seed
// CHECK: pp.stage 1 (%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK: pp.random_seed 0
#id1 = affine_map<(d0) -> (d0)>
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
    %c6364136223846793005_i64 = arith.constant 6364136223846793005 : i64
    %c1442695040888963407_i64 = arith.constant 1442695040888963407 : i64
    %g = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %g[] : tensor<i64>
    %m = arith.muli %s, %c6364136223846793005_i64 : i64
    %next = arith.addi %m, %c1442695040888963407_i64 : i64
    %t = tensor.insert %next into %g[] : tensor<i64>
    ml_program.global_store @global_seed = %t : tensor<i64>
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %cut = pp.boundary %a : tensor<4xf32>
    %u = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%cut : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      %h = arith.muli %ii, %next : i64
      %f = arith.uitofp %h : i64 to f32
      %r = arith.mulf %f, %in : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    return %u : tensor<4xf32>
  }
}
