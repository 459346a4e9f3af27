// Markers are cuts the plan must make; with num-stages above the markers'
// count the planner places the other cuts. The marker after the third
// matmul overrides the balanced cut after the first (partition-stages-flops);
// a third stage gets its cut from the planner: after the first matmul.
// RUN: pp-opt %s --pp-partition-stages | FileCheck %s --check-prefix=MARKED
// RUN: pp-opt %s --pp-partition-stages="num-stages=3 print-table" | FileCheck %s --check-prefix=MORE

// MARKED: pp.stage 0
// MARKED-COUNT-3: linalg.matmul
// MARKED: pp.stage 1
// MARKED-COUNT-1: linalg.matmul
// MARKED-NOT: pp.stage 2

// MORE: 0     0    0-0
// MORE: 1     1    1-2
// MORE: 2     2    3-3
// MORE-NOT: pp.boundary
// MORE: pp.stage 0
// MORE-COUNT-1: linalg.matmul
// MORE: pp.stage 1
// MORE-COUNT-2: linalg.matmul
// MORE: pp.stage 2
// MORE-COUNT-1: linalg.matmul
// MORE-NOT: pp.stage 3

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
  %cut = pp.boundary %c : tensor<4x8xf32>
  %d = linalg.matmul ins(%cut, %w3 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}
