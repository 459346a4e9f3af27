// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// Buffers of rank 5 and 6 (PPRT_MAX_DIMS): a rank-6 input and weight, and a
// rank-5 activation and its gradient crossing from stage 0 to stage 1.

func.func @m_s0_forward(%x: memref<2x1x3x1x2x2xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<1x3x1x2x2x4xf32> {pp.slot = #pp.slot<param 1>},
                        %act: memref<2x3x2x2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0, %c0, %c0, %c0, %c0] : memref<2x1x3x1x2x2xf32>
  memref.store %v, %act[%c0, %c0, %c0, %c0, %c0] : memref<2x3x2x2x4xf32>
  return
}
func.func @m_s0_backward(%g: memref<2x3x2x2x4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>},
                         %x: memref<2x1x3x1x2x2xf32> {pp.slot = #pp.slot<data 0>},
                         %dw: memref<1x3x1x2x2x4xf32> {pp.slot = #pp.slot<param_grad 1>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<2x3x2x2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %act: memref<2x3x2x2x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                         %g: memref<2x3x2x2x4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>})
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

// The stage functions see rank-6 and rank-5 memrefs over the buffers.
// CHECK-LABEL: func.func @m_s0_forward(
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<6 x i64>, array<6 x i64>)> to memref<2x1x3x1x2x2xf32>
// CHECK: memref.load
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<5 x i64>, array<5 x i64>)> to memref<2x3x2x2x4xf32>
// CHECK: memref.store
// CHECK: llvm.mlir.global private constant @pp_dims_2_1_3_1_2_2(dense<[2, 1, 3, 1, 2, 2]> : tensor<6xi64>) {{.*}} : !llvm.array<6 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @pp_dims_1_3_1_2_2_4(dense<[1, 3, 1, 2, 2, 4]> : tensor<6xi64>) {{.*}} : !llvm.array<6 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @pp_dims_2_3_2_2_4(dense<[2, 3, 2, 2, 4]> : tensor<5xi64>) {{.*}} : !llvm.array<5 x i64>
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK-DAG: %[[X:.*]] = llvm.mlir.addressof @pp_dims_2_1_3_1_2_2
// CHECK-DAG: %[[W:.*]] = llvm.mlir.addressof @pp_dims_1_3_1_2_2_4
// CHECK-DAG: %[[ACT:.*]] = llvm.mlir.addressof @pp_dims_2_3_2_2_4
// (id, kind, stage, argument, element type, rank, dims)
// data:0 and param:1 of rank 6
// CHECK: call @pprt_define_buffer(%[[CTX]], %c0_i32, %c2_i32, %c0_i32, %c0_i32, %c0_i32, %c6_i32, %[[X]])
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c1_i32, %c0_i32, %c0_i32, %c1_i32, %c0_i32, %c6_i32, %[[W]])
// act:0:0 and grad:0:0 of rank 5
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c2_i32, %c4_i32, %c0_i32, %c0_i32, %c0_i32, %c5_i32, %[[ACT]])
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c3_i32, %c4_i32, %c0_i32, %c0_i32, %c0_i32, %c5_i32, %[[ACT]])
// param_grad:1 and, after the loss and its seed, the gradient sum: rank 6
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c4_i32, %c4_i32, %c0_i32, %c1_i32, %c0_i32, %c6_i32, %[[W]])
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c5_i32, %c5_i32,
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c6_i32, %c6_i32,
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c7_i32, %c1_i32, %c0_i32, %c1_i32, %c0_i32, %c6_i32, %[[W]])

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK: call @m_s0_forward_action(
// The rank-5 activation goes to rank 1 (buffer 2), its gradient comes back
// (buffer 3).
// CHECK: call @pprt_send(%[[CTX]], %c2_i32, %c0_i32, %c1_i32, %c1_i32, %c0_i32)
// CHECK: call @pprt_recv(%[[CTX]], %c3_i32, %c0_i32, %c1_i32, %c0_i32, %c1_i32)
// CHECK-LABEL: func.func private @pp_run_step_rank1(
// CHECK: call @pprt_recv(%[[CTX]], %c2_i32, %c0_i32, %c0_i32, %c1_i32, %c0_i32)
// CHECK: call @m_s1_forward_action(
// CHECK: call @pprt_send(%[[CTX]], %c3_i32, %c0_i32, %c0_i32, %c0_i32, %c1_i32)
