// A model whose result is a per-row loss, not one scalar: the runtime seeds
// and records one f32, so pp-compile rejects it.
func.func @train_step(%x: tensor<32x4xf32>, %w: tensor<4x4xf32> {pp.param}) -> tensor<32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x4xf32>) -> tensor<32x4xf32>
  %h = linalg.matmul ins(%x, %w : tensor<32x4xf32>, tensor<4x4xf32>) outs(%z : tensor<32x4xf32>) -> tensor<32x4xf32>
  %er = tensor.empty() : tensor<32xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<32xf32>) -> tensor<32xf32>
  %l = linalg.reduce ins(%h : tensor<32x4xf32>) outs(%zr : tensor<32xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %l : tensor<32xf32>
}
