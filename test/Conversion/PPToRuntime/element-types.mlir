// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// Every buffer declares its memref's element type as a pprt_dtype: f32 0,
// f16 1, bf16 2, i32 3, i64 4.

func.func @m_s0_forward(%x: memref<4x3xi32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3x5xf32> {pp.slot = #pp.slot<param 2>},
                        %act: memref<4x5xf16> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%g: memref<4x5xbf16> {pp.slot = #pp.slot<grad stage 0 output 0>},
                         %dw: memref<3x5xf32> {pp.slot = #pp.slot<param_grad 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<4x5xf16> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %y: memref<4xi64> {pp.slot = #pp.slot<target 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %g: memref<4x5xbf16> {pp.slot = #pp.slot<grad stage 0 output 0>})
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

// (id, kind, stage, argument, element type, rank, dims pointer)
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// data:0 is i32
// CHECK: call @pprt_define_buffer(%[[CTX]], %c0_i32, %c2_i32, %c0_i32, %c0_i32, %c3_i32, %c2_i32,
// param:2 is f32
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c1_i32, %c0_i32, %c0_i32, %c2_i32, %c0_i32, %c2_i32,
// act:0:0 is f16, grad:0:0 bf16
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c2_i32, %c4_i32, %c0_i32, %c0_i32, %c1_i32, %c2_i32,
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c3_i32, %c4_i32, %c0_i32, %c0_i32, %c2_i32, %c2_i32,
// param_grad:2 is f32
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c4_i32, %c4_i32, %c0_i32, %c2_i32, %c0_i32, %c2_i32,
// target:1 is a 1-D i64
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c5_i32, %c3_i32, %c1_i32, %c1_i32, %c4_i32, %c1_i32,
// the loss and its seed are f32
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c6_i32, %c5_i32, %c1_i32, %c0_i32, %c0_i32, %c0_i32,
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c7_i32, %c6_i32, %c1_i32, %c0_i32, %c0_i32, %c0_i32,
// The gradient sum has its weight's type.
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c8_i32, %c1_i32, %c0_i32, %c2_i32, %c0_i32, %c2_i32,

// Each pprt_* function is declared once, with its pprt.h signature.
// CHECK-DAG: func.func private @pprt_set_program(!llvm.ptr, i32, i32, i32, i32)
// CHECK-DAG: func.func private @pprt_define_buffer(!llvm.ptr, i32, i32, i32, i32, i32, i32, !llvm.ptr)
// CHECK-DAG: func.func private @pprt_buffer(!llvm.ptr, i32, i32) -> !llvm.ptr
