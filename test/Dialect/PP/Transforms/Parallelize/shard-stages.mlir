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

// -----

// A vocabulary-split table looked up by ids compared with the vocabulary
// loop's index: upstream partitioning would leave the index local to each
// part (every part would match ids 0..2); pp offsets it by the part's
// first row, tp index x 3. The split reduction over the vocabulary reads
// a constant, which stays inside the body (upstream drops it otherwise).
#ids = affine_map<(b, d, v) -> (b)>
#tab = affine_map<(b, d, v) -> (v, d)>
#emb = affine_map<(b, d, v) -> (b, d)>
// CHECK-LABEL: func.func @s0_forward(
// CHECK-SAME: tensor<3x4xf32> {pp.slot = #pp.slot<param 1>, pp.split = {{\[\[}}0]]}
// CHECK-DAG: %[[BLOCK:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[PART:.*]] = shard.process_linear_index on @pp_tp : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[PART]], %[[BLOCK]] : index
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<8xi64>, tensor<3x4xf32>)
// CHECK: %[[LOCAL:.*]] = linalg.index 2 : index
// CHECK: %[[GLOBAL:.*]] = arith.addi %[[LOCAL]], %[[FIRST]] : index
// CHECK: arith.index_cast %[[GLOBAL]] : index to i64
// CHECK: shard.all_reduce
// CHECK-NOT: tp_split_block
// CHECK: return
func.func @s0_forward(%ids: tensor<8xi64> {pp.slot = #pp.slot<data 0>}, %wte: tensor<6x4xf32> {pp.slot = #pp.slot<param 1>, pp.split = [[0]]}) -> (tensor<8x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>}) attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>} {
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
  return %x : tensor<8x4xf32>
}
