// Finite-difference check of the data-movement ops: linalg.transpose,
// linalg.broadcast, tensor.expand_shape, collapse_shape, reshape,
// extract_slice (strided and rank-reducing), insert_slice, concat and pad.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @train_step(%x: tensor<4x6xf32>, %y: tensor<4x10xf32> {pp.target},
                      %v: tensor<8x6xf32> {pp.param},
                      %b: tensor<8xf32> {pp.param},
                      %u: tensor<2x4xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e68 = tensor.empty() : tensor<6x8xf32>
  %vt = linalg.transpose ins(%v : tensor<8x6xf32>) outs(%e68 : tensor<6x8xf32>) permutation = [1, 0]
  %e48 = tensor.empty() : tensor<4x8xf32>
  %z48 = linalg.fill ins(%zero : f32) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x, %vt : tensor<4x6xf32>, tensor<6x8xf32>) outs(%z48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e48 : tensor<4x8xf32>) dimensions = [0]
  %hb = linalg.add ins(%h, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x3 = tensor.expand_shape %hb [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %e3 = tensor.empty() : tensor<4x2x4xf32>
  %t3 = linalg.tanh ins(%x3 : tensor<4x2x4xf32>) outs(%e3 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %ub = linalg.broadcast ins(%u : tensor<2x4xf32>) outs(%e3 : tensor<4x2x4xf32>) dimensions = [0]
  %m3 = linalg.mul ins(%t3, %ub : tensor<4x2x4xf32>, tensor<4x2x4xf32>) outs(%e3 : tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %c = tensor.collapse_shape %m3 [[0], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
  %lo = tensor.extract_slice %c[0, 0] [4, 3] [1, 1] : tensor<4x8xf32> to tensor<4x3xf32>
  %hi = tensor.extract_slice %c[0, 3] [4, 5] [1, 1] : tensor<4x8xf32> to tensor<4x5xf32>
  %cat = tensor.concat dim(1) %hi, %lo : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  %st = tensor.extract_slice %cat[0, 1] [4, 4] [1, 2] : tensor<4x8xf32> to tensor<4x4xf32>
  %rr = tensor.extract_slice %x3[0, 1, 0] [4, 1, 4] [1, 1, 1] : tensor<4x2x4xf32> to tensor<4x4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %sr = linalg.mul ins(%st, %rr : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e44 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %pad = tensor.pad %cat low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<4x10xf32>
  %ins = tensor.insert_slice %sr into %pad[0, 3] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x10xf32>
  %shape = arith.constant dense<[4, 2, 5]> : tensor<3xindex>
  %r3 = tensor.reshape %ins(%shape) : (tensor<4x10xf32>, tensor<3xindex>) -> tensor<4x2x5xf32>
  %f = tensor.collapse_shape %r3 [[0], [1, 2]] : tensor<4x2x5xf32> into tensor<4x10xf32>
  %e410 = tensor.empty() : tensor<4x10xf32>
  %d = linalg.sub ins(%f, %y : tensor<4x10xf32>, tensor<4x10xf32>) outs(%e410 : tensor<4x10xf32>) -> tensor<4x10xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x10xf32>, tensor<4x10xf32>) outs(%e410 : tensor<4x10xf32>) -> tensor<4x10xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x10xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %loss : tensor<f32>
}
