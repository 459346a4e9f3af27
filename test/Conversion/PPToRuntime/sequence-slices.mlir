// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s
// RUN: pp-opt %s --convert-pp-to-runtime | FileCheck %s --check-prefix=NOBACK

// Two sequence slices of one stage, each its own forward and backward:
// slice 1 reads the keys slice 0 carries (carry 0) and returns their
// gradient (carry_grad 0), which slice 0's backward reads. Carried buffers
// live at the unit of slice 0, one unit before slice 1's.

func.func @m_s0_slice0_forward(%x: memref<2x4xf32> {pp.slot = #pp.slot<data 0>},
                               %w: memref<4x4xf32> {pp.slot = #pp.slot<param 1>},
                               %k: memref<2x2x4xf32> {pp.slot = #pp.slot<carry stage 0 value 0>},
                               %s: memref<2x2x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64, pp.slice = 0 : i64} {
  return
}
func.func @m_s0_slice1_forward(%x: memref<2x4xf32> {pp.slot = #pp.slot<data 0>},
                               %w: memref<4x4xf32> {pp.slot = #pp.slot<param 1>},
                               %k: memref<2x2x4xf32> {pp.slot = #pp.slot<carry stage 0 value 0>},
                               %loss: memref<f32> {pp.slot = #pp.slot<loss>},
                               %s: memref<2x2x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64, pp.slice = 1 : i64} {
  return
}
func.func @m_s0_slice1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                                %k: memref<2x2x4xf32> {pp.slot = #pp.slot<carry stage 0 value 0>},
                                %s: memref<2x2x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>},
                                %dk: memref<2x2x4xf32> {pp.slot = #pp.slot<carry_grad stage 0 value 0>},
                                %dw: memref<4x4xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64, pp.slice = 1 : i64} {
  return
}
func.func @m_s0_slice0_backward(%dk: memref<2x2x4xf32> {pp.slot = #pp.slot<carry_grad stage 0 value 0>},
                                %s: memref<2x2x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>},
                                %dw: memref<4x4xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64, pp.slice = 0 : i64} {
  return
}

pp.schedule @m_schedule "seq1f1b" for @m microbatches 2 stage_rank [0]
    attributes {slices = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_slice0_forward
    pp.compute forward stage 0 mb 1 @m_s0_slice1_forward
    pp.compute backward stage 0 mb 1 @m_s0_slice1_backward
    pp.compute backward stage 0 mb 0 @m_s0_slice0_backward
    pp.optimizer_step stage 0
  }
}

// Slice 1's forward reads the keys one unit back; its backward reads them
// and writes their gradient one unit back. Slice 0's read theirs at their
// own unit (no offsets).
// CHECK: llvm.mlir.global private constant @m_s0_slice1_forward_action_units_back(dense<[0, 0, 1, 0, 0]>
// CHECK-LABEL: func.func private @m_s0_slice1_forward_action(
// CHECK: scf.for
// CHECK: arith.subi %arg1, %{{.*}} : i32
// CHECK: call @pprt_buffer(
// CHECK: llvm.mlir.global private constant @m_s0_slice1_backward_action_units_back(dense<[0, 1, 0, 1, 0]>
// NOBACK-NOT: slice0_{{.*}}units_back

// Ids in order of first use: data 0 (slice 0) 0, param 1 1, carry 2,
// saved (slice 0) 3, data 0 (slice 1) 4, loss 5, saved (slice 1) 6,
// loss_grad 7, carry_grad 8, param_grad 9.
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// Slice 1's data and saved value are its own buffers (variant 1); the
// carried keys count with slice 0.
// CHECK: call @pprt_define_buffer(%[[CTX]], %c2_i32, %c4_i32,
// CHECK-NOT: pprt_set_buffer_variant(%[[CTX]], %c2_i32
// CHECK: call @pprt_define_buffer(%[[CTX]], %c4_i32, %c2_i32,
// CHECK-NEXT: call @pprt_set_buffer_variant(%[[CTX]], %c4_i32, %c1_i32)
// CHECK: call @pprt_define_buffer(%[[CTX]], %c6_i32, %c4_i32,
// CHECK-NEXT: call @pprt_set_buffer_variant(%[[CTX]], %c6_i32, %c1_i32)
// CHECK: call @pprt_set_microbatch_variant(%[[CTX]], %c1_i32, %c1_i32)
// CHECK: call @pprt_set_slices(%[[CTX]], %c2_i32)
// The carried keys are held from slice 0's forward to its backward (3).
// CHECK: call @pprt_define_saved(%[[CTX]], %c2_i32, %c0_i32, %c3_i32)

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK: call @m_s0_slice0_forward_action(%{{.*}}, %c0_i32)
// CHECK: call @m_s0_slice1_forward_action(%{{.*}}, %c1_i32)
// CHECK: call @m_s0_slice1_backward_action(%{{.*}}, %c1_i32)
// CHECK: call @m_s0_slice0_backward_action(%{{.*}}, %c0_i32)
