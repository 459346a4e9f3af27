// RUN: pp-opt %s -split-input-file --convert-pp-to-runtime | FileCheck %s

// Two step plans: plan 0 runs micro-batches 0 and 1 at variant 0, plan 1
// one micro-batch at variant 1. Each plan declares its micro-batches'
// variants, the step table is a constant global, and pp_run_step runs the
// rank's step of the plan pprt_step_plan picks.
// CHECK: llvm.mlir.global private constant @pp_step_plans(dense<[2, 1, 0, 2, 2, 2, 1, 1, 3, 0, 0]> : tensor<11xi32>)
// CHECK-LABEL: func.func @pp_define_program
// CHECK: call @pprt_set_program({{.*}}, %c2_i32{{.*}}, %c2_i32{{.*}}, %c2_i32
// CHECK: call @pprt_set_plan_microbatch_variant({{.*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK: call @pprt_set_plan_microbatch_variant({{.*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK: call @pprt_set_plan_microbatch_variant({{.*}}, %c1_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}})
// CHECK: %[[TABLE:.*]] = llvm.mlir.addressof @pp_step_plans
// CHECK: call @pprt_set_step_plans({{.*}}, %[[TABLE]], %c11_i32)
// CHECK-LABEL: func.func private @pp_run_step_plan0_rank0
// CHECK: call @m_s0_forward_action({{.*}}, %c0_i32
// CHECK: call @m_s0_forward_action({{.*}}, %c1_i32
// CHECK-LABEL: func.func private @pp_run_step_plan1_rank0
// CHECK: call @m_s0_forward_v1_action({{.*}}, %c0_i32
// CHECK-LABEL: func.func @pp_run_step(
// CHECK: %[[PLAN:.*]] = call @pprt_step_plan(
// CHECK: %[[I:.*]] = arith.index_cast %[[PLAN]]
// CHECK: scf.index_switch %[[I]]
// CHECK: case 0
// CHECK: scf.index_switch
// CHECK: call @pp_run_step_plan0_rank0
// CHECK: call @pp_run_step_plan0_rank1
// CHECK: case 1
// CHECK: call @pp_run_step_plan1_rank0
// CHECK: call @pp_run_step_plan1_rank1
// CHECK-NOT: pp.schedule
module attributes {pp.step_plans = array<i64: 2, 1, 0, 2, 2, 2, 1, 1, 3, 0, 0>} {
func.func @m_s0_forward(%x: memref<2x8xf32> {pp.slot = #pp.slot<data 0>},
                        %act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
func.func @m_s1_forward(%act: memref<2x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
func.func @m_s0_forward_v1(%x: memref<4x4xf32> {pp.slot = #pp.slot<data 0>},
                           %act: memref<4x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64, pp.variant = 1 : i64} {
  return
}
func.func @m_s1_forward_v1(%act: memref<4x4xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
                           %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64, pp.variant = 1 : i64} {
  return
}
pp.schedule @m_schedule_plan1 "gpipe" for @m microbatches 1 stage_rank [0, 1] attributes {pp.step_plan = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward_v1
    pp.send activation stage 0 mb 0 to 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0 @m_s1_forward_v1
    pp.optimizer_step stage 1
  }
}
pp.schedule @m_schedule_plan0 "gpipe" for @m microbatches 2 stage_rank [0, 1] attributes {pp.step_plan = 0 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1 @m_s0_forward
    pp.send activation stage 0 mb 1 to 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0 @m_s1_forward
    pp.recv activation stage 1 mb 1 from 0
    pp.compute forward stage 1 mb 1 @m_s1_forward
    pp.optimizer_step stage 1
  }
}
}


// -----

// One plan for every step still runs as a plan: its micro-batches hold
// the samples the table says, not as many as their rows.
// CHECK-LABEL: func.func @pp_define_program
// CHECK: call @pprt_set_plan_microbatch_variant
// CHECK: call @pprt_set_step_plans
// CHECK-LABEL: func.func @pp_run_step(
// CHECK: call @pprt_step_plan(
// CHECK: call @pp_run_step_plan0_rank0
module attributes {pp.step_plans = array<i64: 1, 1, 0, 1, 1>} {
func.func @m_s0_forward(%x: memref<2x8xf32> {pp.slot = #pp.slot<data 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @m_schedule_plan0 "gpipe" for @m microbatches 1 stage_rank [0] attributes {pp.step_plan = 0 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.optimizer_step stage 0
  }
}
}
