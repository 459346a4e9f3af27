// GPipe keeps all 4 micro-batches in flight: the best partition needs
// 2 x 18688 + 4 x 2176 = 46080 bytes on rank 1, over the 40000-byte cap
// (1f1b fits it: partition-stages-planner.mlir).
// RUN: pp-opt %s -verify-diagnostics --pp-partition-stages="num-stages=2 num-microbatches=4 memory-cap=40000 schedule=gpipe"
// With uneven caps (20000 and 10000 bytes) the error names the factor they
// must grow by: the best partition needs 67584 and 33792 bytes.
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=%S/../Inputs/uneven-memory.json" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// The same caps given per rank by memory-cap:
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 memory-cap=20000,10000" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: error: no partition into 2 stages fits the memory caps; the caps must grow by a factor of 3.3792 to 67584 33792 bytes

// expected-error @+1 {{no partition into 2 stages fits the memory caps; the smallest feasible cap is 46080 bytes per rank}}
func.func @train_step(%x: tensor<4x64xf32>, %w0: tensor<64x64xf32> {pp.param},
                      %w1: tensor<64x64xf32> {pp.param},
                      %w2: tensor<64x8xf32> {pp.param},
                      %w3: tensor<8x8xf32> {pp.param}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e64 = tensor.empty() : tensor<4x64xf32>
  %z64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z64 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z64 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %c = linalg.matmul ins(%b, %w2 : tensor<4x64xf32>, tensor<64x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = linalg.matmul ins(%c, %w3 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}
