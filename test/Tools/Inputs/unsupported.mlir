// A model using an op pp-derive-backward has no rule for.
func.func @train_step(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tensor.extract %h[%c0, %c0] : tensor<4x4xf32>
  %l = tensor.from_elements %s : tensor<f32>
  return %l : tensor<f32>
}
