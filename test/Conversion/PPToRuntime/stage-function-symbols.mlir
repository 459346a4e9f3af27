// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// A compute action that names its stage function calls that function, even
// where another function carries the same stage and phase (here a second
// forward of stage 0, as a specialised copy would); an action without a
// name calls the one found by its tags.

func.func @m_s0_forward(%x: memref<4xf32> {pp.slot = #pp.slot<data 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_forward_copy(%x: memref<4xf32> {pp.slot = #pp.slot<data 0>},
                             %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %x: memref<4xf32> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}

pp.schedule @m_schedule "gpipe" for @m microbatches 3 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.compute forward stage 0 mb 1 @m_s0_forward_copy
    pp.compute forward stage 0 mb 2 @m_s0_forward
    pp.compute backward stage 0 mb 0
    pp.compute backward stage 0 mb 1 @m_s0_backward
    pp.compute backward stage 0 mb 2 @m_s0_backward
    pp.optimizer_step stage 0
  }
}

// Each stage function has an action function that calls it.
// CHECK-LABEL: func.func private @m_s0_forward_action(
// CHECK: call @m_s0_forward(
// CHECK-LABEL: func.func private @m_s0_forward_copy_action(
// CHECK: call @m_s0_forward_copy(
// CHECK-LABEL: func.func private @m_s0_backward_action(
// CHECK: call @m_s0_backward(
// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK: call @m_s0_forward_action(
// CHECK: call @m_s0_forward_copy_action(
// CHECK: call @m_s0_forward_action(
// CHECK: call @m_s0_backward_action(
// CHECK: call @m_s0_backward_action(
// CHECK: call @m_s0_backward_action(
// CHECK-NOT: call @m_s0_
// CHECK: return
