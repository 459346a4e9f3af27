// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// An overlapped pair runs in order on a CPU: the forward, then the
// backward marked `overlap`. Two stages on one rank, two micro-batches;
// the pair is F0(1) beside BW1(0).

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3x5xf32> {pp.slot = #pp.slot<param 2>},
                        %act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%g: memref<4x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>},
                         %x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                         %dw: memref<3x5xf32> {pp.slot = #pp.slot<param_grad 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %y: memref<4x5xf32> {pp.slot = #pp.slot<target 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                         %g: memref<4x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 1 : i64} {
  return
}

pp.schedule @m_schedule "dualpipev" for @m microbatches 2 stage_rank [0, 0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 1 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 1 mb 0 overlap
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 1
    pp.compute backward stage 0 mb 0
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
    pp.optimizer_step stage 1
  }
}

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK: call @pprt_action_begin(%{{.*}}, %c0_i32, %c0_i32, %c0_i32)
// CHECK: call @m_s0_forward_action(
// CHECK: call @pprt_action_begin(%{{.*}}, %c0_i32, %c1_i32, %c0_i32)
// CHECK: call @m_s1_forward_action(
// CHECK: call @pprt_action_begin(%{{.*}}, %c0_i32, %c0_i32, %c1_i32)
// CHECK: call @m_s0_forward_action(
// CHECK: call @pprt_action_begin(%{{.*}}, %c3_i32, %c1_i32, %c0_i32)
// CHECK: call @m_s1_backward_action(
// CHECK: call @pprt_action_begin(%{{.*}}, %c0_i32, %c1_i32, %c1_i32)
// CHECK: call @m_s1_forward_action(
