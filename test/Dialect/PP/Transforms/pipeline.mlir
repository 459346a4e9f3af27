// The passes from a model to a schedule, each checked on a 2-layer model.
// RUN: pp-opt %s --pp-split-microbatches=num-microbatches=2 | FileCheck %s --check-prefix=SPLIT
// RUN: pp-opt %s --pp-partition-stages | FileCheck %s --check-prefix=MARKERS
// RUN: pp-opt %s --pp-split-microbatches=num-microbatches=2 --pp-partition-stages --pp-derive-backward | FileCheck %s --check-prefix=GRAD
// RUN: pp-opt %s --pp-partition-stages --pp-derive-backward --pp-schedule="schedule=1f1b num-microbatches=3" | FileCheck %s --check-prefix=ONEFONEB
// RUN: pp-opt %s --pp-partition-stages --pp-derive-backward --pp-schedule="schedule=gpipe num-microbatches=2" --pp-insert-transfers | FileCheck %s --check-prefix=XFER
// RUN: pp-opt %s --pp-partition-stages --pp-derive-backward --pp-schedule="schedule=1f1b num-microbatches=1 split-backward=true" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=SPLITBW

// SPLIT: func.func @train_step(%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<2x2xf32> {pp.target}, %{{.*}}: tensor<3x5xf32> {pp.param}, %{{.*}}: tensor<5x2xf32> {pp.param}) -> tensor<f32>
// SPLIT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x5xf32>) outs(%{{.*}} : tensor<2x5xf32>) -> tensor<2x5xf32>
// SPLIT: linalg.tanh ins(%{{.*}} : tensor<2x5xf32>) outs(%{{.*}} : tensor<2x5xf32>)
// SPLIT: linalg.reduce ins(%{{.*}} : tensor<2x2xf32>)

// MARKERS-NOT: pp.boundary
// MARKERS: %[[S0:.*]] = pp.stage 0 (%arg0, %arg2) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// MARKERS: linalg.tanh
// MARKERS: %[[S1:.*]] = pp.stage 1 (%[[S0]], %arg3, %arg1) : (tensor<4x5xf32>, tensor<5x2xf32>, tensor<4x2xf32>) -> tensor<f32>
// MARKERS: return %[[S1]] : tensor<f32>

// GRAD-NOT: func.func @train_step(
// GRAD: func.func @train_step_s0_forward(%{{.*}}: tensor<2x3xf32> {pp.slot = #pp.slot<data 0>}, %{{.*}}: tensor<3x5xf32> {pp.slot = #pp.slot<param 2>}) -> (tensor<2x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, {{.*}}pp.slot = #pp.slot<saved stage 0 value 0>{{.*}}) attributes {pp.microbatches = 2 : i64, pp.phase = #pp<phase forward>, pp.stage = 0 : i64}
// GRAD: func.func @train_step_s0_backward_input() attributes {pp.microbatches = 2 : i64, pp.phase = #pp<phase backward_input>
// GRAD: func.func @train_step_s0_backward_weight({{.*}}#pp.slot<grad stage 0 output 0>{{.*}}) -> (tensor<3x5xf32> {pp.slot = #pp.slot<param_grad 2>})
// tanh' reads the forward's tanh (saved in place of the product it is
// computed from): 1 - t * t, no tanh; the weight gradient of x @ w
// reduces over the batch loop m of the matmul's (m, n, k) loops.
// GRAD-NOT: math.tanh
// GRAD: ^bb0(%{{.*}}: f32, %[[T:.*]]: f32, %{{.*}}: f32):
// GRAD: arith.mulf %[[T]], %[[T]] : f32
// GRAD-NOT: math.tanh
// GRAD: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
// GRAD: func.func @train_step_s1_forward({{.*}}) -> (tensor<f32> {pp.slot = #pp.slot<loss>}
// GRAD: func.func @train_step_s1_backward_input({{.*}}#pp.slot<loss_grad>{{.*}}) -> (tensor<2x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>}
// GRAD: func.func @train_step_s1_backward({{.*}}) -> (tensor<2x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>}, tensor<5x2xf32> {pp.slot = #pp.slot<param_grad 3>})

