// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-shard-stages=tensor-parallel=2

// An op with no sharding rule cannot be partitioned, even replicated.
func.func @s0_forward(%x: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}) -> (tensor<8x18xf32> {pp.slot = #pp.slot<act stage 0 output 0>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op has no sharding rule (ShardingInterface), so tensor parallelism cannot partition 's0_forward'}}
  %r = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<8x16xf32> to tensor<8x18xf32>
  return %r : tensor<8x18xf32>
}

// -----

// A split dimension the group size does not divide.
// expected-error @+1 {{argument #1 of type 'tensor<16x3xf32>' splits dimension 1, which tensor-parallel=2 does not divide}}
func.func @s0_forward(%x: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}, %w: tensor<16x3xf32> {pp.slot = #pp.slot<param 1>, pp.split = [[], [0]]}) -> (tensor<8x3xf32> {pp.slot = #pp.slot<act stage 0 output 0>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x3xf32>) outs(%z : tensor<8x3xf32>) -> tensor<8x3xf32>
  return %mm : tensor<8x3xf32>
}

// -----

// The forward saves its column-parallel product split on dimension 1; a
// backward that needs it split otherwise breaks the contract.
#a = affine_map<(d0, d1, d2) -> (d2, d0)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @s0_forward(%x: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}, %w: tensor<16x32xf32> {pp.slot = #pp.slot<param 1>, pp.split = [[], [0]]}) -> (tensor<8x32xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %mm : tensor<8x32xf32>
}
// expected-error @+1 {{argument #0 (#pp.slot<saved stage 0 value 0>) is read as}}
func.func @s0_backward_weight(%s: tensor<8x32xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) -> (tensor<32x32xf32> {pp.slot = #pp.slot<param_grad 2>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase backward_weight>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  // expected-note @+1 {{read here}}
  %g = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s, %s : tensor<8x32xf32>, tensor<8x32xf32>) outs(%z : tensor<32x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s2 = arith.addf %acc, %m : f32
    linalg.yield %s2 : f32
  } -> tensor<32x32xf32>
  return %g : tensor<32x32xf32>
}

// -----

// A grid of another size than tensor-parallel.
// expected-error @+1 {{grid @pp_tp does not have shape 2}}
shard.grid @pp_tp(shape = 4)

// -----

// A value with a sharding of its own and further readers: upstream
// propagation leaves the op without a single sharding, and
// shard-partition would crash on it.
shard.grid @pp_tp(shape = 2)
func.func @s0_forward(%x: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}) -> (tensor<8x16xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, tensor<8x16xf32> {pp.slot = #pp.slot<act stage 0 output 1>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @+1 {{'linalg.add' op result #0 has no single sharding after propagation in 's0_forward' (it is read directly or annotated twice), so upstream partitioning cannot split it}}
  %sum = linalg.add ins(%x, %x : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = shard.sharding @pp_tp split_axes = [[]] : !shard.sharding
  %own = shard.shard %sum to %s : tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %sq = linalg.mul ins(%sum, %sum : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %own, %sq : tensor<8x16xf32>, tensor<8x16xf32>
}
