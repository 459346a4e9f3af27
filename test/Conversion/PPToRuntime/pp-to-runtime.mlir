// RUN: pp-opt %s --convert-pp-to-runtime --canonicalize --cse | FileCheck %s

// Two stages on two ranks, one micro-batch; stage functions already
// bufferized with results as out-parameters.

func.func @m_s0_forward(%x: memref<4x3xf32> {pp.slot = "data:0"},
                        %w: memref<3x5xf32> {pp.slot = "param:2"},
                        %act: memref<4x5xf32> {pp.slot = "act:0:0"})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s0_backward(%g: memref<4x5xf32> {pp.slot = "grad:0:0"},
                         %x: memref<4x3xf32> {pp.slot = "data:0"},
                         %dw: memref<3x5xf32> {pp.slot = "param_grad:2"})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<4x5xf32> {pp.slot = "act:0:0"},
                        %y: memref<4x5xf32> {pp.slot = "target:1"},
                        %loss: memref<f32> {pp.slot = "loss"})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s1_backward(%seed: memref<f32> {pp.slot = "loss_grad"},
                         %act: memref<4x5xf32> {pp.slot = "act:0:0"},
                         %g: memref<4x5xf32> {pp.slot = "grad:0:0"})
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

// CHECK-NOT: pp.schedule
// Buffers: (id, kind, stage, index, ndims, dims...). Kinds: 0 param,
// 1 param_grad accumulator, 2 input, 3 target, 4 per-micro-batch, 5 loss,
// 6 loss seed.
// CHECK-LABEL: func.func @pp_define_program(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : i32
// CHECK: call @pprt_set_program(%[[CTX]], %[[C2]], %[[C2]], %[[C1]])
// data:0 -> input buffer 0 of argument 0, 4x3
// CHECK: call @pprt_define_buffer(%[[CTX]], %[[C0]], %[[C2]], %[[C0]], %[[C0]], %[[C2]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-COUNT-7: call @pprt_define_buffer
// The accumulator of param:2, owned by stage 0: id 8, kind 1, index 2.
// CHECK-NEXT: call @pprt_define_buffer(%[[CTX]], %{{.*}}, %[[C1]], %[[C0]], %[[C2]], %[[C2]],
// CHECK-NOT: call @pprt_define_buffer
// CHECK: return

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// CHECK: %[[X:.*]] = call @pprt_buffer(%[[CTX]]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x3xf32>
// CHECK: call @m_s0_forward(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<4x3xf32>, memref<3x5xf32>, memref<4x5xf32>) -> ()
// CHECK-NEXT: call @pprt_send(%[[CTX]]
// CHECK: call @pprt_recv(%[[CTX]]
// CHECK: call @m_s0_backward(
// The micro-batch's weight gradient is summed into its accumulator.
// CHECK-NEXT: call @pprt_accumulate(%[[CTX]]
// CHECK-NEXT: call @pprt_optimizer_step(%[[CTX]]
// CHECK-NEXT: return

// CHECK-LABEL: func.func private @pp_run_step_rank1(
// CHECK: call @pprt_recv(
// CHECK: call @m_s1_forward(
// CHECK-NEXT: call @pprt_record_loss(
// CHECK: call @m_s1_backward(
// CHECK-NEXT: call @pprt_send(
// CHECK-NEXT: call @pprt_optimizer_step(

// CHECK-LABEL: func.func @pp_run_step(%{{.*}}: !llvm.ptr, %{{.*}}: i32)
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: func.call @pp_run_step_rank0
// CHECK: case 1 {
// CHECK: func.call @pp_run_step_rank1
