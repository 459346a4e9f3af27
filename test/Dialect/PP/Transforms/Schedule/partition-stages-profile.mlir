// Profile-guided planning on six equal matmuls (4x64 through 64x64 weights;
// F = 9.728e-07 s each on the cpu device). The model cuts them 3 | 3; the
// profile of that partition measures stage 0 (ops 0-2) at 3x the model and
// stage 1 as modelled, so ops 0-2 cost 3 F, B and W each, and the re-plan
// balances 2 x 3 against 4 x 1: stage 0 keeps only ops 0-1. Stage 0's
// input takes no gradient: its B is 0 and W its whole backward, measured
// (the profile) as modelled, so one factor scales both.
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 print-table" -o /dev/null | FileCheck %s --check-prefix=MODEL
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 cost-file=%S/../Inputs/six-matmuls-stage0-3x.json print-table" | FileCheck %s --check-prefix=PROFILE

// MODEL:      stage rank ops       flops      F(s)       B(s)       W(s)
// MODEL-NEXT: 0     0    0-2       9.83e+04   2.918e-06  0          5.837e-06
// MODEL-NEXT: 1     1    3-5       9.83e+04   2.918e-06  2.918e-06  2.918e-06

// PROFILE:      stage rank ops       flops      F(s)       B(s)       W(s)
// PROFILE-NEXT: 0     0    0-1       6.554e+04  5.837e-06  0          1.167e-05
// PROFILE-NEXT: 1     1    2-5       1.311e+05  5.837e-06  5.837e-06  5.837e-06
// PROFILE-NEXT: rank  device   time(s)
// PROFILE-NEXT: 0     cpu      1.97152e-05
// PROFILE-NEXT: 1     cpu      1.97152e-05
// PROFILE:      pp.stage 0
// PROFILE-COUNT-2: linalg.matmul
// PROFILE:      pp.stage 1
// PROFILE-COUNT-4: linalg.matmul

func.func @train_step(%x: tensor<4x64xf32>, %w0: tensor<64x64xf32> {pp.param},
                      %w1: tensor<64x64xf32> {pp.param},
                      %w2: tensor<64x64xf32> {pp.param},
                      %w3: tensor<64x64xf32> {pp.param},
                      %w4: tensor<64x64xf32> {pp.param},
                      %w5: tensor<64x64xf32> {pp.param}) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %c = linalg.matmul ins(%b, %w2 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %d = linalg.matmul ins(%c, %w3 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %f = linalg.matmul ins(%d, %w4 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %g = linalg.matmul ins(%f, %w5 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %g : tensor<4x64xf32>
}
