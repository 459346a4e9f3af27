// RUN: pp-opt %s --split-input-file --convert-pp-to-runtime=zero-gather=param --verify-diagnostics | FileCheck %s

// ZeRO-3 gathered per param: a stage function takes the runtime context
// before its table, which holds its other buffers only; it acquires each
// param right before the first op reading it or a value derived from it
// (here a view of param 0 that a later op reads) and releases it right
// after the last such op. The schedule's all-gather emits nothing.

func.func @m_s0_forward(%w: memref<2x2xf32> {pp.slot = #pp.slot<param 0>},
                        %x: memref<4xf32> {pp.slot = #pp.slot<data 0>},
                        %b: memref<4xf32> {pp.slot = #pp.slot<param 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  %c0 = arith.constant 0 : index
  %flat = memref.collapse_shape %w [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  %v = memref.load %b[%c0] : memref<4xf32>
  memref.store %v, %x[%c0] : memref<4xf32>
  %u = memref.load %flat[%c0] : memref<4xf32>
  memref.store %u, %loss[] : memref<f32>
  return
}

// CHECK-LABEL: func.func @m_s0_forward(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[TABLE:.*]]: !llvm.ptr) attributes
// CHECK: %[[W:.*]] = call @pprt_param_acquire(%[[CTX]], %{{.*}}) : (!llvm.ptr, i32) -> !llvm.ptr
// CHECK: %[[WV:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<2x2xf32>
// CHECK-NEXT: %[[FLAT:.*]] = memref.collapse_shape %[[WV]]
// CHECK: call @pprt_param_acquire(%[[CTX]], %{{.*}})
// CHECK: %[[BV:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<4xf32>
// CHECK-NEXT: memref.load %[[BV]]
// CHECK-NEXT: arith.constant 2 : i32
// CHECK-NEXT: call @pprt_param_release(%[[CTX]], %{{.*}}) : (!llvm.ptr, i32) -> ()
// The data is the table's first entry.
// CHECK: llvm.getelementptr %[[TABLE]][0]
// CHECK: memref.store
// CHECK-NEXT: memref.load %[[FLAT]]
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: call @pprt_param_release(%[[CTX]], %{{.*}})
// CHECK: llvm.getelementptr %[[TABLE]][1]
// CHECK: memref.store
// CHECK-NEXT: return

// The action fills the table with the data and the loss only.
// CHECK: llvm.mlir.global private constant @m_s0_forward_action_buffers(dense<[1, 3]> : tensor<2xi32>)
// CHECK-LABEL: func.func private @m_s0_forward_action(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[MB:.*]]: i32)
// CHECK: call @m_s0_forward(%[[CTX]], %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()

// A stage function another function calls keeps its arguments: its action
// function holds the params around the call.

func.func @m_s0_backward(%w: memref<2x2xf32> {pp.slot = #pp.slot<param 0>},
                         %seed: memref<f32> {pp.slot = #pp.slot<loss_grad>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @caller(%w: memref<2x2xf32>, %seed: memref<f32>) {
  call @m_s0_backward(%w, %seed) : (memref<2x2xf32>, memref<f32>) -> ()
  return
}

// CHECK-LABEL: func.func private @m_s0_backward_action(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[MB:.*]]: i32)
// CHECK: %[[ID:.*]] = arith.constant 0 : i32
// CHECK-NEXT: call @pprt_param_acquire(%[[CTX]], %[[ID]])
// CHECK: call @pprt_buffer(%[[CTX]]
// CHECK: call @m_s0_backward(
// CHECK: call @pprt_param_release(%[[CTX]], %{{.*}})

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK-NOT: pprt_all_gather
// CHECK: call @pprt_reduce_scatter(
// CHECK-NOT: pprt_all_gather
// CHECK: return

pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64,
                zero_gather = #pp<zero_gather param>} {
  pp.rank 0 {
    pp.all_gather stage 0
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
  }
}

// -----

// The lowering gathers in the unit the schedule records (its memory and time
// were counted for it).

func.func @m_s0_forward(%w: memref<4xf32> {pp.slot = #pp.slot<param 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}

// expected-error @below {{'pp.schedule' op gathers ZeRO-3's weights per stage (zero_gather), but the lowering was asked for zero-gather=param; give pp-insert-transfers and convert-pp-to-runtime the same zero-gather}}
pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64} {
  pp.rank 0 {
    pp.all_gather stage 0
    pp.compute forward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
  }
}
