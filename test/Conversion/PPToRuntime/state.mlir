// RUN: pp-opt %s -split-input-file -verify-diagnostics --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// A state argument (`state 3`, i64) is a PPRT_STATE buffer (kind 7) of its
// stage holding argument 3; the forward's new value (`state_update 3`) a
// per-micro-batch buffer that pprt_update_state copies over the state
// after each forward call, never after the backward.

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3xf32> {pp.slot = #pp.slot<param 2>},
                        %n: memref<i64> {pp.slot = #pp.slot<state 3>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>},
                        %next: memref<i64> {pp.slot = #pp.slot<state_update 3>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                         %dw: memref<3xf32> {pp.slot = #pp.slot<param_grad 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}

pp.schedule @m_schedule "gpipe" for @m microbatches 2 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 1
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// The forward's action replaces the state after the call, the backward's
// does not touch it.
// CHECK-LABEL: func.func private @m_s0_forward_action(
// CHECK-SAME: %[[ACTX:.*]]: !llvm.ptr, %[[MB:.*]]: i32)
// CHECK: call @m_s0_forward(
// CHECK-NEXT: call @pprt_update_state(%[[ACTX]], %c2_i32, %c4_i32, %[[MB]])
// CHECK-LABEL: func.func private @m_s0_backward_action(
// CHECK-NOT: pprt_update_state
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK: call @pprt_define_buffer(%[[CTX]], %c2_i32, %c7_i32, %c0_i32, %c3_i32, %c4_i32, %c0_i32,
// CHECK: call @pprt_define_buffer(%[[CTX]], %c4_i32, %c4_i32, %c0_i32, %c0_i32, %c4_i32, %c0_i32,
// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK: call @m_s0_forward_action(%{{.*}}, %c0_i32)
// CHECK: call @m_s0_forward_action(%{{.*}}, %c1_i32)
// CHECK: call @m_s0_backward_action(
// CHECK: call @m_s0_backward_action(
// CHECK: return

// -----

module {
// expected-error @+1 {{argument #3 holds a new value of state argument #3, which no stage function reads}}
func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3xf32> {pp.slot = #pp.slot<param 2>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>},
                        %next: memref<i64> {pp.slot = #pp.slot<state_update 3>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %dw: memref<3xf32> {pp.slot = #pp.slot<param_grad 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}

pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}
}
