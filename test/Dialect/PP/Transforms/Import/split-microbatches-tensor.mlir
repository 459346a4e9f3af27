// RUN: pp-opt %s --pp-split-microbatches=num-microbatches=2 | FileCheck %s

// Multi-head attention's data movement: heads split off with expand_shape,
// moved next to the batch with a transpose, merged into it for a batch
// matmul, and back; q and k sliced out of one projection; a concat.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %{{.*}}: tensor<2x3x8xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 2, 4] : tensor<2x3x8xf32> into tensor<2x3x2x4xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3x2x4xf32>) outs(%{{.*}} : tensor<2x2x3x4xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [4, 3, 2] [1, 1, 1] : tensor<4x3x4xf32> to tensor<4x3x2xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 2] [4, 3, 2] [1, 1, 1] : tensor<4x3x4xf32> to tensor<4x3x2xf32>
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<4x3x2xf32>, tensor<4x2x3xf32>) outs(%{{.*}} : tensor<4x3x3xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 1, 3, 4] [1, 1, 1, 1] : tensor<2x2x3x4xf32> to tensor<2x3x4xf32>
// CHECK: tensor.concat dim(2) %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<2x3x3xf32>) -> tensor<2x3x7xf32>
// CHECK: %[[DEST:.*]] = tensor.empty() : tensor<2x3x9xf32>
// CHECK: tensor.insert_slice %{{.*}} into %[[DEST]][0, 0, 1] [2, 3, 7] [1, 1, 1] : tensor<2x3x7xf32> into tensor<2x3x9xf32>
func.func @train_step(%x: tensor<4x3x8xf32>, %w: tensor<2x4xf32> {pp.param}) -> tensor<4x3x9xf32> {
  %zero = arith.constant 0.0 : f32
  %heads = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 3, 2, 4] : tensor<4x3x8xf32> into tensor<4x3x2x4xf32>
  %et = tensor.empty() : tensor<4x2x3x4xf32>
  %t = linalg.transpose ins(%heads : tensor<4x3x2x4xf32>) outs(%et : tensor<4x2x3x4xf32>) permutation = [0, 2, 1, 3]
  %bh = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<4x2x3x4xf32> into tensor<8x3x4xf32>
  %q = tensor.extract_slice %bh[0, 0, 0] [8, 3, 2] [1, 1, 1] : tensor<8x3x4xf32> to tensor<8x3x2xf32>
  %k = tensor.extract_slice %bh[0, 0, 2] [8, 3, 2] [1, 1, 1] : tensor<8x3x4xf32> to tensor<8x3x2xf32>
  %ekt = tensor.empty() : tensor<8x2x3xf32>
  %kt = linalg.transpose ins(%k : tensor<8x3x2xf32>) outs(%ekt : tensor<8x2x3xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x3x3xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x3x3xf32>) -> tensor<8x3x3xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x3x2xf32>, tensor<8x2x3xf32>) outs(%zs : tensor<8x3x3xf32>) -> tensor<8x3x3xf32>
  %back = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [4, 2, 3, 3] : tensor<8x3x3xf32> into tensor<4x2x3x3xf32>
  %head0 = tensor.extract_slice %t[0, 0, 0, 0] [4, 1, 3, 4] [1, 1, 1, 1] : tensor<4x2x3x4xf32> to tensor<4x3x4xf32>
  %s0 = tensor.extract_slice %back[0, 0, 0, 0] [4, 1, 3, 3] [1, 1, 1, 1] : tensor<4x2x3x3xf32> to tensor<4x3x3xf32>
  %cat = tensor.concat dim(2) %head0, %s0 : (tensor<4x3x4xf32>, tensor<4x3x3xf32>) -> tensor<4x3x7xf32>
  %ed = tensor.empty() : tensor<4x3x9xf32>
  %r = tensor.insert_slice %cat into %ed[0, 0, 1] [4, 3, 7] [1, 1, 1] : tensor<4x3x7xf32> into tensor<4x3x9xf32>
  return %r : tensor<4x3x9xf32>
}
