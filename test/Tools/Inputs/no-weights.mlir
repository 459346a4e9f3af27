// A training step with data and a loss but no weight (pp.param).
func.func @train_step(%x: tensor<4x4xf32>, %y: tensor<4x4xf32> {pp.target}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %d = linalg.sub ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%d : tensor<4x4xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) { %t = arith.addf %a, %b : f32
      linalg.yield %t : f32 }
  return %r : tensor<f32>
}
