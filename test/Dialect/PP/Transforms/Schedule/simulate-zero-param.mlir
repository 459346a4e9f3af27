// RUN: pp-opt %s --pp-simulate="all-reduce-cost=4" 2>&1 | FileCheck %s
// RUN: pp-opt %s --pp-verify-schedule="static-memory=sgd" -verify-diagnostics -o /dev/null

// ZeRO-3 gathered per param (zero_gather = param): each compute gathers the
// params its function reads, and a rank holds whole at once only the params
// whose first-to-last reads overlap. Stage 0 has 128 weight bytes: w0 (64,
// read by the forward's first op and, through a view, its last), w1 (32,
// read by both functions) and w2 (32, by the backward). The forward holds
// w0 and w1 at once (96 bytes), the backward one at a time (32).

func.func @f_s0_forward(%w0: tensor<4x4xf32> {pp.slot = #pp.slot<param 0>},
                        %w1: tensor<8xf32> {pp.slot = #pp.slot<param 1>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  %0 = arith.addf %w0, %w0 : tensor<4x4xf32>
  %1 = tensor.collapse_shape %w0 [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %2 = arith.addf %w1, %w1 : tensor<8xf32>
  %3 = arith.addf %1, %1 : tensor<16xf32>
  return
}
func.func @f_s0_backward(%w1: tensor<8xf32> {pp.slot = #pp.slot<param 1>},
                         %w2: tensor<8xf32> {pp.slot = #pp.slot<param 2>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  %0 = arith.addf %w2, %w2 : tensor<8xf32>
  %1 = arith.addf %w1, %w1 : tensor<8xf32>
  return
}

// Gathered per stage, as a contrast: the gather (half the all-reduce cost
// of 4) [0,2], F [2,3], BW [3,5], the reduce-scatter [5,7]; the whole 128
// bytes are held for the step, besides the replica's blocks (8 + 4 + 4
// values): with 10 of activations, above a cap of 300 that gathering per
// param fits (298).
// CHECK: remark: makespan 7,
// CHECK: remark: static memory per rank (weights + gradients + optimizer state, bytes): rank 0: 64 + 128 + 0 (+ 128 gathered for the step)
pp.schedule @stage "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64, memory_cap = 300.0 : f64,
                cost = #pp.cost<forward = [1.0], backward_input = [1.0],
                                backward_weight = [1.0], comm = 0.0,
                                activation = [10.0], stash = [0.0]>} {
  pp.rank 0 {
    pp.all_gather stage 0
    // expected-error @+1 {{leaves rank 0 holding 10 units of activation memory beside 320 of weights, gradients and optimizer state, above the schedule's memory_cap of 300}}
    pp.compute forward stage 0 mb 0 @f_s0_forward
    pp.compute backward stage 0 mb 0 @f_s0_backward
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
  }
}

// Per param the stage's all-gather moves nothing; the forward gathers w0
// and w1 (96 of 128 bytes: 1.5 of the whole weights' 2), the backward w1
// and w2 (1): F [0,2.5], BW [2.5,5.5], the reduce-scatter [5.5,7.5].
// CHECK: remark: makespan 7.5,
// CHECK: remark: static memory per rank (weights + gradients + optimizer state, bytes): rank 0: 64 + 128 + 0 (+ 96 gathered at once, per param)
pp.schedule @param "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64,
                zero_gather = #pp<zero_gather param>, memory_cap = 300.0 : f64,
                cost = #pp.cost<forward = [1.0], backward_input = [1.0],
                                backward_weight = [1.0], comm = 0.0,
                                activation = [10.0], stash = [0.0]>} {
  pp.rank 0 {
    pp.all_gather stage 0
    pp.compute forward stage 0 mb 0 @f_s0_forward
    pp.compute backward stage 0 mb 0 @f_s0_backward
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
  }
}
