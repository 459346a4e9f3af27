// RUN: pp-opt %s --convert-pp-to-runtime | FileCheck %s

// pipedream-2bw without a flush, 2 stages and 2 micro-batches: rank 0's
// warm-up forward runs in the first step only, and its next-step forward
// (with its send) in every step but the last, on step offset 1. The
// exchange group of the next-step send and this step's receive keeps its
// brackets in every step.

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
pp.schedule @m_schedule "pipedream-2bw" for @m microbatches 2 stage_rank [0, 1]
    attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 first_step
    pp.send activation stage 0 mb 0 to 1 first_step
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1 grouped
    pp.compute backward stage 0 mb 0
    pp.compute forward stage 0 mb 0 next_step
    pp.send activation stage 0 mb 0 to 1 next_step
    pp.recv gradient stage 0 mb 1 from 1 grouped
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.recv activation stage 1 mb 1 from 0
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 1
    pp.send gradient stage 1 mb 1 to 0
    pp.optimizer_step stage 1
  }
}

// CHECK-LABEL: func.func @pp_define_program(
// CHECK: call @pprt_set_weight_versions(
// CHECK-LABEL: func.func private @pp_run_step_rank0(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr)
// The warm-up forward and its send, each in the first step only.
// CHECK: %[[FIRST:.*]] = call @pprt_step_is_first(%[[CTX]]) : (!llvm.ptr) -> i32
// CHECK: %[[RUNS:.*]] = arith.cmpi ne, %[[FIRST]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[RUNS]] {
// CHECK-NOT: pprt_set_step_offset
// CHECK: func.call @m_s0_forward_action(
// CHECK-NEXT: func.call @pprt_action_end(%[[CTX]])
// CHECK-NEXT: }
// CHECK: call @pprt_step_is_first(%[[CTX]])
// CHECK: scf.if
// CHECK: func.call @pprt_send(
// CHECK-NEXT: }
// This step's micro-batch 1 and its exchange group, unguarded.
// CHECK-NOT: scf.if
// CHECK: call @m_s0_forward_action(
// CHECK-NOT: scf.if
// CHECK: call @pprt_group_begin(%[[CTX]])
// CHECK-NOT: scf.if
// CHECK: call @pprt_send(
// CHECK-NOT: scf.if
// CHECK: call @pprt_recv(
// CHECK-NEXT: call @pprt_group_end(%[[CTX]])
// CHECK-NOT: scf.if
// CHECK: call @m_s0_backward_action(
// The next step's forward: not in the last step, on step offset 1.
// CHECK: %[[LAST:.*]] = call @pprt_step_is_last(%[[CTX]]) : (!llvm.ptr) -> i32
// CHECK: %[[NOTLAST:.*]] = arith.cmpi eq, %[[LAST]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[NOTLAST]] {
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: func.call @pprt_set_step_offset(%[[CTX]], %[[ONE]])
// CHECK: func.call @m_s0_forward_action(
// CHECK-NEXT: func.call @pprt_action_end(%[[CTX]])
// CHECK-NEXT: %[[OFF:.*]] = arith.constant 0 : i32
// CHECK-NEXT: func.call @pprt_set_step_offset(%[[CTX]], %[[OFF]])
// CHECK-NEXT: }
// Its send opens an exchange group with this step's receive of micro-batch
// 1's gradient; the brackets run in every step.
// CHECK-NEXT: call @pprt_group_begin(%[[CTX]])
// CHECK-NEXT: call @pprt_step_is_last(%[[CTX]])
// CHECK: scf.if
// CHECK: func.call @pprt_set_step_offset(
// CHECK: func.call @pprt_send(
// CHECK: func.call @pprt_set_step_offset(
// CHECK-NEXT: }
// CHECK: call @pprt_recv(
// CHECK-NEXT: call @pprt_group_end(%[[CTX]])
// CHECK: call @m_s0_backward_action(
// CHECK: call @pprt_optimizer_step(
// CHECK-LABEL: func.func private @pp_run_step_rank1(
// CHECK-NOT: pprt_step_is
// CHECK: return
