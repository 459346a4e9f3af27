// RUN: pp-opt %s --pp-attach-variants="variants=%S/../Inputs/variant-short.mlir microbatch-variants=0,1" | FileCheck %s
// RUN: pp-opt %s --pp-attach-variants="variants=%S/../Inputs/variant-short.mlir" | FileCheck %s --check-prefix=ONLY
// RUN: pp-opt %s --pp-attach-variants="variants=%S/../Inputs/variant-short.mlir microbatch-variants=0,1" --convert-pp-to-runtime --canonicalize --cse | FileCheck %s --check-prefix=RUNTIME

// Micro-batch 0 runs the model's stage functions (2 rows of 8), micro-batch
// 1 the variant's (2 rows of 4), renamed and tagged.

// CHECK-LABEL: func.func @m_s0_forward(%{{.*}}: memref<2x8xf32>
// CHECK: func.func @m_s0_forward_v1(%{{.*}}: memref<2x4xf32> {{.*}} attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64, pp.variant = 1 : i64}
// CHECK: func.func @m_s0_backward_v1(
// CHECK: func.func @m_s1_forward_v1(
// CHECK: func.func @m_s1_backward_v1(
// CHECK: pp.schedule
// CHECK: pp.rank 0
// CHECK-NEXT: pp.compute forward stage 0 mb 0 @m_s0_forward{{$}}
// CHECK-NEXT: pp.send activation stage 0 mb 0 to 1
// CHECK-NEXT: pp.compute forward stage 0 mb 1 @m_s0_forward_v1
// CHECK-NEXT: pp.send activation stage 0 mb 1 to 1
// CHECK-NEXT: pp.recv gradient stage 0 mb 0 from 1
// CHECK-NEXT: pp.compute backward stage 0 mb 0 @m_s0_backward{{$}}
// CHECK-NEXT: pp.recv gradient stage 0 mb 1 from 1
// CHECK-NEXT: pp.compute backward stage 0 mb 1 @m_s0_backward_v1
// CHECK: pp.rank 1
// CHECK: pp.compute forward stage 1 mb 1 @m_s1_forward_v1
// CHECK: pp.compute backward stage 1 mb 1 @m_s1_backward_v1

// Without micro-batch variants the functions come in, and nothing runs them.
// ONLY: func.func @m_s0_forward_v1(
// ONLY-NOT: @m_s0_forward_v1
// ONLY-NOT: @m_s1_forward_v1{{$}}

// The runtime program: variant 1's data, activation and gradient are
// buffers of their own, declared as variant 1; the weight, its gradient and
// the loss are shared. (id, kind, stage, argument, dtype, rank, dims)
// RUNTIME-LABEL: func.func @pp_define_program(
// RUNTIME-SAME: %[[CTX:.*]]: !llvm.ptr)
// Variant 1's activation is a buffer of its own shape, declared as
// variant 1; each micro-batch's variant is declared.
// RUNTIME-DAG: %[[D0:.*]] = llvm.mlir.addressof @pp_dims_2_8
// RUNTIME-DAG: %[[D1:.*]] = llvm.mlir.addressof @pp_dims_2_4
// RUNTIME: call @pprt_define_buffer(%[[CTX]], %c0_i32, %c2_i32, %c0_i32, %c0_i32, %c0_i32, %c2_i32, %[[D0]])
// RUNTIME: call @pprt_define_buffer(%[[CTX]], %[[ACT1:c[0-9]+_i32]], %c4_i32, %c0_i32, %c0_i32, %c0_i32, %c2_i32, %[[D1]])
// RUNTIME-NEXT: call @pprt_set_buffer_variant(%[[CTX]], %[[ACT1]], %c1_i32)
// RUNTIME: call @pprt_set_microbatch_variant(%[[CTX]], %c0_i32, %c0_i32)
// RUNTIME-NEXT: call @pprt_set_microbatch_variant(%[[CTX]], %c1_i32, %c1_i32)
// Rank 0 sends micro-batch 0's activation from the model's buffer (2) and
// micro-batch 1's from variant 1's.
// RUNTIME-LABEL: func.func private @pp_run_step_rank0(
// RUNTIME: call @m_s0_forward_action(
// RUNTIME: call @pprt_send(%{{.*}}, %c2_i32, %c0_i32, %c1_i32, %c1_i32, %c0_i32)
// RUNTIME: call @m_s0_forward_v1_action(
// RUNTIME: call @pprt_send(%{{.*}}, %[[ACT1]], %c1_i32, %c1_i32, %c1_i32, %c0_i32)

func.func @m_s0_forward(%x: memref<2x8xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<4x4xf32> {pp.slot = #pp.slot<param 1>},
                        %act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%g: memref<2x8xf32> {pp.slot = #pp.slot<grad stage 0 output 0>},
                         %dw: memref<4x4xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %y: memref<2x8xf32> {pp.slot = #pp.slot<target 2>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %g: memref<2x8xf32> {pp.slot = #pp.slot<grad stage 0 output 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 1 : i64} {
  return
}

pp.schedule @m_schedule "gpipe" for @m microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1 @m_s0_forward
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0 @m_s0_backward
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1 @m_s0_backward
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0 @m_s1_forward
    pp.recv activation stage 1 mb 1 from 0
    pp.compute forward stage 1 mb 1 @m_s1_forward
    pp.compute backward stage 1 mb 0 @m_s1_backward
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward stage 1 mb 1 @m_s1_backward
    pp.send gradient stage 1 mb 1 to 0
    pp.optimizer_step stage 1
  }
}
