// The MLP of examples/mlp with a constant held as a resource, as PyTorch's
// exports hold theirs: the loss weighs each output column by it (all ones).
func.func @train_step(%x: tensor<16x16xf32>,
                      %y: tensor<16x4xf32> {pp.target},
                      %w0: tensor<16x32xf32> {pp.param},
                      %b0: tensor<32xf32> {pp.param},
                      %w1: tensor<32x32xf32> {pp.param},
                      %b1: tensor<32xf32> {pp.param},
                      %w2: tensor<32x32xf32> {pp.param},
                      %b2: tensor<32xf32> {pp.param},
                      %w3: tensor<32x4xf32> {pp.param},
                      %b3: tensor<4xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  // layer 0
  %e0 = tensor.empty() : tensor<16x32xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm0 = linalg.matmul ins(%x, %w0 : tensor<16x16xf32>, tensor<16x32xf32>) outs(%z0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %bb0 = linalg.broadcast ins(%b0 : tensor<32xf32>) outs(%e0 : tensor<16x32xf32>) dimensions = [0]
  %pre0 = linalg.add ins(%mm0, %bb0 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %h0 = linalg.max ins(%pre0, %z0 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // layer 1
  %e1 = tensor.empty() : tensor<16x32xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm1 = linalg.matmul ins(%h0, %w1 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %bb1 = linalg.broadcast ins(%b1 : tensor<32xf32>) outs(%e1 : tensor<16x32xf32>) dimensions = [0]
  %pre1 = linalg.add ins(%mm1, %bb1 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %h1 = linalg.tanh ins(%pre1 : tensor<16x32xf32>) outs(%e1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // layer 2
  %e2 = tensor.empty() : tensor<16x32xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm2 = linalg.matmul ins(%h1, %w2 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %bb2 = linalg.broadcast ins(%b2 : tensor<32xf32>) outs(%e2 : tensor<16x32xf32>) dimensions = [0]
  %pre2 = linalg.add ins(%mm2, %bb2 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %h2 = linalg.max ins(%pre2, %z2 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  // layer 3
  %e3 = tensor.empty() : tensor<16x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %mm3 = linalg.matmul ins(%h2, %w3 : tensor<16x32xf32>, tensor<32x4xf32>) outs(%z3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %bb3 = linalg.broadcast ins(%b3 : tensor<4xf32>) outs(%e3 : tensor<16x4xf32>) dimensions = [0]
  %pre3 = linalg.add ins(%mm3, %bb3 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  // mean-squared-error loss
  %diff = linalg.sub ins(%pre3, %y : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %ones = arith.constant dense_resource<ones> : tensor<4xf32>
  %bones = linalg.broadcast ins(%ones : tensor<4xf32>) outs(%e3 : tensor<16x4xf32>) dimensions = [0]
  %d1 = linalg.mul ins(%diff, %bones : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %sq = linalg.mul ins(%d1, %diff : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e3 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%sq : tensor<16x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %scale = arith.constant dense<0.015625> : tensor<f32>
  %loss = linalg.mul ins(%sum, %scale : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
{-# dialect_resources: { builtin: { ones: "0x040000000000803F0000803F0000803F0000803F" } } #-}
