// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-plan-tensor-parallel="vocabulary=true tensor-parallel=2"

// A vocabulary of 5 does not split in 2.
func.func @train_step(%tokens: tensor<8x5xf32>, %wte: tensor<5x4xf32> {pp.param}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  // expected-error @+1 {{the vocabulary-parallel plan splits dimension 0 of weight 1 (a vocabulary of 5) over 2 tensor-parallel processes, which does not divide it}}
  %x = linalg.matmul ins(%tokens, %wte : tensor<8x5xf32>, tensor<5x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %x : tensor<8x4xf32>
}

// -----

// No weight is read against data only: there is no table to split.
// expected-error @+1 {{the vocabulary-parallel plan finds no embedding table in 'train_step' (a weight summed over one dimension against data only)}}
func.func @train_step(%x: tensor<8x4xf32>, %w: tensor<4x4xf32> {pp.param}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %t = linalg.exp ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%t, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
