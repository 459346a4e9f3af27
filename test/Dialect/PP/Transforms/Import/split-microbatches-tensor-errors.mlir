// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-split-microbatches=num-microbatches=2

func.func @train_step(%x: tensor<4x3xf32>) -> tensor<2x6xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  // expected-error @+1 {{'tensor.expand_shape' op splits a dimension that merges the batch with outer dimensions of size 3 elsewhere than between them}}
  %r = tensor.expand_shape %c [[0, 1]] output_shape [2, 6] : tensor<12xf32> into tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

func.func @train_step(%x: tensor<6x2xf32>) -> tensor<3x2x2xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op splits the batch dimension into an outer dimension of size 3, not divisible into 2 micro-batches}}
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [3, 2, 2] : tensor<6x2xf32> into tensor<3x2x2xf32>
  return %e : tensor<3x2x2xf32>
}

// -----

func.func @train_step(%x: tensor<4x2xf32>, %w: tensor<4x2xf32> {pp.param}) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tensor.concat' op operand #1 is not batch data, nor computed from weights and constants alone}}
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

func.func @train_step(%x: tensor<4x2xf32>) -> tensor<6x2xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op pads the batch dimension}}
  %p = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x2xf32> to tensor<6x2xf32>
  return %p : tensor<6x2xf32>
}

// -----

func.func @train_step(%x: tensor<4x2xf32>, %y: tensor<4x2xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'tensor.concat' op concatenates along the batch dimension}}
  %c = tensor.concat dim(0) %x, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  return %c : tensor<8x2xf32>
}

// -----

func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<12xf32>) -> tensor<12xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  %o = tensor.empty() : tensor<12xf32>
  // expected-error @+1 {{'linalg.add' op operand #1 merges its batch dimension with outer dimensions of another size than the other operands'}}
  %a = linalg.add ins(%c, %y : tensor<12xf32>, tensor<12xf32>) outs(%o : tensor<12xf32>) -> tensor<12xf32>
  return %a : tensor<12xf32>
}
