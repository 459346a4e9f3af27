// RUN: pp-opt %s -split-input-file --pp-verify-schedule -o /dev/null
// RUN: pp-opt %s -split-input-file --pp-verify-schedule="static-memory=sgd" -o /dev/null
// RUN: pp-opt %s -split-input-file --pp-verify-schedule="static-memory=adam" -verify-diagnostics -o /dev/null
// RUN: not pp-opt %s -split-input-file --pp-verify-schedule="static-memory=lion" 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: pp-opt %s -split-input-file --pp-simulate="optimizer=adam" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIMULATE

// OPTIMIZER: error: static-memory must be sgd or adam, got 'lion'

// One stage of 100 f32 weights (a 10x10 param and its reuse by the
// backward, counted once) on 2 replicas; its forward holds 100 bytes of
// activations. SGD: 400 + 400 bytes besides them, within the cap of 1500;
// Adam: 800 more without ZeRO (above the cap), 400 more with ZeRO-1.
// SIMULATE: remark: static memory per rank (weights + gradients + optimizer state, bytes): rank 0: 400 + 400 + 800
// SIMULATE: remark: static memory per rank (weights + gradients + optimizer state, bytes): rank 0: 400 + 400 + 400

func.func private @f_s0_forward(tensor<10x10xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64}
func.func private @f_s0_backward(tensor<10x10xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64}
pp.schedule @plain "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, memory_cap = 1500.0 : f64,
                cost = #pp.cost<forward = [1.0], backward_input = [1.0],
                                backward_weight = [1.0], comm = 0.0,
                                activation = [100.0], stash = [0.0]>} {
  pp.rank 0 {
    // expected-error @+1 {{leaves rank 0 holding 100 units of activation memory beside 1600 of weights, gradients and optimizer state, above the schedule's memory_cap of 1500}}
    pp.compute forward stage 0 mb 0 @f_s0_forward
    pp.compute backward stage 0 mb 0 @f_s0_backward
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
}

// -----

func.func private @f_s0_forward(tensor<10x10xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64}
func.func private @f_s0_backward(tensor<10x10xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64}
pp.schedule @zero "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64, memory_cap = 1500.0 : f64,
                cost = #pp.cost<forward = [1.0], backward_input = [1.0],
                                backward_weight = [1.0], comm = 0.0,
                                activation = [100.0], stash = [0.0]>} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @f_s0_forward
    pp.compute backward stage 0 mb 0 @f_s0_backward
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    pp.all_gather stage 0
  }
}
