// RUN: pp-opt %s -split-input-file --pp-lower-random-seeds | FileCheck %s

// Two dropouts as torch-mlir imports them: each advance of the global
// seed becomes a pp.random_seed of its own, numbered in order, and the
// global goes.
// CHECK-NOT: ml_program
// CHECK-LABEL: func.func @train_step
// CHECK: %[[S0:.*]] = pp.random_seed 0
// CHECK: arith.muli %{{.*}}, %[[S0]] : i64
// CHECK: %[[S1:.*]] = pp.random_seed 1
// CHECK: arith.muli %{{.*}}, %[[S1]] : i64
// CHECK-NOT: ml_program
// CHECK-NOT: tensor.insert
#id = affine_map<(d0, d1) -> (d0, d1)>
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @train_step(%w: tensor<4x8xf32> {pp.param}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %c6364136223846793005_i64 = arith.constant 6364136223846793005 : i64
    %c1442695040888963407_i64 = arith.constant 1442695040888963407 : i64
    %e = tensor.empty() : tensor<4x8xf32>
    %g = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %g[] : tensor<i64>
    %m = arith.muli %s, %c6364136223846793005_i64 : i64
    %next = arith.addi %m, %c1442695040888963407_i64 : i64
    %t = tensor.insert %next into %g[] : tensor<i64>
    ml_program.global_store @global_seed = %t : tensor<i64>
    %u = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x8xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      %h = arith.muli %ii, %next : i64
      %f = arith.uitofp %h : i64 to f32
      linalg.yield %f : f32
    } -> tensor<4x8xf32>
    %g2 = ml_program.global_load @global_seed : tensor<i64>
    %s2 = tensor.extract %g2[] : tensor<i64>
    %m2 = arith.muli %s2, %c6364136223846793005_i64 : i64
    %next2 = arith.addi %m2, %c1442695040888963407_i64 : i64
    %t2 = tensor.insert %next2 into %g2[] : tensor<i64>
    ml_program.global_store @global_seed = %t2 : tensor<i64>
    %v = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x8xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 1 : index
      %ii = arith.index_cast %i : index to i64
      %h = arith.muli %ii, %next2 : i64
      %f = arith.uitofp %h : i64 to f32
      linalg.yield %f : f32
    } -> tensor<4x8xf32>
    return %u, %v : tensor<4x8xf32>, tensor<4x8xf32>
  }
}