// 1F1B: one warm-up forward on rank 0, none on the last rank.
// ONEFONEB: pp.schedule @train_step_schedule "1f1b" for @train_step microbatches 3 stage_rank [0, 1] {
// ONEFONEB-NEXT: pp.rank 0 {
// ONEFONEB-NEXT: pp.compute forward stage 0 mb 0 @train_step_s0_forward
// ONEFONEB-NEXT: pp.compute forward stage 0 mb 1 @train_step_s0_forward
// ONEFONEB-NEXT: pp.compute backward stage 0 mb 0 @train_step_s0_backward
// ONEFONEB-NEXT: pp.compute forward stage 0 mb 2 @train_step_s0_forward
// ONEFONEB-NEXT: pp.compute backward stage 0 mb 1 @train_step_s0_backward
// ONEFONEB-NEXT: pp.compute backward stage 0 mb 2 @train_step_s0_backward
// ONEFONEB-NEXT: }
// ONEFONEB-NEXT: pp.rank 1 {
// ONEFONEB-NEXT: pp.compute forward stage 1 mb 0 @train_step_s1_forward
// ONEFONEB-NEXT: pp.compute backward stage 1 mb 0 @train_step_s1_backward
// ONEFONEB-NEXT: pp.compute forward stage 1 mb 1 @train_step_s1_forward

// XFER: pp.rank 0 {
// XFER-NEXT: pp.compute forward stage 0 mb 0
// XFER-NEXT: pp.send activation stage 0 mb 0 to 1
// XFER-NEXT: pp.compute forward stage 0 mb 1
// XFER-NEXT: pp.send activation stage 0 mb 1 to 1
// XFER-NEXT: pp.recv gradient stage 0 mb 0 from 1
// XFER-NEXT: pp.compute backward stage 0 mb 0
// XFER-NEXT: pp.recv gradient stage 0 mb 1 from 1
// XFER-NEXT: pp.compute backward stage 0 mb 1
// XFER-NEXT: pp.optimizer_step stage 0
// XFER-NEXT: }
// XFER-NEXT: pp.rank 1 {
// XFER-NEXT: pp.recv activation stage 1 mb 0 from 0
// XFER-NEXT: pp.compute forward stage 1 mb 0
// XFER-NEXT: pp.recv activation stage 1 mb 1 from 0
// XFER-NEXT: pp.compute forward stage 1 mb 1
// XFER-NEXT: pp.compute backward stage 1 mb 0
// XFER-NEXT: pp.send gradient stage 1 mb 0 to 0

// The gradient leaves right after B; W runs after it.
// SPLITBW: pp.rank 0 {
// SPLITBW-NEXT: pp.compute forward stage 0 mb 0 @train_step_s0_forward
// SPLITBW-NEXT: pp.send activation stage 0 mb 0 to 1
// SPLITBW-NEXT: pp.recv gradient stage 0 mb 0 from 1
// SPLITBW-NEXT: pp.compute backward_input stage 0 mb 0 @train_step_s0_backward_input
// SPLITBW-NEXT: pp.compute backward_weight stage 0 mb 0 @train_step_s0_backward_weight
// SPLITBW-NEXT: pp.optimizer_step stage 0
// SPLITBW: pp.rank 1 {
// SPLITBW-NEXT: pp.recv activation stage 1 mb 0 from 0
// SPLITBW-NEXT: pp.compute forward stage 1 mb 0 @train_step_s1_forward
// SPLITBW-NEXT: pp.compute backward_input stage 1 mb 0 @train_step_s1_backward_input
// SPLITBW-NEXT: pp.send gradient stage 1 mb 0 to 0
// SPLITBW-NEXT: pp.compute backward_weight stage 1 mb 0 @train_step_s1_backward_weight

func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x2xf32> {pp.target},
                      %w0: tensor<3x5xf32> {pp.param},
                      %w1: tensor<5x2xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x5xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.tanh ins(%a : tensor<4x5xf32>) outs(%e0 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %cut = pp.boundary %h : tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<4x2xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %o = linalg.matmul ins(%cut, %w1 : tensor<4x5xf32>, tensor<5x2xf32>) outs(%z1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = linalg.sub ins(%o, %y : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %loss : tensor<f32>
}
