// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-split-microbatches=num-microbatches=3

// expected-error @+1 {{batch dimension of size 4 is not divisible into 3 micro-batches}}
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x2xf32> {pp.param}) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %h : tensor<4x2xf32>
}

// -----

// expected-error @+1 {{no training-step function named 'train_step'}}
module {
  func.func @other() { return }
}

// -----

func.func @train_step(%x: tensor<6x3xf32>, %w: tensor<3x2xf32> {pp.param}) -> tensor<2x2xf32> {
  // expected-error @+1 {{'tensor.extract_slice' op must take the whole batch dimension}}
  %s = tensor.extract_slice %x[0, 0] [2, 2] [1, 1] : tensor<6x3xf32> to tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

func.func @train_step(%x: tensor<6x3xf32>, %w: tensor<6x3xf32> {pp.param}) -> tensor<6x3xf32> {
  %e = tensor.empty() : tensor<6x3xf32>
  // expected-error @+1 {{operand #1 is indexed by the batch dimension but is neither batch data nor the same in every row of the batch (zeros, a broadcast weight)}}
  %a = linalg.add ins(%x, %w : tensor<6x3xf32>, tensor<6x3xf32>) outs(%e : tensor<6x3xf32>) -> tensor<6x3xf32>
  return %a : tensor<6x3xf32>
}

// -----

// expected-error @+1 {{batch data must be a ranked tensor with a static batch dimension, got 'f32'}}
func.func @train_step(%lr: f32, %w: tensor<3x2xf32> {pp.param}) -> tensor<3x2xf32> {
  return %w : tensor<3x2xf32>
}

// -----

// A step exported at the micro-batch shape for another count.
// expected-error @+1 {{the training step is split into 2 micro-batches already, not 3}}
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x2xf32> {pp.param}) -> tensor<4x3xf32> attributes {pp.microbatches = 2 : i64} {
  return %x : tensor<4x3xf32>
}

// -----

// Row indices of the whole batch (an arange over it) differ per
// micro-batch, so they cannot be re-created at micro-batch size.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @train_step(%x: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %e = tensor.empty() : tensor<6x3xf32>
  %rows = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<6x3xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    linalg.yield %f : f32
  } -> tensor<6x3xf32>
  // expected-error @+1 {{operand #1 is indexed by the batch dimension but is neither batch data nor the same in every row of the batch (zeros, a broadcast weight)}}
  %a = linalg.add ins(%x, %rows : tensor<6x3xf32>, tensor<6x3xf32>) outs(%e : tensor<6x3xf32>) -> tensor<6x3xf32>
  return %a : tensor<6x3xf32>
}
