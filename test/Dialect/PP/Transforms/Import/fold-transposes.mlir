// RUN: pp-opt %s -split-input-file --pp-fold-transposes | FileCheck %s
// The weight's gradient comes out in the weight's layout: no transpose in
// the backward either.
// RUN: pp-opt %s --pp-fold-transposes --pp-split-microbatches=num-microbatches=1 --pp-partition-stages=num-stages=1 --pp-derive-backward | FileCheck %s --check-prefix=DERIVED

// nn.Linear as torch-mlir imports it: the matmul reads the [out, in] weight
// through the transposed map, and the transpose is gone.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[XA:[a-z0-9]+]]: tensor<8x4xf32>, %[[WA:[a-z0-9]+]]: tensor<6x4xf32> {pp.param}
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[XA]], %[[WA]] : tensor<8x4xf32>, tensor<6x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.transpose
// DERIVED-LABEL: func.func @train_step_s0_backward(
// DERIVED-NOT: linalg.transpose
// DERIVED-NOT: tensor<4x6xf32>
// DERIVED: return
func.func @train_step(%x: tensor<8x4xf32>, %w: tensor<6x4xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x6xf32>
  %t = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%et : tensor<4x6xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.matmul ins(%x, %t : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<8x6xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %a : f32
    %r = arith.addf %o, %q : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A transpose written as a generic that copies its input, read by a batch
// of products over a permuted operand: the map composes both permutations.
// A transpose something else also reads stays for that reader.
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @generic_copy(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x3x5xf32>, %[[BA:[a-z0-9]+]]: tensor<2x4x5xf32>
// CHECK: %[[T:.*]] = linalg.generic
// CHECK-SAME: ins(%[[BA]] : tensor<2x4x5xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #[[B]], #{{[a-z0-9]+}}]
// CHECK-SAME: ins(%[[A]], %[[BA]] : tensor<2x3x5xf32>, tensor<2x4x5xf32>)
// CHECK: return %[[P]], %[[T]]
func.func @generic_copy(%a: tensor<2x3x5xf32>, %b: tensor<2x4x5xf32>) -> (tensor<2x3x4xf32>, tensor<2x5x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<2x5x4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, j, i)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b : tensor<2x4x5xf32>) outs(%et : tensor<2x5x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x5x4xf32>
  %e = tensor.empty() : tensor<2x3x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %p = linalg.batch_matmul ins(%a, %t : tensor<2x3x5xf32>, tensor<2x5x4xf32>) outs(%z : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %p, %t : tensor<2x3x4xf32>, tensor<2x5x4xf32>
}

// -----

// Not a transpose (the body computes), not a contraction (an elementwise
// reader): both left alone.
// CHECK-LABEL: func.func @left_alone(
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: linalg.matmul
// CHECK: linalg.transpose
// CHECK: linalg.add
func.func @left_alone(%x: tensor<8x4xf32>, %w: tensor<6x4xf32>) -> (tensor<8x6xf32>, tensor<4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x6xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<6x4xf32>) outs(%et : tensor<4x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %ex = math.exp %v : f32
    linalg.yield %ex : f32
  } -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.matmul ins(%x, %t : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
  %t2 = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%et : tensor<4x6xf32>) permutation = [1, 0]
  %s = linalg.add ins(%t2, %t2 : tensor<4x6xf32>, tensor<4x6xf32>) outs(%et : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y, %s : tensor<8x6xf32>, tensor<4x6xf32>
}
