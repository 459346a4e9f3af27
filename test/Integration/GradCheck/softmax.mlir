// Finite-difference check of softmax written as linalg.generic ops (max
// shift, exp, sum, divide) and of the linalg.softmax op, which
// pp-derive-backward decomposes into the same kind of ops.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#x = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x5xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param},
                      %v: tensor<3x5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %lo4 = linalg.fill ins(%lowest : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.reduce ins(%h : tensor<4x5xf32>) outs(%lo4 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %mx = arith.maximumf %in, %acc : f32
      linalg.yield %mx : f32
    }
  %ex = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%h, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %x1 = math.exp %d : f32
      linalg.yield %x1 : f32
  } -> tensor<4x5xf32>
  %s = linalg.reduce ins(%ex : tensor<4x5xf32>) outs(%z4 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %p = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %s : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
  } -> tensor<4x5xf32>
  %k = linalg.matmul ins(%x, %v : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %q = linalg.softmax dimension(1) ins(%k : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %pq = linalg.add ins(%p, %q : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %d = linalg.sub ins(%pq, %y : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<4x5xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %loss : tensor<f32>
}
