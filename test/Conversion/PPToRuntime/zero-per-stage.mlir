// RUN: pp-opt %s --convert-pp-to-runtime=zero-gather=param | FileCheck %s

// A ZeRO stage per stage: the program declares each stage's level, and
// only the stage gathered per param (stage 1, ZeRO-3) acquires its params
// in its functions; its all-gather emits nothing, stage 0 (ZeRO-0) reads
// its weights from the table and all-reduces.

func.func @m_s0_forward(%w: memref<4xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  %c0 = arith.constant 0 : index
  %v = memref.load %w[%c0] : memref<4xf32>
  return
}
func.func @m_s1_forward(%w: memref<4xf32> {pp.slot = #pp.slot<param 1>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  %c0 = arith.constant 0 : index
  %v = memref.load %w[%c0] : memref<4xf32>
  memref.store %v, %loss[] : memref<f32>
  return
}

// CHECK-LABEL: func.func @m_s0_forward(
// CHECK-SAME: %{{.*}}: !llvm.ptr) attributes
// CHECK-NOT: pprt_param_acquire
// CHECK: return
// CHECK-LABEL: func.func @m_s1_forward(
// CHECK: call @pprt_param_acquire(
// CHECK: call @pprt_param_release(
// CHECK: return

// CHECK-LABEL: func.func @pp_define_program(
// CHECK: %[[S0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[L0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: call @pprt_set_stage_zero(%{{.*}}, %[[S0]], %[[L0]]) : (!llvm.ptr, i32, i32) -> ()
// CHECK-NEXT: %[[S1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[L1:.*]] = arith.constant 3 : i32
// CHECK-NEXT: call @pprt_set_stage_zero(%{{.*}}, %[[S1]], %[[L1]]) : (!llvm.ptr, i32, i32) -> ()

// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK-NOT: pprt_all_gather
// CHECK: call @pprt_reduce_scatter(
// CHECK-NOT: pprt_all_gather
// CHECK: call @pprt_all_reduce(
// CHECK-NOT: pprt_all_gather
// CHECK: return

pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0, 0]
    attributes {num_replicas = 2 : i64, zero = array<i64: 0, 3>,
                zero_gather = [#pp<zero_gather stage>, #pp<zero_gather param>]} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.all_gather stage 1
    pp.compute forward stage 1 mb 0
    pp.reduce_scatter stage 1
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
    pp.optimizer_step stage 1
  }
}
