// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// What a stage's forward leaves for its backward, and until which phase:
// the profiler sums these buffers into the stage's activation memory and the
// part W still reads into its stash memory.

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3x5xf32> {pp.slot = #pp.slot<param 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>},
                        %s0: memref<4x5xf32> {pp.slot = #pp.slot<saved stage 0 value 0>},
                        %s1: memref<4x5xf32> {pp.slot = #pp.slot<saved stage 0 value 1>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward_input(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                               %s0: memref<4x5xf32> {pp.slot = #pp.slot<saved stage 0 value 0>},
                               %st: memref<4x5xf32> {pp.slot = #pp.slot<stash stage 0 value 0>})
    attributes {pp.phase = #pp<phase backward_input>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward_weight(%st: memref<4x5xf32> {pp.slot = #pp.slot<stash stage 0 value 0>},
                                %s1: memref<4x5xf32> {pp.slot = #pp.slot<saved stage 0 value 1>},
                                %x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                                %dw: memref<3x5xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward_weight>, pp.stage = 0 : i64} {
  return
}

pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward_input stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// Ids in order of first use: data:0 0, param:1 1, loss 2, saved:0:0 3,
// saved:0:1 4, loss_grad 5, stash:0:0 6, param_grad:1 7.
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// (id, stage, until): the batch and saved:0:1 until W (phase 2), saved:0:0
// until B (phase 1); B's stash, the loss and the weights are not held.
// CHECK: call @pprt_define_saved(%[[CTX]], %c0_i32, %c0_i32, %c2_i32)
// CHECK-NEXT: call @pprt_define_saved(%[[CTX]], %c3_i32, %c0_i32, %c1_i32)
// CHECK-NEXT: call @pprt_define_saved(%[[CTX]], %c4_i32, %c0_i32, %c2_i32)
// CHECK-NEXT: return

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK: call @pprt_action_begin(%{{.*}}, %c0_i32, %c0_i32, %c0_i32)
// CHECK: call @m_s0_forward_action(
// CHECK: call @pprt_action_end(
// CHECK-NEXT: call @pprt_action_begin(%{{.*}}, %c1_i32, %c0_i32, %c0_i32)
// CHECK: call @m_s0_backward_input_action(
// CHECK-NEXT: call @pprt_action_end(
// CHECK-NEXT: call @pprt_action_begin(%{{.*}}, %c2_i32, %c0_i32, %c0_i32)
// CHECK: call @m_s0_backward_weight_action(
// CHECK-NEXT: call @pprt_action_end(
