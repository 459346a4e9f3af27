// RUN: pp-opt %s --pp-split-sequence=slices=2 --pp-partition-stages=num-stages=1 --pp-split-slice-stages | FileCheck %s
// RUN: pp-opt %s --pp-split-sequence=slices=2 --pp-partition-stages=num-stages=1 --pp-split-slice-stages --pp-derive-backward | FileCheck %s --check-prefix=DERIVE
// RUN: pp-opt %s --pp-split-sequence=slices=2 --pp-partition-stages=num-stages=1 --pp-split-slice-stages --pp-derive-backward "--pp-schedule=schedule=seq1f1b slices=2" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=SCHEDULE
// RUN: pp-opt %s --pp-partition-stages=num-stages=1 --pp-split-slice-stages | FileCheck %s --check-prefix=WHOLE

// One head of causal attention over 4 positions, learned positions, and a
// summed loss: x[b, t, d], positions wpe[t, d], scores s[b, t, u].
#btd = affine_map<(b, t, d) -> (b, t, d)>
#td = affine_map<(b, t, d) -> (t, d)>
#s_q = affine_map<(b, t, u, d) -> (b, t, d)>
#s_k = affine_map<(b, t, u, d) -> (b, u, d)>
#s_o = affine_map<(b, t, u, d) -> (b, t, u)>
#btu = affine_map<(b, t, u) -> (b, t, u)>
#bt = affine_map<(b, t, u) -> (b, t)>
#o_p = affine_map<(b, t, d, u) -> (b, t, u)>
#o_v = affine_map<(b, t, d, u) -> (b, u, d)>
#o_o = affine_map<(b, t, d, u) -> (b, t, d)>
#all = affine_map<(b, t, d) -> ()>
func.func @train_step(%x: tensor<2x4x3xf32>, %wpe: tensor<4x3xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %he = tensor.empty() : tensor<2x4x3xf32>
  %h = linalg.generic {indexing_maps = [#btd, #td, #btd], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %wpe : tensor<2x4x3xf32>, tensor<4x3xf32>) outs(%he : tensor<2x4x3xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %r = arith.addf %a, %p : f32
      linalg.yield %r : f32
  } -> tensor<2x4x3xf32>
  %se = tensor.empty() : tensor<2x4x4xf32>
  %si = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%h, %h : tensor<2x4x3xf32>, tensor<2x4x3xf32>) outs(%si : tensor<2x4x4xf32>) {
    ^bb0(%q: f32, %k: f32, %o: f32):
      %m = arith.mulf %q, %k : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %me = tensor.empty() : tensor<2x4xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%me : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.generic {indexing_maps = [#btu, #bt], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x4x4xf32>) outs(%mi : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = linalg.index 1 : index
      %u = linalg.index 2 : index
      %vis = arith.cmpi ule, %u, %t : index
      %sel = arith.select %vis, %a, %ninf : f32
      %r = arith.maximumf %o, %sel : f32
      linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %pe = tensor.empty() : tensor<2x4x4xf32>
  %p = linalg.generic {indexing_maps = [#btu, #bt, #btu], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%pe : tensor<2x4x4xf32>) {
    ^bb0(%a: f32, %mx: f32, %o: f32):
      %d = arith.subf %a, %mx : f32
      %e = math.exp %d : f32
      %t = linalg.index 1 : index
      %u = linalg.index 2 : index
      %vis = arith.cmpi ule, %u, %t : index
      %sel = arith.select %vis, %e, %zero : f32
      linalg.yield %sel : f32
  } -> tensor<2x4x4xf32>
  %oe = tensor.empty() : tensor<2x4x3xf32>
  %oi = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %o = linalg.generic {indexing_maps = [#o_p, #o_v, #o_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %h : tensor<2x4x4xf32>, tensor<2x4x3xf32>) outs(%oi : tensor<2x4x3xf32>) {
    ^bb0(%a: f32, %v: f32, %acc: f32):
      %w = arith.mulf %a, %v : f32
      %r = arith.addf %acc, %w : f32
      linalg.yield %r : f32
  } -> tensor<2x4x3xf32>
  %le = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#btd, #all], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%o : tensor<2x4x3xf32>) outs(%li : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}


// Slice 0's stage returns its keys and values (h's first 2 positions) and
// its part of the loss; slice 1's reads both, attends over the two slices'
// keys concatenated and adds its part.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[S0:.*]]:2 = pp.stage 0 (%arg1, %arg0) {pp.slice = 0 : i64}
// CHECK-NOT: tensor.concat
// CHECK: pp.yield
// CHECK: %[[S1:.*]] = pp.stage 0 ({{.*}}%[[S0]]#{{.*}}%[[S0]]#{{.*}}) {pp.slice = 1 : i64}
// CHECK: tensor.concat
// CHECK: pp.yield
// CHECK: return %[[S1]] : tensor<f32>
// The marks inside the stages are spent.
// CHECK-NOT: pp.slice

// One forward and one backward per slice; the values slice 0 carries are
// results of its forward and arguments of slice 1's, and their gradients
// results of slice 1's backward and arguments of slice 0's.
// DERIVE-LABEL: func.func @train_step_s0_slice0_forward(
// DERIVE-SAME: -> ({{.*}}#pp.slot<carry stage 0 value 0>{{.*}}#pp.slot<carry stage 0 value 1>
// DERIVE-SAME: pp.slice = 0 : i64
// DERIVE-LABEL: func.func @train_step_s0_slice0_backward(
// DERIVE-SAME: #pp.slot<carry_grad stage 0 value
// DERIVE-SAME: #pp.slot<carry_grad stage 0 value
// DERIVE-LABEL: func.func @train_step_s0_slice1_forward(
// DERIVE-SAME: #pp.slot<carry stage 0 value
// DERIVE-SAME: -> (tensor<f32> {pp.slot = #pp.slot<loss>}
// DERIVE-SAME: pp.slice = 1 : i64
// DERIVE-LABEL: func.func @train_step_s0_slice1_backward(
// DERIVE-SAME: #pp.slot<loss_grad>
// DERIVE-SAME: -> (
// DERIVE-SAME: #pp.slot<carry_grad stage 0 value

// Unit u runs slice u mod 2's functions, backwards in reverse slice order.
// SCHEDULE: pp.schedule @train_step_schedule "seq1f1b" for @train_step microbatches 2
// SCHEDULE-SAME: slices = 2
// SCHEDULE: pp.compute forward stage 0 mb 0 @train_step_s0_slice0_forward
// SCHEDULE-NEXT: pp.compute forward stage 0 mb 1 @train_step_s0_slice1_forward
// SCHEDULE-NEXT: pp.compute backward stage 0 mb 1 @train_step_s0_slice1_backward
// SCHEDULE-NEXT: pp.compute backward stage 0 mb 0 @train_step_s0_slice0_backward

// A step not computed in slices keeps its stages.
// WHOLE: pp.stage 0
// WHOLE-NOT: pp.slice
// WHOLE-NOT: pp.stage
