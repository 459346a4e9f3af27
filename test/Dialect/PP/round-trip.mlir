// RUN: pp-opt %s | pp-opt | FileCheck %s

// CHECK-LABEL: func.func @stages
func.func @stages(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[B:.*]] = pp.boundary %{{.*}} : tensor<4xf32>
  %b = pp.boundary %x : tensor<4xf32>
  // CHECK: pp.stage 0 (%[[B]]) : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: pp.yield %{{.*}} : tensor<4xf32>
  %r = pp.stage 0 (%b) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pp.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @recomputed_stage
func.func @recomputed_stage(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: pp.stage 0 recompute (%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> {
  %r = pp.stage 0 recompute (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pp.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK: pp.schedule @s "gpipe" for @train_step microbatches 1 stage_rank [0, 1] {
// CHECK-NEXT: pp.rank 0 {
// CHECK-NEXT: pp.compute forward stage 0 mb 0
// CHECK-NEXT: pp.send activation stage 0 mb 0 to 1
// CHECK-NEXT: pp.recv gradient stage 0 mb 0 from 1
// CHECK-NEXT: pp.compute backward stage 0 mb 0
// CHECK-NEXT: pp.optimizer_step stage 0
// CHECK: pp.rank 1 {
// CHECK: pp.compute backward_input stage 1 mb 0
// CHECK: pp.compute backward_weight stage 1 mb 0
// CHECK: pp.all_reduce stage 1
pp.schedule @s "gpipe" for @train_step microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward_input stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward_weight stage 1 mb 0
    pp.all_reduce stage 1
  }
}

// An overlapped pair: the backward runs beside the forward before it.
// CHECK-LABEL: pp.schedule @overlap
// CHECK:      pp.compute forward stage 0 mb 1
// CHECK-NEXT: pp.compute backward stage 0 mb 0 overlap
// CHECK-NEXT: pp.compute backward stage 0 mb 1{{$}}
pp.schedule @overlap "dualpipev" for @train_step microbatches 2 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 0 overlap
    pp.compute backward stage 0 mb 1
  }
}

// PipeDream-2BW's double buffer: every stage keeps two weight versions.
// CHECK-LABEL: pp.schedule @two_versions "pipedream-2bw" for @train_step microbatches 1 stage_rank [0] attributes {weight_versions = 2 : i64} {
// CHECK-NEXT:    pp.rank 0 {
// CHECK-NEXT:      pp.compute forward stage 0 mb 0
pp.schedule @two_versions "pipedream-2bw" for @train_step microbatches 1
    stage_rank [0] attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// An exchange group: the receive is posted together with the send before
// it.
// CHECK-LABEL: pp.schedule @exchange_group
// CHECK:      pp.send activation stage 0 mb 1 to 1{{$}}
// CHECK-NEXT: pp.recv gradient stage 0 mb 0 from 1 grouped
pp.schedule @exchange_group "1f1b" for @train_step microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1 grouped
  }
  pp.rank 1 {
  }
}

// Costs print exactly: six digits when they suffice, the shortest exact
// decimal otherwise (0.123456789 printed as 1.234568e-01, 1e-50 as 0 and
// 1e300 as INF before; costs are at most 1e280 now).
// CHECK-LABEL: pp.schedule @exact_costs
// CHECK-SAME: cost = #pp.cost<forward = [0.123456789, 1.000000e+00], backward_input = [1.000000e-50, 4.940660e-324], backward_weight = [1.000000e+280, 1.2345678901234567E+279], comm = 1.000000e-01 : f64, activation = [2.500000e-01, 3.000000e+00], stash = [0.000000e+00, 0.33333333333333331]>
// CHECK-SAME: memory_cap = 1.000000e+280 : f64
pp.schedule @exact_costs "x" for @f microbatches 1 stage_rank [0, 0] attributes {
    cost = #pp.cost<forward = [0.123456789, 1.0], backward_input = [1.0e-50, 4.9406564584124654e-324],
                    backward_weight = [1.0e280, 1.2345678901234567e279], comm = 0.1 : f64,
                    activation = [0.25, 3.0], stash = [0.0, 0.33333333333333331]>,
    memory_cap = 1.0e280 : f64} {
  pp.rank 0 {
  }
}

// A cap per rank, for ranks of different memory, prints exactly too.
// CHECK-LABEL: pp.schedule @rank_caps
// CHECK-SAME: memory_cap = array<f64: 4.000000e+00, 0.123456789>
pp.schedule @rank_caps "x" for @f microbatches 1 stage_rank [0, 1] attributes {
    memory_cap = array<f64: 4.0, 0.123456789>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// An action names the stage function it runs; stage-function values name
// their runtime buffers with typed slots.
// CHECK-LABEL: func.func @step_s0_forward
// CHECK-SAME: {pp.slot = #pp.slot<data 0>}
// CHECK-SAME: {pp.slot = #pp.slot<param 2>}
// CHECK-SAME: {pp.slot = #pp.slot<act stage 0 output 1>}
// CHECK-SAME: {pp.slot = #pp.slot<saved stage 0 value 3>}
// CHECK-SAME: -> (tensor<f32> {pp.slot = #pp.slot<loss>})
func.func @step_s0_forward(%x: tensor<4xf32> {pp.slot = #pp.slot<data 0>},
                           %w: tensor<4xf32> {pp.slot = #pp.slot<param 2>},
                           %a: tensor<4xf32> {pp.slot = #pp.slot<act stage 0 output 1>},
                           %s: tensor<4xf32> {pp.slot = #pp.slot<saved stage 0 value 3>})
    -> (tensor<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
// CHECK-LABEL: func.func @step_s0_backward
// CHECK-SAME: #pp.slot<grad stage 1 output 0>, #pp.slot<stash stage 0 value 2>, #pp.slot<target 1>, #pp.slot<param_grad 2>, #pp.slot<loss_grad>
func.func @step_s0_backward()
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64,
                slots = [#pp.slot<grad stage 1 output 0>, #pp.slot<stash stage 0 value 2>, #pp.slot<target 1>, #pp.slot<param_grad 2>, #pp.slot<loss_grad>]} {
  return
}
// CHECK-LABEL: pp.schedule @step_functions
// CHECK: pp.compute forward stage 0 mb 0 @step_s0_forward
// CHECK-NEXT: pp.compute backward stage 0 mb 0 @step_s0_backward
// CHECK-NEXT: pp.compute forward stage 0 mb 1{{$}}
// CHECK-NEXT: pp.compute backward stage 0 mb 0 @step_s0_backward overlap
pp.schedule @step_functions "x" for @step microbatches 2 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @step_s0_forward
    pp.compute backward stage 0 mb 0 @step_s0_backward
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 0 @step_s0_backward overlap
  }
}
