// RUN: pp-opt %s -split-input-file --pp-plan-tensor-parallel="vocabulary=true tensor-parallel=2" | FileCheck %s
// RUN: pp-opt %s -split-input-file --pp-plan-tensor-parallel="tensor-parallel=2" | FileCheck %s --check-prefix=OFF

// One-hot tokens times the table, a projection, then the head back to the
// vocabulary: the table splits on its rows (the vocabulary), the head on
// its columns; the projection between them is no column/row pair.
#tok = affine_map<(b, d, v) -> (b, v)>
#tab = affine_map<(b, d, v) -> (v, d)>
#emb = affine_map<(b, d, v) -> (b, d)>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<8x6xf32>,
// CHECK-SAME: %{{.*}}: tensor<6x4xf32> {pp.param, pp.split = {{\[\[}}0]]},
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {pp.param},
// CHECK-SAME: %{{.*}}: tensor<4x6xf32> {pp.param, pp.split = {{\[\[}}], [0]]})
// Without the option Megatron's plan pairs the table (column) with the
// projection (row), and leaves the head whole.
// OFF-LABEL: func.func @train_step(
// OFF-SAME: %{{.*}}: tensor<6x4xf32> {pp.param, pp.split = {{\[\[}}], [0]]},
// OFF-SAME: %{{.*}}: tensor<4x4xf32> {pp.param, pp.split = {{\[\[}}0]]},
// OFF-SAME: %{{.*}}: tensor<4x6xf32> {pp.param})
func.func @train_step(%tokens: tensor<8x6xf32>, %wte: tensor<6x4xf32> {pp.param}, %w: tensor<4x4xf32> {pp.param}, %whead: tensor<4x6xf32> {pp.param}) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %x = linalg.generic {indexing_maps = [#tok, #tab, #emb], iterator_types = ["parallel", "parallel", "reduction"]} ins(%tokens, %wte : tensor<8x6xf32>, tensor<6x4xf32>) outs(%z : tensor<8x4xf32>) {
  ^bb0(%t: f32, %w0: f32, %acc: f32):
    %p = arith.mulf %t, %w0 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x6xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %logits = linalg.matmul ins(%h, %whead : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z2 : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %logits : tensor<8x6xf32>
}

// -----

// Ids compared with the vocabulary loop's index (a gather as a sum): the
// table splits on the vocabulary all the same; pp-shard-stages offsets
// the index by each part's first row.
#ids = affine_map<(b, d, v) -> (b)>
#tab = affine_map<(b, d, v) -> (v, d)>
#emb = affine_map<(b, d, v) -> (b, d)>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<8xi64>,
// CHECK-SAME: %{{.*}}: tensor<6x4xf32> {pp.param, pp.split = {{\[\[}}0]]},
// CHECK-SAME: %{{.*}}: tensor<4x6xf32> {pp.param, pp.split = {{\[\[}}], [0]]})
func.func @train_step(%ids: tensor<8xi64>, %wte: tensor<6x4xf32> {pp.param}, %whead: tensor<4x6xf32> {pp.param}) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %x = linalg.generic {indexing_maps = [#ids, #tab, #emb], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ids, %wte : tensor<8xi64>, tensor<6x4xf32>) outs(%z : tensor<8x4xf32>) {
  ^bb0(%id: i64, %w0: f32, %acc: f32):
    %v = linalg.index 2 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %id, %vi : i64
    %p = arith.select %hit, %w0, %zero : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x6xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %logits = linalg.matmul ins(%x, %whead : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z2 : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %logits : tensor<8x6xf32>
}

// -----

// A head the user split keeps its split; the table is still planned.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<6x4xf32> {pp.param, pp.split = {{\[\[}}0]]},
// CHECK-SAME: %{{.*}}: tensor<4x6xf32> {pp.param, pp.split = {{\[\[}}0]]})
#tok = affine_map<(b, d, v) -> (b, v)>
#tab = affine_map<(b, d, v) -> (v, d)>
#emb = affine_map<(b, d, v) -> (b, d)>
func.func @train_step(%tokens: tensor<8x6xf32>, %wte: tensor<6x4xf32> {pp.param}, %whead: tensor<4x6xf32> {pp.param, pp.split = [[0]]}) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %x = linalg.generic {indexing_maps = [#tok, #tab, #emb], iterator_types = ["parallel", "parallel", "reduction"]} ins(%tokens, %wte : tensor<8x6xf32>, tensor<6x4xf32>) outs(%z : tensor<8x4xf32>) {
  ^bb0(%t: f32, %w0: f32, %acc: f32):
    %p = arith.mulf %t, %w0 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x6xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %logits = linalg.matmul ins(%x, %whead : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z2 : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %logits : tensor<8x6xf32>
}
