// RUN: pp-opt %s -split-input-file --pp-plan-parallelism="devices=2 optimizer=adam memory-per-device=1000" -verify-diagnostics -o /dev/null
// RUN: not pp-opt %s -split-input-file --pp-plan-parallelism="devices=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not pp-opt %s -split-input-file --pp-plan-parallelism="devices=2 optimizer=lion" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not pp-opt %s -split-input-file --pp-plan-parallelism="devices=2 zero=0,2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// DEVICES: error: devices must be at least 1, got 0
// OPTIMIZER: error: optimizer must be sgd or adam, got 'lion'
// ZERO: error: zero must be 0, 1 or 3, got 2

// A 2-layer MLP of 8x8 weights (256 bytes each, 1024 with Adam's state)
// fits no layout of 2 devices in 1000 bytes.
// expected-error @+4 {{no layout of 2 devices fits: the least memory one needs is 1152 bytes per device (T = 1, P = 2, R = 1)}}
// expected-note @+3 {{T = 1, P = 1, R = 2: memory: needs 2304 bytes per device, above 1000}}
// expected-note @+2 {{T = 1, P = 2, R = 1: memory: needs 1152 bytes per device, above 1000}}
// expected-note @+1 {{T = 2, P = 1, R = 1: memory: needs 1280 bytes per device, above 1000}}
func.func @train_step(%x: tensor<2x8xf32>, %w0: tensor<8x8xf32> {pp.param},
                      %w1: tensor<8x8xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<2x8xf32>, tensor<8x8xf32>) outs(%z : tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = linalg.max ins(%h, %z : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %o = linalg.matmul ins(%r, %w1 : tensor<2x8xf32>, tensor<8x8xf32>) outs(%z : tensor<2x8xf32>) -> tensor<2x8xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%o : tensor<2x8xf32>) outs(%s1 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) { %t = arith.addf %a, %b : f32
      linalg.yield %t : f32 }
  return %l : tensor<f32>
}
