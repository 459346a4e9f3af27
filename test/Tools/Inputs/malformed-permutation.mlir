// linalg.transpose with a malformed permutation: MLIR's parser crashed.
func.func @train_step(%w: tensor<4x4xf32> {pp.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, ]
  %z = tensor.empty() : tensor<f32>
  %r = linalg.reduce ins(%t : tensor<4x4xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}
