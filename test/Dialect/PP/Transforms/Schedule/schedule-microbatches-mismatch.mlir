// RUN: pp-opt %s --pp-split-microbatches=num-microbatches=2 --pp-partition-stages=num-stages=1 --pp-derive-backward --pp-schedule="num-microbatches=4" -verify-diagnostics
// RUN: pp-opt %s --pp-split-microbatches=num-microbatches=2 --pp-partition-stages=num-stages=1 --pp-derive-backward --pp-schedule | FileCheck %s

// CHECK: pp.schedule @train_step_schedule "1f1b" for @train_step microbatches 2 stage_rank [0]

func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x2xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  // The derived functions carry the location of the stage's first op.
  // expected-error @+1 {{the stage functions are split into 2 micro-batches, but num-microbatches is 4}}
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%h : tensor<4x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %l : tensor<f32>
}
