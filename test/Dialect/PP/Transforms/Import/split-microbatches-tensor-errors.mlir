// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-split-microbatches=num-microbatches=2

func.func @train_step(%x: tensor<4x3xf32>) -> tensor<12xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  // expected-error @+1 {{'tensor.collapse_shape' op merges the batch dimension into an outer dimension of size 3}}
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  return %c : tensor<12xf32>
}

// -----

func.func @train_step(%x: tensor<6x2xf32>) -> tensor<3x2x2xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op splits the batch dimension into an outer dimension of size 3, not divisible into 2 micro-batches}}
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [3, 2, 2] : tensor<6x2xf32> into tensor<3x2x2xf32>
  return %e : tensor<3x2x2xf32>
}

// -----

func.func @train_step(%x: tensor<4x2xf32>, %w: tensor<4x2xf32> {pp.param}) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tensor.concat' op must concatenate batch data only, along another dimension than the batch}}
  %c = tensor.concat dim(1) %x, %w : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %c : tensor<4x4xf32>
}

// -----

func.func @train_step(%x: tensor<4x2xf32>, %w: tensor<2x2xf32> {pp.param}) -> tensor<4x2xf32> {
  // expected-error @+1 {{'tensor.insert_slice' op must insert batch data along the batch dimension of its destination, without rank reduction}}
  %r = tensor.insert_slice %w into %x[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

func.func @train_step(%x: tensor<4x2xf32>) -> tensor<8x2xf32> {
  %d = tensor.empty() : tensor<8x2xf32>
  // expected-error @+1 {{'tensor.insert_slice' op must fill the whole batch dimension}}
  %r = tensor.insert_slice %x into %d[0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<8x2xf32>
  return %r : tensor<8x2xf32>
}

// -----

func.func @train_step(%x: tensor<4x2xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op uses batch data but is not supported by pp-split-microbatches}}
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x2xf32> to tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
