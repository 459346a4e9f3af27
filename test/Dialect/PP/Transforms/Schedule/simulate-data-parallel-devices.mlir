// The data-parallel gradient all-reduce timed from the device file's links:
// a ring over d replicas takes latency + 2 (d - 1) / d x bytes / bandwidth.
// One stage of 100 f32 weights (400 bytes) on 4 replicas, unit costs
// (F = 1, fused backward 2), links of 100 bytes/s and 1 s latency:
// 1 + 1.5 x 400 / 100 = 7 after the backward, so the step takes 3 + 7.
// RUN: echo '{"base": "cpu", "link_bandwidth": 100, "link_latency": 1}' > %t.json
// RUN: pp-opt %s -split-input-file --pp-simulate="device-file=%t.json" -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: data-parallel gradient all-reduce per stage (d = 4; bytes, time): 400, 7
// CHECK: remark: makespan 10,
//
// ZeRO-1: the reduce-scatter and the all-gather take half of it each.
// CHECK: remark: data-parallel gradient all-reduce per stage (d = 4; bytes, time): 400, 7
// CHECK: remark: makespan 10,
//
// Costs in milliseconds: 1000 + 600 / 0.1 = 7000 ms.
// RUN: pp-opt %s -split-input-file --pp-simulate="device-file=%t.json time-unit=ms" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MS
// MS: remark: makespan 7003,
//
// An explicit all-reduce-cost wins over the devices.
// RUN: pp-opt %s -split-input-file --pp-simulate="device-file=%t.json all-reduce-cost=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLICIT
// EXPLICIT-NOT: data-parallel gradient all-reduce
// EXPLICIT: remark: makespan 5,
//
// Without devices the all-reduces are free, as before.
// RUN: pp-opt %s -split-input-file --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=FREE
// FREE: remark: makespan 3,
//
// RUN: not pp-opt %s -split-input-file --pp-simulate="device-file=%t.json time-unit=h" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT
// UNIT: error: time-unit must be s, ms, us or ns, got 'h'
// RUN: not pp-opt %s -split-input-file --pp-simulate="device=tpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: error: unknown device 'tpu'

func.func private @f_s0_forward(tensor<10x10xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64}
func.func private @f_s0_backward(tensor<10x10xf32> {pp.slot = #pp.slot<param 0>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64}
pp.schedule @plain "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 4 : i64} {
  pp.rank 0 {
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
    attributes {num_replicas = 4 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @f_s0_forward
    pp.compute backward stage 0 mb 0 @f_s0_backward
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    pp.all_gather stage 0
  }
}
