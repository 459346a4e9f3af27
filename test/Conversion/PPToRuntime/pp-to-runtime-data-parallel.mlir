// RUN: pp-opt %s -split-input-file --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// One stage, two data-parallel replicas: the program declares them (so the
// runtime insists on 1 x 2 processes) and reduces before the update.

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3x1xf32> {pp.slot = #pp.slot<param 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                         %dw: memref<3x1xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
}

// CHECK-LABEL: func.func private @m_s0_backward_action(
// CHECK: call @m_s0_backward(
// CHECK-NEXT: call @pprt_accumulate(
// CHECK-NEXT: return
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK: call @pprt_set_program(%[[CTX]], %c20261207_i32, %c1_i32, %c1_i32, %c1_i32)
// CHECK-NEXT: call @pprt_set_data_parallel(%[[CTX]], %c2_i32)
// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK: call @m_s0_backward_action(
// CHECK-NEXT: call @pprt_action_end(%[[CTX]])
// CHECK-NEXT: call @pprt_all_reduce(%[[CTX]], %c0_i32)
// CHECK-NEXT: call @pprt_optimizer_step(%[[CTX]], %c0_i32)

// -----

// An imported schedule may reduce without saying over how many replicas:
// the program then runs as any number of them.

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3x1xf32> {pp.slot = #pp.slot<param 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                         %dw: memref<3x1xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @m_schedule "imported" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
}

// CHECK-LABEL: func.func @pp_define_program(
// CHECK: call @pprt_set_program(
// CHECK-NOT: pprt_set_data_parallel
// CHECK: call @pprt_all_reduce(

// -----

// Two weight versions (pipedream-2bw): the program declares them, and the
// runtime's optimizer step makes the delayed update.

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3x1xf32> {pp.slot = #pp.slot<param 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                         %dw: memref<3x1xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @m_schedule "pipedream-2bw" for @m microbatches 1 stage_rank [0]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK: call @pprt_set_program(%[[CTX]], %c20261207_i32, %c1_i32, %c1_i32, %c1_i32)
// CHECK-NEXT: call @pprt_set_data_parallel(%[[CTX]], %c1_i32)
// CHECK-NEXT: call @pprt_set_weight_versions(%[[CTX]], %c2_i32)
// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK: call @pprt_optimizer_step(
