// RUN: pp-opt %s | pp-opt | FileCheck %s

// Every discardable pp.* attribute where it belongs, as pp's passes and
// front ends write them, round-trips.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32> {pp.name = "0.weight", pp.param}, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<2x4xf32> {pp.target})
// CHECK-SAME: attributes {pp.microbatches = 2 : i64}
func.func @train_step(%w: tensor<4x4xf32> {pp.param, pp.name = "0.weight"},
                      %x: tensor<2x4xf32>,
                      %y: tensor<2x4xf32> {pp.target}) -> tensor<f32>
    attributes {pp.microbatches = 2 : i64} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// CHECK-LABEL: func.func @train_step_s0_forward
// CHECK-SAME: {pp.slot = #pp.slot<param 0>}
// CHECK-SAME: -> (tensor<f32> {pp.slot = #pp.slot<loss>})
// CHECK-SAME: attributes {pp.microbatches = 2 : i64, pp.phase = #pp<phase forward>, pp.recompute, pp.stage = 0 : i64}
func.func @train_step_s0_forward(%w: tensor<4x4xf32> {pp.slot = #pp.slot<param 0>})
    -> (tensor<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.stage = 0 : i64, pp.phase = #pp<phase forward>,
                pp.microbatches = 2 : i64, pp.recompute} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// CHECK-LABEL: func.func @gemm
// CHECK: linalg.matmul {pp.gemm = "library"}
func.func @gemm(%a: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>)
      outs(%c : memref<4x4xf32>)
  return
}

// CHECK: pp.schedule @simulated
// CHECK-SAME: pp.idle = array<f64: 0.000000e+00>, pp.makespan = 2.000000e+00 : f64, pp.peak_memory = array<f64: 1.000000e+00>, pp.steady_step = 2.000000e+00 : f64
pp.schedule @simulated "gpipe" for @train_step microbatches 1 stage_rank [0]
    attributes {pp.makespan = 2.0 : f64, pp.idle = array<f64: 0.0>,
                pp.peak_memory = array<f64: 1.0>,
                pp.steady_step = 2.0 : f64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
  }
}
