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

// -----

// An MLP's first layer reads dense data as a table would, but nothing maps
// back to its 8 inputs: there is no vocabulary, and splitting that layer's
// rows would be no vocabulary-parallel plan at all.
// expected-error @+1 {{the vocabulary-parallel plan finds no output head in 'train_step': no weight product yields the 8 entries of the table weight 1 read as an embedding, so the step has no vocabulary to split}}
func.func @train_step(%x: tensor<4x8xf32>, %w0: tensor<8x6xf32> {pp.param}, %w1: tensor<6x2xf32> {pp.param}) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e2 = tensor.empty() : tensor<4x2xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = linalg.matmul ins(%h, %w1 : tensor<4x6xf32>, tensor<6x2xf32>) outs(%z2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
