// RUN: pp-opt %s --pp-derive-backward | FileCheck %s
// RUN: pp-opt %s --pp-derive-backward --pp-schedule="forward-cost=3 backward-input-cost=2 activation-memory=4 input-memory=1" | FileCheck %s --check-prefix=COST

// Stage 0 saves the matmul its tanh's gradient reads; stage 1 recomputes:
// its forward returns only the loss, its backwards re-run tanh and the
// matmul from the stage input (act:0:0), and B stashes the tanh output and
// the matmul's gradient that W reads (and not the weight: the weight's
// gradient does not read it).
// CHECK-LABEL: func.func @train_step_s0_forward(
// CHECK-SAME: -> (tensor<2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, tensor<2x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>})
// CHECK-NOT: pp.recompute
// CHECK-SAME: {
// CHECK-LABEL: func.func @train_step_s1_forward(
// CHECK-SAME: -> (tensor<f32> {pp.slot = #pp.slot<loss>})
// CHECK-SAME: attributes {pp.phase = #pp<phase forward>, pp.recompute, pp.stage = 1 : i64}
// CHECK-LABEL: func.func @train_step_s1_backward_input(
// CHECK-SAME: %[[H:[a-z0-9]+]]: tensor<2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, %[[W:[a-z0-9]+]]: tensor<4x3xf32> {pp.slot = #pp.slot<param 2>}, %{{.*}}: tensor<f32> {pp.slot = #pp.slot<loss_grad>})
// CHECK-SAME: -> (tensor<2x4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>}, tensor<2x4xf32> {pp.slot = #pp.slot<stash stage 1 value 0>}, tensor<2x3xf32> {pp.slot = #pp.slot<stash stage 1 value 1>})
// CHECK-SAME: pp.recompute
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x4xf32>)
// CHECK: math.tanh
// CHECK: %[[U:.*]] = linalg.matmul ins(%[[T]], %[[W]] : tensor<2x4xf32>, tensor<4x3xf32>)
// CHECK: %[[DU:.*]] = linalg.generic {{.*}} ins(%[[U]], %{{.*}} : tensor<2x3xf32>, tensor<f32>)
// CHECK: %[[DH:.*]] = linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: return %[[DH]], %[[T]], %[[DU]]
// CHECK-LABEL: func.func @train_step_s1_backward_weight(
// CHECK-SAME: %{{.*}}: tensor<2x4xf32> {pp.slot = #pp.slot<stash stage 1 value 0>}, %{{.*}}: tensor<2x3xf32> {pp.slot = #pp.slot<stash stage 1 value 1>})
// CHECK-NOT: math.tanh
// CHECK: return
// CHECK-LABEL: func.func @train_step_s1_backward(
// CHECK-SAME: %[[H:[a-z0-9]+]]: tensor<2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, %[[W:[a-z0-9]+]]: tensor<4x3xf32> {pp.slot = #pp.slot<param 2>}, %{{.*}}: tensor<f32> {pp.slot = #pp.slot<loss_grad>})
// CHECK-SAME: -> (tensor<2x4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>}, tensor<4x3xf32> {pp.slot = #pp.slot<param_grad 2>})
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x4xf32>)
// CHECK: linalg.matmul ins(%[[T]], %[[W]] : tensor<2x4xf32>, tensor<4x3xf32>)
// CHECK-NOT: #pp.slot<saved

// pp-schedule reads pp.recompute: stage 1's B grows by its F (2 + 3) and it
// holds its input memory (1) instead of its activation memory (4).
// COST: cost = #pp.cost<forward = [3.000000e+00, 3.000000e+00], backward_input = [2.000000e+00, 5.000000e+00], backward_weight = [1.000000e+00, 1.000000e+00], comm = 0.000000e+00 : f64, activation = [4.000000e+00, 1.000000e+00], stash = [0.000000e+00, 0.000000e+00]>
#id = affine_map<(i, j) -> (i, j)>
func.func @train_step(%x: tensor<2x4xf32>, %w0: tensor<4x4xf32> {pp.param},
                      %w1: tensor<4x3xf32> {pp.param}) -> tensor<f32> {
  %h = pp.stage 0 (%x, %w0) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %w: tensor<4x4xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %z = linalg.matmul ins(%a, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%z : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
      ^bb0(%p: f32, %o: f32):
        %r = math.tanh %p : f32
        linalg.yield %r : f32
    } -> tensor<2x4xf32>
    pp.yield %t : tensor<2x4xf32>
  }
  %loss = pp.stage 1 recompute (%h, %w1) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<2x4xf32>, %w: tensor<4x3xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4xf32>
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
      ^bb0(%p: f32, %o: f32):
        %r = math.tanh %p : f32
        linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e3 = tensor.empty() : tensor<2x3xf32>
    %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3xf32>) -> tensor<2x3xf32>
    %u = linalg.matmul ins(%t, %w : tensor<2x4xf32>, tensor<4x3xf32>) outs(%f3 : tensor<2x3xf32>) -> tensor<2x3xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%u : tensor<2x3xf32>) outs(%f0 : tensor<f32>) {
      ^bb0(%p: f32, %acc: f32):
        %q = arith.mulf %p, %p : f32
        %r = arith.addf %q, %acc : f32
        linalg.yield %r : f32
    } -> tensor<f32>
    pp.yield %s : tensor<f32>
  }
  return %loss : tensor<f32>
}
