// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// Two stages on two ranks, one micro-batch; stage functions already
// bufferized with results as out-parameters.

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                        %w: memref<3x5xf32> {pp.slot = #pp.slot<param 2>},
                        %act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%g: memref<4x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>},
                         %x: memref<4x3xf32> {pp.slot = #pp.slot<data 0>},
                         %dw: memref<3x5xf32> {pp.slot = #pp.slot<param_grad 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %y: memref<4x5xf32> {pp.slot = #pp.slot<target 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>},
                         %act: memref<4x5xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                         %g: memref<4x5xf32> {pp.slot = #pp.slot<grad stage 0 output 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 1 : i64} {
  return
}

pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1 grouped
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

// CHECK-NOT: pp.schedule
// Each stage function takes one table of its arguments' buffers, which its
// action function fills for a micro-batch from a constant list of buffer
// ids (argument order: data:0 is 0, param:2 is 1, act:0:0 is 2), then sums
// the weight gradients and records the loss the call left.
// CHECK-LABEL: func.func @m_s0_forward(
// CHECK-SAME: %{{.*}}: !llvm.ptr)
// CHECK: llvm.mlir.global private constant @m_s0_forward_action_buffers(dense<[0, 1, 2]> : tensor<3xi32>)
// CHECK-LABEL: func.func private @m_s0_forward_action(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[MB:.*]]: i32)
// CHECK-DAG: %[[IDS:.*]] = llvm.mlir.addressof @m_s0_forward_action_buffers
// CHECK-DAG: %[[TABLE:.*]] = llvm.alloca %c3_i32 x !llvm.ptr
// CHECK: scf.for %[[I:.*]] = %c0_i32 to %c3_i32 step %c1_i32 : i32 {
// CHECK-DAG: %[[IDP:.*]] = llvm.getelementptr %[[IDS]][%[[I]]] : (!llvm.ptr, i32) -> !llvm.ptr, i32
// CHECK-DAG: %[[ID:.*]] = llvm.load %[[IDP]] : !llvm.ptr -> i32
// CHECK-DAG: %[[ENTRY:.*]] = llvm.getelementptr %[[TABLE]][%[[I]]] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.ptr
// CHECK-DAG: %[[DATA:.*]] = func.call @pprt_buffer(%[[CTX]], %[[ID]], %[[MB]])
// CHECK: llvm.store %[[DATA]], %[[ENTRY]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: call @m_s0_forward(%[[TABLE]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: return
// The micro-batch's weight gradient (id 4) is summed into its sum (id 8).
// CHECK: llvm.mlir.global private constant @m_s0_backward_action_buffers(dense<[3, 0, 4]> : tensor<3xi32>)
// CHECK-LABEL: func.func private @m_s0_backward_action(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[MB:.*]]: i32)
// CHECK: call @m_s0_backward(
// CHECK-NEXT: call @pprt_accumulate(%[[CTX]], %c8_i32, %c4_i32, %[[MB]])
// CHECK-NEXT: return
// The loss (id 6) of stage 1's forward is recorded.
// CHECK-LABEL: func.func private @m_s1_forward_action(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[MB:.*]]: i32)
// CHECK: call @m_s1_forward(
// CHECK-NEXT: call @pprt_record_loss(%[[CTX]], %c6_i32, %[[MB]])
// CHECK-NEXT: return
// Each shape is a constant array of dims, shared by the buffers of that
// shape, right before the function that declares them.
// CHECK: llvm.mlir.global private constant @pp_dims_4_3(dense<[4, 3]> : tensor<2xi64>) {{.*}} : !llvm.array<2 x i64>
// CHECK-NEXT: llvm.mlir.global private constant @pp_dims_3_5(dense<[3, 5]> : tensor<2xi64>)
// CHECK-NEXT: llvm.mlir.global private constant @pp_dims_4_5(dense<[4, 5]> : tensor<2xi64>)
// Buffers: (id, kind, stage, index, dtype, ndims, dims). Kinds: 0 param,
// 1 param_grad accumulator, 2 input, 3 target, 4 per-micro-batch, 5 loss,
// 6 loss seed.
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK-DAG: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-DAG: %[[D43:.*]] = llvm.mlir.addressof @pp_dims_4_3
// CHECK-DAG: %[[D35:.*]] = llvm.mlir.addressof @pp_dims_3_5
// CHECK-DAG: %[[D45:.*]] = llvm.mlir.addressof @pp_dims_4_5
// The ABI version first (PPRT_ABI_VERSION of pprt.h), then ranks, stages,
// micro-batches.
// CHECK: call @pprt_set_program(%[[CTX]], %c20261207_i32, %c2_i32, %c2_i32, %c1_i32)
// No all-reduce, no replicas: exactly 2 processes.
// CHECK-NEXT: call @pprt_set_data_parallel(%[[CTX]], %c1_i32)
// One buffer per slot, in order of first use: (id, kind, stage, argument,
// element type (0 = f32), rank, dims).
// data:0, the input batch of argument 0, 4x3
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c0_i32, %c2_i32, %c0_i32, %c0_i32, %c0_i32, %c2_i32, %[[D43]])
// param:2, stage 0, 3x5
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c1_i32, %c0_i32, %c0_i32, %c2_i32, %c0_i32, %c2_i32, %[[D35]])
// act:0:0 and grad:0:0, per micro-batch
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c2_i32, %c4_i32, %c0_i32, %c0_i32, %c0_i32, %c2_i32, %[[D45]])
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c3_i32, %c4_i32, %c0_i32, %c0_i32, %c0_i32, %c2_i32, %[[D45]])
// param_grad:2, one micro-batch's weight gradient
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c4_i32, %c4_i32, %c0_i32, %c2_i32, %c0_i32, %c2_i32, %[[D35]])
// target:1 on stage 1, the loss and its seed (rank 0: no dims)
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c5_i32, %c3_i32, %c1_i32, %c1_i32, %c0_i32, %c2_i32, %[[D45]])
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c6_i32, %c5_i32, %c1_i32, %c0_i32, %c0_i32, %c0_i32, %[[NULL]])
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c7_i32, %c6_i32, %c1_i32, %c0_i32, %c0_i32, %c0_i32, %[[NULL]])
// The sum of param:2's gradients: id 8, kind 1, stage 0, argument 2.
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %c8_i32, %c1_i32, %c0_i32, %c2_i32, %c0_i32, %c2_i32, %[[D35]])
// What each stage's forward leaves for its backward (id, stage, until phase
// 3, the fused backward): stage 0's input batch, stage 1's input activation.
// CHECK-NEXT: call @pprt_define_saved(%[[CTX]], %c0_i32, %c0_i32, %c3_i32)
// CHECK-NEXT: call @pprt_define_saved(%[[CTX]], %c2_i32, %c1_i32, %c3_i32)
// CHECK-NEXT: return

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// Every compute action is bracketed for the profiler: (phase, stage,
// micro-batch), from its buffer lookups to its gradient sums, and runs its
// stage function's action function on its micro-batch.
// CHECK: call @pprt_action_begin(%[[CTX]], %c0_i32, %c0_i32, %c0_i32)
// CHECK-NEXT: call @m_s0_forward_action(%[[CTX]], %c0_i32) : (!llvm.ptr, i32) -> ()
// CHECK-NEXT: call @pprt_action_end(%[[CTX]])
// Rank 0's send and the receive grouped with it are one exchange group.
// CHECK-NEXT: call @pprt_group_begin(%[[CTX]])
// CHECK-NEXT: call @pprt_send(%[[CTX]]
// CHECK: call @pprt_recv(%[[CTX]]
// CHECK-NEXT: call @pprt_group_end(%[[CTX]])
// CHECK-NEXT: call @pprt_action_begin(%[[CTX]], %c3_i32, %c0_i32, %c0_i32)
// CHECK-NEXT: call @m_s0_backward_action(%[[CTX]], %c0_i32)
// CHECK-NEXT: call @pprt_action_end(%[[CTX]])
// CHECK-NEXT: call @pprt_optimizer_step(%[[CTX]]
// CHECK-NEXT: return

// CHECK-LABEL: func.func private @pp_run_step_rank1(
// CHECK-NOT: pprt_group
// CHECK: call @pprt_recv(
// CHECK: call @m_s1_forward_action(
// CHECK-NEXT: call @pprt_action_end(
// CHECK: call @m_s1_backward_action(
// CHECK-NEXT: call @pprt_action_end(
// CHECK-NEXT: call @pprt_send(
// CHECK-NEXT: call @pprt_optimizer_step(

// CHECK-LABEL: func.func @pp_run_step(%{{.*}}: !llvm.ptr, %{{.*}}: i32)
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: func.call @pp_run_step_rank0
// CHECK: case 1 {
// CHECK: func.call @pp_run_step_rank1
