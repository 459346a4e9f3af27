// RUN: pp-opt %s -split-input-file --pp-split-microbatches=num-microbatches=2 | FileCheck %s

// Zeros shaped like the batch, as PyTorch writes them: a splat constant
// read by a linalg op (an LSTM's initial state), and a fill of an empty
// (scaled_dot_product_attention's mask), both at micro-batch size.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %{{.*}}: tensor<2x3xf32>
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: linalg.add ins(%{{.*}}, %[[ZEROS]] : tensor<2x3xf32>, tensor<2x3xf32>)
func.func @train_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %zeros = arith.constant dense<0.0> : tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %h = linalg.add ins(%x, %zeros : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}

// -----

// A ViT's class token: a weight broadcast to the batch and concatenated
// with the patches along the sequence; the broadcast is re-created at
// micro-batch size.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x1x8xf32>
// CHECK: %[[CLS:.*]] = linalg.broadcast ins(%{{.*}} : tensor<8xf32>) outs(%[[E]] : tensor<2x1x8xf32>) dimensions = [0, 1]
// CHECK: tensor.concat dim(1) %[[CLS]], %{{.*}} : (tensor<2x1x8xf32>, tensor<2x4x8xf32>) -> tensor<2x5x8xf32>
func.func @train_step(%x: tensor<4x4x8xf32>, %cls: tensor<8xf32> {pp.param}) -> tensor<4x5x8xf32> {
  %e = tensor.empty() : tensor<4x1x8xf32>
  %b = linalg.broadcast ins(%cls : tensor<8xf32>) outs(%e : tensor<4x1x8xf32>) dimensions = [0, 1]
  %c = tensor.concat dim(1) %b, %x : (tensor<4x1x8xf32>, tensor<4x4x8xf32>) -> tensor<4x5x8xf32>
  return %c : tensor<4x5x8xf32>
}

// -----

// nn.MultiheadAttention's rows: sequence-first [3, batch] merged into one
// dimension for the output projection, then split back. The merged rows
// of a micro-batch are 3 x 2; the expansion finds the batch after the 3.
// CHECK-LABEL: func.func @train_step
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x5xf32>) outs(%{{.*}} : tensor<3x2x5xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<3x2x5xf32> into tensor<6x5xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<6x5xf32>, tensor<5x5xf32>) outs(%{{.*}} : tensor<6x5xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [3, 2, 5] : tensor<6x5xf32> into tensor<3x2x5xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<3x2x5xf32>) outs(%{{.*}} : tensor<2x3x5xf32>)
func.func @train_step(%x: tensor<4x3x5xf32>, %w: tensor<5x5xf32> {pp.param}) -> tensor<4x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<3x4x5xf32>
  %t = linalg.transpose ins(%x : tensor<4x3x5xf32>) outs(%et : tensor<3x4x5xf32>) permutation = [1, 0, 2]
  %rows = tensor.collapse_shape %t [[0, 1], [2]] : tensor<3x4x5xf32> into tensor<12x5xf32>
  %em = tensor.empty() : tensor<12x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%em : tensor<12x5xf32>) -> tensor<12x5xf32>
  %p = linalg.matmul ins(%rows, %w : tensor<12x5xf32>, tensor<5x5xf32>) outs(%z : tensor<12x5xf32>) -> tensor<12x5xf32>
  %back = tensor.expand_shape %p [[0, 1], [2]] output_shape [3, 4, 5] : tensor<12x5xf32> into tensor<3x4x5xf32>
  %eb = tensor.empty() : tensor<4x3x5xf32>
  %r = linalg.transpose ins(%back : tensor<3x4x5xf32>) outs(%eb : tensor<4x3x5xf32>) permutation = [1, 0, 2]
  return %r : tensor<4x3x5xf32>
}

// -----

// Padding of other dimensions than the batch (a convolution's).
// CHECK-LABEL: func.func @train_step
// CHECK: tensor.pad %{{.*}} low[0, 1] high[0, 1]
// CHECK: } : tensor<2x2xf32> to tensor<2x4xf32>
func.func @train_step(%x: tensor<4x2xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x2xf32> to tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}

// -----

// An RNN's zero initial state, [layers, batch, hidden] viewed as
// [batch, hidden]: the reshaped splat is re-created at micro-batch size.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H0:.*]] = arith.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: linalg.add ins(%{{.*}}, %[[H0]] : tensor<2x3xf32>, tensor<2x3xf32>)
func.func @train_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %zeros = arith.constant dense<0.0> : tensor<1x4x3xf32>
  %h0 = tensor.collapse_shape %zeros [[0, 1], [2]] : tensor<1x4x3xf32> into tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %h = linalg.add ins(%x, %h0 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}

// -----

// A GRU's first step multiplies its zero state by a weight: the product,
// computed without batch data, is re-created from micro-batch zeros.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H0:.*]] = arith.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x3xf32>)
// CHECK: %[[HW:.*]] = linalg.matmul ins(%[[H0]], %{{.*}} : tensor<2x3xf32>, tensor<3x3xf32>) outs(%[[Z]] : tensor<2x3xf32>)
// CHECK: linalg.add ins(%{{.*}}, %[[HW]] : tensor<2x3xf32>, tensor<2x3xf32>)
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %h0 = arith.constant dense<0.0> : tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %hw = linalg.matmul ins(%h0, %w : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.add ins(%x, %hw : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}
