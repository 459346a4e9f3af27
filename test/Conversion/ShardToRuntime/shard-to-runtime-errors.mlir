// RUN: pp-opt %s -split-input-file -verify-diagnostics --convert-shard-to-runtime

shard.grid @pp_tp(shape = 2)

func.func @product(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'shard.all_reduce' op reduces by product; the runtime's tensor-parallel all-reduce takes sum, max and min}}
  %r = shard.all_reduce %x on @pp_tp grid_axes = [0] reduction = product : tensor<8x4xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

shard.grid @pp_tp(shape = 2)

func.func @all_to_all(%x: tensor<8x4xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{'shard.all_to_all' op has no lowering to the runtime's tensor-parallel calls}}
  %r = shard.all_to_all %x on @pp_tp grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<8x4xf32> -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}
