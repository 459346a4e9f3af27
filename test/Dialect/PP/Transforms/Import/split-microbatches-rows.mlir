// RUN: pp-opt %s -split-input-file --pp-split-microbatches=num-microbatches=2 | FileCheck %s

// Rows computed one by one, and a mean loss over the whole batch: a sum over
// the batch times a constant, which each micro-batch computes over its rows
// (their sum over micro-batches is the whole batch's mean).
#rows = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#scalar = affine_map<() -> ()>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[T:.*]]: tensor<2x2xf32> {pp.target}
// CHECK: linalg.matmul ins(%[[X]], %{{.*}} : tensor<2x3xf32>, tensor<3x2xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}} : tensor<2x2xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[CST:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<f32>)
// CHECK: arith.mulf %{{.*}}, %[[CST]] : f32
// CHECK: return %{{.*}} : tensor<f32>
func.func @train_step(%x: tensor<4x3xf32>, %t: tensor<4x2xf32> {pp.target}, %w: tensor<3x2xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%y, %t : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %q = arith.mulf %s, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x2xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#rows, #all], iterator_types = ["reduction", "reduction"]} ins(%d : tensor<4x2xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %eighth = arith.constant 0.125 : f32
  %mean = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%sum : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %eighth : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %mean : tensor<f32>
}

// -----

// F.cross_entropy's mean over the targets it counts: a ratio of two sums
// over the batch, each micro-batch's own as the loss.
#row = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
#scalar = affine_map<() -> ()>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<2xf32>
// CHECK: arith.divf
func.func @train_step(%nll: tensor<4xf32>, %mask: tensor<4xi1> {pp.target}, %w: tensor<f32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : i64
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["reduction"]} ins(%nll : tensor<4xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %ei = tensor.empty() : tensor<i64>
  %zi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<i64>) -> tensor<i64>
  %count = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["reduction"]} ins(%mask : tensor<4xi1>) outs(%zi : tensor<i64>) {
  ^bb0(%m: i1, %acc: i64):
    %one = arith.extui %m : i1 to i64
    %s = arith.addi %one, %acc : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  %loss = linalg.generic {indexing_maps = [#scalar, #scalar, #scalar], iterator_types = []} ins(%sum, %count : tensor<f32>, tensor<i64>) outs(%es : tensor<f32>) {
  ^bb0(%s: f32, %n: i64, %o: f32):
    %f = arith.sitofp %n : i64 to f32
    %m = arith.divf %s, %f : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
