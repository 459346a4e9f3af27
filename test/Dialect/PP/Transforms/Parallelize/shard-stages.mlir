// RUN: pp-opt %s -split-input-file --pp-shard-stages=tensor-parallel=2 | FileCheck %s
// RUN: pp-opt %s -split-input-file --pp-shard-stages=tensor-parallel=1 | FileCheck %s --check-prefix=T1

// An unused tensor.empty crashes upstream shard-partition (a segfault in
// shardShapedType); pp-shard-stages canonicalizes it away first.
// CHECK-LABEL: func.func @s0_forward(
// CHECK-SAME: %[[X:.*]]: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}
// CHECK-SAME: %[[W:.*]]: tensor<16x16xf32> {pp.slot = #pp.slot<param 1>, pp.split = {{\[\[}}], [0]]}
// CHECK-SAME: -> (tensor<8x16xf32> {pp.slot = #pp.slot<saved stage 0 value 0>, pp.split = {{\[\[}}], [0]]})
// CHECK-NOT: tensor.empty() : tensor<4x4xf32>
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<8x16xf32>, tensor<16x16xf32>)
// CHECK-NOT: shard.
// CHECK: return
// T1-LABEL: func.func @s0_forward(
// T1: tensor.empty() : tensor<4x4xf32>
// T1-NOT: shard.
func.func @s0_forward(%x: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}, %w: tensor<16x32xf32> {pp.slot = #pp.slot<param 1>, pp.split = [[], [0]]}) -> (tensor<8x32xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
  %zero = arith.constant 0.0 : f32
  %unused = tensor.empty() : tensor<4x4xf32>
  %e = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %mm : tensor<8x32xf32>
}

// -----

// One zero fill shared by a split product and a replicated one: each use
// gets its own fill, so nothing gathers the zeros.
// CHECK-LABEL: func.func @s0_forward(
// CHECK-NOT: shard.all_gather
// CHECK-NOT: shard.all_slice
// CHECK: return
func.func @s0_forward(%x: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}, %w: tensor<16x16xf32> {pp.slot = #pp.slot<param 1>, pp.split = [[], [0]]}, %v: tensor<16x16xf32> {pp.slot = #pp.slot<param 2>}) -> (tensor<8x16xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}, tensor<8x16xf32> {pp.slot = #pp.slot<act stage 0 output 0>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %b = linalg.matmul ins(%x, %v : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A stage boundary inside a layer norm: the value sent on (act output 0)
// is read on in the stage and returned again as a saved value. Upstream
// propagation would annotate it a second time and shard-partition would
// crash; its one annotation serves every reader, and each returns whole.
// CHECK-LABEL: func.func @s0_forward(
// CHECK-SAME: -> (tensor<8x16xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, tensor<8xf32> {pp.slot = #pp.slot<act stage 0 output 1>}, tensor<8x16xf32> {pp.slot = #pp.slot<saved stage 0 value 0>})
// CHECK: %[[SUM:.*]] = linalg.add
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<8x16xf32>)
// CHECK-NOT: shard.
// CHECK: return %[[SUM]], %[[MEAN]], %[[SUM]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @s0_forward(%x: tensor<8x16xf32> {pp.slot = #pp.slot<data 0>}, %b: tensor<8x16xf32> {pp.slot = #pp.slot<param 1>}) -> (tensor<8x16xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, tensor<8xf32> {pp.slot = #pp.slot<act stage 0 output 1>}, tensor<8x16xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %sum = linalg.add ins(%x, %b : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %er = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%er : tensor<8xf32>) -> tensor<8xf32>
  %mean = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%sum : tensor<8x16xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %sum, %mean, %sum : tensor<8x16xf32>, tensor<8xf32>, tensor<8x16xf32>
}
