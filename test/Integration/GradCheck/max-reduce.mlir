// Finite-difference check of max and min reductions: linalg.reduce with
// arith.maximumf and arith.minimumf, and a linalg.generic with
// arith.maxnumf. The last reduces a broadcast weight, so every iteration
// ties: the gradient is shared between ties, not given to each.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
#x2 = affine_map<(i, j) -> (i, j)>
#r2 = affine_map<(i, j) -> (i)>
#x3 = affine_map<(i, j, k) -> (i, j)>
#r3 = affine_map<(i, j, k) -> (i, k)>
#c3 = affine_map<(i, j, k) -> (k)>
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x5xf32> {pp.target},
                      %w: tensor<3x5xf32> {pp.param},
                      %c: tensor<5xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %highest = arith.constant 3.40282347E+38 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %lo4 = linalg.fill ins(%lowest : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %hi4 = linalg.fill ins(%highest : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %mx = linalg.reduce ins(%h : tensor<4x5xf32>) outs(%lo4 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %mn = linalg.reduce ins(%h : tensor<4x5xf32>) outs(%hi4 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.minimumf %acc, %in : f32
      linalg.yield %m : f32
    }
  // max over j of tanh(h[i, j]) * 2
  %mg = linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x5xf32>) outs(%lo4 : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %two = arith.constant 2.0 : f32
      %t = math.tanh %a : f32
      %t2 = arith.mulf %t, %two : f32
      %m = arith.maxnumf %t2, %acc : f32
      linalg.yield %m : f32
  } -> tensor<4xf32>
  // max over j of x[i, j] * 0 + c[k]: three ties per element.
  %lo45 = linalg.fill ins(%lowest : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %mc = linalg.generic {indexing_maps = [#x3, #c3, #r3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %c : tensor<4x3xf32>, tensor<5xf32>) outs(%lo45 : tensor<4x5xf32>) {
    ^bb0(%a: f32, %ck: f32, %acc: f32):
      %m = arith.maximumf %ck, %acc : f32
      linalg.yield %m : f32
  } -> tensor<4x5xf32>
  // loss = sum_ij y[i,j] * (mx[i]^2 + mn[i] + exp(mg[i]) + mc[i,j] * h[i,j])
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#x2, #r2, #r2, #r2, #x2, #x2, affine_map<(i, j) -> ()>],
                          iterator_types = ["reduction", "reduction"]}
      ins(%y, %mx, %mn, %mg, %mc, %h : tensor<4x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
      outs(%zs : tensor<f32>) {
    ^bb0(%t: f32, %a: f32, %b: f32, %g: f32, %m: f32, %hh: f32, %acc: f32):
      %a2 = arith.mulf %a, %a : f32
      %eg = math.exp %g : f32
      %mh = arith.mulf %m, %hh : f32
      %s1 = arith.addf %a2, %b : f32
      %s2 = arith.addf %s1, %eg : f32
      %s3 = arith.addf %s2, %mh : f32
      %p = arith.mulf %t, %s3 : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
