// RUN: pp-opt %s -split-input-file --convert-pp-to-runtime --canonicalize --cse -verify-diagnostics | FileCheck %s

// An input marked `pp.packed_input` (docs/VariableLength.md "Cross-document
// masks") declares to the runtime, after its buffer, what the loader fills
// it with: each token's document index within its row (1) or position
// within its document (2); the token ids declare nothing.

func.func @m_s0_forward(%x: memref<2x8xi64> {pp.slot = #pp.slot<data 0>},
                        %doc: memref<2x8xi64> {pp.slot = #pp.slot<data 1>, pp.packed_input = "document_ids"},
                        %pos: memref<2x8xi32> {pp.slot = #pp.slot<data 2>, pp.packed_input = "position_ids"},
                        %w: memref<8x5xf32> {pp.slot = #pp.slot<param 5>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %dw: memref<8x5xf32> {pp.slot = #pp.slot<param_grad 5>})
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

// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK: call @pprt_define_buffer(%[[CTX]], %c0_i32, %c2_i32, %c0_i32, %c0_i32, %c4_i32, %c2_i32,
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c1_i32, %c2_i32, %c0_i32, %c1_i32, %c4_i32, %c2_i32,
// CHECK-NEXT: call @pprt_set_packed_input(%[[CTX]], %c1_i32, %c1_i32)
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c2_i32, %c2_i32, %c0_i32, %c2_i32, %c3_i32, %c2_i32,
// CHECK-NEXT: call @pprt_set_packed_input(%[[CTX]], %c2_i32, %c2_i32)
// CHECK-NOT: pprt_set_packed_input
// CHECK: func.func private @pprt_set_packed_input(!llvm.ptr, i32, i32)

// -----

// A target (or anything but an integer [rows, positions] input) is not
// filled so.

// expected-error @+1 {{argument #0 (#pp.slot<target 1>, 'memref<2x8xi64>') is marked 'pp.packed_input = "position_ids"': only an i32 or i64 [rows, positions] model input holds document ids or positions}}
func.func @m_s0_forward(%y: memref<2x8xi64> {pp.slot = #pp.slot<target 1>, pp.packed_input = "position_ids"},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>})
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
