// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// An integer data argument whose ids index tables (`pp.id_bound` on the
// stage-function arguments that hold it, the smallest where they differ)
// declares the table size to the runtime after its buffer, which checks
// the training data against it, and then the one id past it the loss
// ignores (`pp.id_ignored`); f32 data and unmarked ids declare none.

func.func @m_s0_forward(%x: memref<4x3xi32> {pp.slot = #pp.slot<data 0>, pp.id_bound = 50 : i64},
                        %w: memref<3x5xf32> {pp.slot = #pp.slot<param 2>},
                        %act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%x: memref<4x3xi32> {pp.slot = #pp.slot<data 0>, pp.id_bound = 40 : i64},
                         %g: memref<4x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>},
                         %dw: memref<3x5xf32> {pp.slot = #pp.slot<param_grad 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %y: memref<4xi64> {pp.slot = #pp.slot<target 1>, pp.id_bound = 5 : i64, pp.id_ignored = -100 : i64},
                        %z: memref<4xi64> {pp.slot = #pp.slot<data 3>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %g: memref<4x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 1 : i64} {
  return
}

pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0, 1] {
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
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.optimizer_step stage 1
  }
}

// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// data:0, i32, indexes tables of 50 and 40 rows
// CHECK: call @pprt_define_buffer(%[[CTX]], %c0_i32, %c2_i32, %c0_i32, %c0_i32, %c3_i32, %c2_i32,
// CHECK-NEXT: call @pprt_set_id_bound(%[[CTX]], %c0_i32, %c40_i64)
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c1_i32,
// target:1, i64, indexes a table of 5 rows and may also be -100, which the
// loss ignores
// CHECK: call @pprt_define_buffer(%[[CTX]], %[[T:.*]], %c3_i32, %c1_i32, %c1_i32, %c4_i32, %c1_i32,
// CHECK-NEXT: call @pprt_set_id_bound(%[[CTX]], %[[T]], %c5_i64)
// CHECK-NEXT: call @pprt_set_id_ignored(%[[CTX]], %[[T]], %c-100_i64)
// data:3 declares no table
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %{{.*}}, %c2_i32, %c1_i32, %c3_i32, %c4_i32, %c1_i32,
// CHECK-NEXT: call @pprt_define_buffer(
// CHECK-NOT: pprt_set_id_
// CHECK: return

// CHECK-DAG: func.func private @pprt_set_id_bound(!llvm.ptr, i32, i64)
// CHECK-DAG: func.func private @pprt_set_id_ignored(!llvm.ptr, i32, i64)
