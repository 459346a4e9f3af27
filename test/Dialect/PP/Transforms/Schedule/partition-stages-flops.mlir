// Without markers, the planner balances estimated time (docs/CostModel.md).
// Here the matmuls cost 4*64*64*2 = 32768, 32768, 4*64*8*2 = 4096 and
// 4*8*8*2 = 512 FLOPs and move 19456, 19456, 3328 and 640 bytes: on the
// default device (memory bound) as by FLOPs, two stages cut after the first
// matmul, three stages put the two small matmuls together.
// RUN: pp-opt %s --pp-partition-stages=num-stages=2 | FileCheck %s --check-prefix=TWO
// RUN: pp-opt %s --pp-partition-stages=num-stages=3 | FileCheck %s --check-prefix=THREE

// TWO: pp.stage 0 (%arg0, %arg1) : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
// TWO: linalg.matmul
// TWO-NOT: linalg.matmul
// TWO: pp.stage 1 ({{.*}}, %arg2, %arg3, %arg4) :
// TWO-COUNT-3: linalg.matmul
// TWO-NOT: linalg.matmul
// TWO-NOT: pp.stage 2

// THREE: pp.stage 0
// THREE: linalg.matmul
// THREE-NOT: linalg.matmul
// THREE: pp.stage 1
// THREE: linalg.matmul
// THREE-NOT: linalg.matmul
// THREE: pp.stage 2
// THREE-COUNT-2: linalg.matmul
// THREE-NOT: linalg.matmul

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
