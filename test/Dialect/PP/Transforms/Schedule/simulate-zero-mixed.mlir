// RUN: pp-opt %s --pp-simulate="all-reduce-cost=4" 2>&1 | FileCheck %s

// A ZeRO stage per stage: stage 0 (64 weight bytes: w0) and stage 1 (96:
// w1, 64, and w2, 32, each function reading one after the other, so at
// most 64 whole at once) each count their own level's bytes and
// collectives.

func.func @f_s0_forward(%w0: tensor<4x4xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  %0 = arith.addf %w0, %w0 : tensor<4x4xf32>
  return
}
func.func @f_s0_backward(%w0: tensor<4x4xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  %0 = arith.addf %w0, %w0 : tensor<4x4xf32>
  return
}
func.func @f_s1_forward(%w1: tensor<4x4xf32> {pp.slot = #pp.slot<param 1>},
                        %w2: tensor<8xf32> {pp.slot = #pp.slot<param 2>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  %0 = arith.addf %w1, %w1 : tensor<4x4xf32>
  %1 = arith.addf %w2, %w2 : tensor<8xf32>
  return
}
func.func @f_s1_backward(%w1: tensor<4x4xf32> {pp.slot = #pp.slot<param 1>},
                         %w2: tensor<8xf32> {pp.slot = #pp.slot<param 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 1 : i64} {
  %0 = arith.addf %w1, %w1 : tensor<4x4xf32>
  %1 = arith.addf %w2, %w2 : tensor<8xf32>
  return
}

// Stage 0 at ZeRO-0 on rank 0, stage 1 at ZeRO-3 per param on rank 1.
// Unit costs: F0 [0,1]; stage 1's all-gather moves nothing and each of
// its computes gathers its 96 bytes (half the all-reduce cost of 4, 2):
// F1 [1,4], BW1 [4,8]; its reduce-scatter [8,10]; BW0 [8,10], then stage
// 0's whole all-reduce [10,14]. Rank 0 holds stage 0 whole (64 + 64),
// rank 1 its block of the weights (48), the gradients (96) and the 64
// bytes one compute holds whole.
// CHECK: remark: makespan 14,
// CHECK: remark: static memory per rank (weights + gradients + optimizer state, bytes): rank 0: 64 + 64 + 0; rank 1: 48 + 96 + 0 (+ 64 gathered at once, per param)
pp.schedule @zero0_param "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64, zero = array<i64: 0, 3>,
                zero_gather = [#pp<zero_gather stage>, #pp<zero_gather param>]} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @f_s0_forward
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0 @f_s0_backward
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.all_gather stage 1
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0 @f_s1_forward
    pp.compute backward stage 1 mb 0 @f_s1_backward
    pp.send gradient stage 1 mb 0 to 0
    pp.reduce_scatter stage 1
    pp.optimizer_step stage 1
  }
}

// Both stages at ZeRO-3 on one rank, stage 0 gathered for the step and
// stage 1 per param: stage 0's all-gather [0,2], F0 [2,3], F1 [3,6],
// BW1 [6,10], BW0 [10,12] beside stage 1's reduce-scatter [10,12], stage
// 0's [12,14]. The rank holds stage 0's 64 bytes for the step and, at
// once, 64 of stage 1's.
// CHECK: remark: makespan 14,
// CHECK: remark: static memory per rank (weights + gradients + optimizer state, bytes): rank 0: 80 + 160 + 0 (+ 128 gathered for the step and at once, per param)
pp.schedule @stage_param "gpipe" for @f microbatches 1 stage_rank [0, 0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64,
                zero_gather = [#pp<zero_gather stage>, #pp<zero_gather param>]} {
  pp.rank 0 {
    pp.all_gather stage 0
    pp.all_gather stage 1
    pp.compute forward stage 0 mb 0 @f_s0_forward
    pp.compute forward stage 1 mb 0 @f_s1_forward
    pp.compute backward stage 1 mb 0 @f_s1_backward
    pp.reduce_scatter stage 1
    pp.compute backward stage 0 mb 0 @f_s0_backward
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    pp.optimizer_step stage 1
  }
}
