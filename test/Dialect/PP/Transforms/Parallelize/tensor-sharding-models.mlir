// RUN: pp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(sharding-propagation{traversal=forward-backward},shard-partition,canonicalize))' | FileCheck %s

// pp's sharding rules for the reshapes and slices of PyTorch's lowering
// (TensorShardingModels.cpp), run through upstream propagation and
// partitioning.

// A split on the outermost dimension of a merged group stays a split.
shard.grid @pp_tp(shape = 2)
// CHECK-LABEL: func.func @collapse_outer
// CHECK-SAME: %[[X:.*]]: tensor<2x8x16xf32>) -> tensor<16x16xf32>
// CHECK-NOT: shard.all_gather
// CHECK: tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x8x16xf32> into tensor<16x16xf32>
func.func @collapse_outer(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
  %s = shard.sharding @pp_tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8x16xf32>
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
  return %c : tensor<32x16xf32>
}

// -----

// A split on an inner dimension of a merged group is gathered first: its
// blocks are not blocks of the merged dimension.
shard.grid @pp_tp(shape = 2)
// CHECK-LABEL: func.func @collapse_inner
// CHECK: shard.all_gather
// CHECK: tensor.collapse_shape {{.*}} : tensor<4x8x16xf32> into tensor<32x16xf32>
func.func @collapse_inner(%x: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
  %s = shard.sharding @pp_tp split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8x16xf32>
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x8x16xf32> into tensor<32x16xf32>
  %r = shard.sharding @pp_tp split_axes = [[]] : !shard.sharding
  %cr = shard.shard %c to %r : tensor<32x16xf32>
  return %cr : tensor<32x16xf32>
}

// -----

// Features split in blocks of whole heads: the heads dimension carries the
// split (a size-1 dimension before it would not).
shard.grid @pp_tp(shape = 2)
// CHECK-LABEL: func.func @expand_heads
// CHECK-SAME: %[[X:.*]]: tensor<8x16xf32>) -> tensor<8x1x1x16xf32>
// CHECK-NOT: shard.all_gather
// CHECK: tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2, 3]] output_shape [8, 1, 1, 16] : tensor<8x16xf32> into tensor<8x1x1x16xf32>
func.func @expand_heads(%x: tensor<8x32xf32>) -> tensor<8x1x2x16xf32> {
  %s = shard.sharding @pp_tp split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x32xf32>
  %e = tensor.expand_shape %xs [[0], [1, 2, 3]] output_shape [8, 1, 2, 16] : tensor<8x32xf32> into tensor<8x1x2x16xf32>
  return %e : tensor<8x1x2x16xf32>
}

// -----

// A slice keeps the split of a dimension it takes whole, and gathers one
// it cuts (a fused projection's Q, K, V).
shard.grid @pp_tp(shape = 2)
// CHECK-LABEL: func.func @slices
// CHECK-SAME: %[[X:.*]]: tensor<4x48xf32>, %[[Y:.*]]: tensor<2x48xf32>
// CHECK: %[[WHOLE:.*]] = shard.all_gather %[[X]] on @pp_tp grid_axes = [0] gather_axis = 1
// CHECK: tensor.extract_slice %[[WHOLE]][0, 32] [4, 32] [1, 1] : tensor<4x96xf32> to tensor<4x32xf32>
// CHECK: tensor.extract_slice %[[Y]][0, 8] [2, 16] [1, 1] : tensor<2x48xf32> to tensor<2x16xf32>
func.func @slices(%x: tensor<4x96xf32>, %y: tensor<4x48xf32>) -> (tensor<4x32xf32>, tensor<4x16xf32>) {
  %s = shard.sharding @pp_tp split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x96xf32>
  %k = tensor.extract_slice %xs[0, 32] [4, 32] [1, 1] : tensor<4x96xf32> to tensor<4x32xf32>
  %r = shard.sharding @pp_tp split_axes = [[0]] : !shard.sharding
  %ys = shard.shard %y to %r : tensor<4x48xf32>
  %h = tensor.extract_slice %ys[0, 8] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
  return %k, %h : tensor<4x32xf32>, tensor<4x16xf32>
}

// -----

// A concatenation keeps the split of a dimension it does not join (the
// heads of rotary embeddings' halves), and its joined dimension whole.
shard.grid @pp_tp(shape = 2)
// CHECK-LABEL: func.func @concat_heads
// CHECK-SAME: %[[A:.*]]: tensor<2x1x4xf32>, %[[B:.*]]: tensor<2x1x4xf32>) -> tensor<2x1x8xf32>
// CHECK-NOT: shard.all_gather
// CHECK: tensor.concat dim(2) %[[A]], %[[B]] : (tensor<2x1x4xf32>, tensor<2x1x4xf32>) -> tensor<2x1x8xf32>
func.func @concat_heads(%a: tensor<2x2x4xf32>, %b: tensor<2x2x4xf32>) -> tensor<2x2x8xf32> {
  %s = shard.sharding @pp_tp split_axes = [[], [0]] : !shard.sharding
  %as = shard.shard %a to %s : tensor<2x2x4xf32>
  %bs = shard.shard %b to %s : tensor<2x2x4xf32>
  %c = tensor.concat dim(2) %as, %bs : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x2x8xf32>
  return %c : tensor<2x2x8xf32>
}

// -----

// An insertion into a dimension split the same way keeps the split (a
// fused projection's gradient, Q's part of the [q; k; v] features).
shard.grid @pp_tp(shape = 2)
// CHECK-LABEL: func.func @insert_rows
// CHECK-SAME: %[[P:.*]]: tensor<2x8xf32>, %[[D:.*]]: tensor<2x24xf32>) -> tensor<2x24xf32>
// CHECK: tensor.insert_slice %[[P]] into %[[D]][0, 8] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<2x24xf32>
func.func @insert_rows(%p: tensor<4x8xf32>, %d: tensor<4x24xf32>) -> tensor<4x24xf32> {
  %s = shard.sharding @pp_tp split_axes = [[0]] : !shard.sharding
  %ps = shard.shard %p to %s : tensor<4x8xf32>
  %ds = shard.shard %d to %s : tensor<4x24xf32>
  %r = tensor.insert_slice %ps into %ds[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x24xf32>
  return %r : tensor<4x24xf32>
}
