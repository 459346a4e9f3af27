// State arguments (`pp.state`): each new value is a result of the stage that
// reads and updates its state, after the values later stages read, and no
// later stage carries it. pp-derive-backward then returns it from that
// stage's forward alone (slot `state_update`), reading the state's slot.
// Stage 1's loss is linear in its matmul, so its forward saves nothing.
// RUN: pp-opt %s --pp-partition-stages | FileCheck %s
// RUN: pp-opt %s --pp-partition-stages --pp-derive-backward | FileCheck %s --check-prefix=DERIVED
// RUN: pp-opt %s --pp-partition-stages=recompute=all --pp-derive-backward | FileCheck %s --check-prefix=RECOMPUTE

// CHECK-LABEL: func.func @train_step(
// CHECK: %[[S0:.*]]:3 = pp.stage 0 (%{{.*}}, %{{.*}}, %arg2, %arg4) : (tensor<4x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<i64>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<i64>)
// CHECK: pp.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<3xf32>, tensor<i64>
// CHECK: %[[S1:.*]] = pp.stage 1 (%[[S0]]#0, %{{.*}}) : (tensor<4x3xf32>, tensor<3x1xf32>) -> tensor<f32>
// CHECK: return %[[S1]], %[[S0]]#1, %[[S0]]#2

// DERIVED-LABEL: func.func @train_step_s0_forward(
// DERIVED-SAME: tensor<3xf32> {pp.slot = #pp.slot<state 2>}, %arg3: tensor<i64> {pp.slot = #pp.slot<state 4>})
// DERIVED-SAME: -> (tensor<4x3xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, tensor<3xf32> {pp.slot = #pp.slot<state_update 2>}, tensor<i64> {pp.slot = #pp.slot<state_update 4>})
// DERIVED: arith.addi
// DERIVED-LABEL: func.func @train_step_s0_backward_input(
// DERIVED-NOT: state
// DERIVED-LABEL: func.func @train_step_s1_forward(
// DERIVED-SAME: -> (tensor<f32> {pp.slot = #pp.slot<loss>})
// DERIVED-NOT: state
// DERIVED-NOT: @train_step(

// A recomputing backward re-runs the forward but never updates the state.
// RECOMPUTE-LABEL: func.func @train_step_s0_forward(
// RECOMPUTE-SAME: #pp.slot<state_update 2>}, tensor<i64> {pp.slot = #pp.slot<state_update 4>})
// RECOMPUTE-LABEL: func.func @train_step_s0_backward_input(
// RECOMPUTE-NOT: state
// RECOMPUTE: pp.recompute
// RECOMPUTE-NOT: state
// RECOMPUTE-LABEL: func.func @train_step_s1_forward(
// RECOMPUTE-NOT: state_update

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>
#scalar = affine_map<() -> ()>
#vec = affine_map<(j) -> (j)>
func.func @train_step(%x: tensor<4x3xf32>, %w0: tensor<3x3xf32> {pp.param},
                      %running: tensor<3xf32> {pp.state},
                      %w1: tensor<3x1xf32> {pp.param},
                      %count: tensor<i64> {pp.state})
    -> (tensor<f32>, tensor<3xf32> {pp.state = 2 : i64},
        tensor<i64> {pp.state = 4 : i64}) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1 : i64
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%h : tensor<4x3xf32>) outs(%z3 : tensor<3xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
  } -> tensor<3xf32>
  %new = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]}
      ins(%running, %sum : tensor<3xf32>, tensor<3xf32>) outs(%e3 : tensor<3xf32>) {
    ^bb0(%r: f32, %s: f32, %o: f32):
      %a = arith.mulf %r, %half : f32
      %b = arith.mulf %s, %half : f32
      %c = arith.addf %a, %b : f32
      linalg.yield %c : f32
  } -> tensor<3xf32>
  %ei = tensor.empty() : tensor<i64>
  %counted = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%count : tensor<i64>) outs(%ei : tensor<i64>) {
    ^bb0(%c: i64, %o: i64):
      %n = arith.addi %c, %one : i64
      linalg.yield %n : i64
  } -> tensor<i64>
  %cut = pp.boundary %h : tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<4x1xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = linalg.matmul ins(%cut, %w1 : tensor<4x3xf32>, tensor<3x1xf32>) outs(%z1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<4x1xf32>) outs(%zl : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %loss, %new, %counted : tensor<f32>, tensor<3xf32>, tensor<i64>
}
