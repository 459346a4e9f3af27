// A training step over rank-5 and rank-6 tensors (runtime buffers hold up
// to 6 dims): a per-(group, head) contraction of a rank-5 batch, tanh, the
// rank-6 outer product of each row with itself, and a contraction of that
// with a rank-6 weight down to 2 outputs; squared-error loss. The
// unpipelined reference of rank6-cuts.mlir, which adds stage markers.
#x = affine_map<(b, g, h, m, n, k) -> (b, g, h, m, k)>
#w1 = affine_map<(b, g, h, m, n, k) -> (g, h, k, n)>
#y1 = affine_map<(b, g, h, m, n, k) -> (b, g, h, m, n)>
#id5 = affine_map<(b, g, h, m, n) -> (b, g, h, m, n)>
#l = affine_map<(b, g, h, m, n, p) -> (b, g, h, m, n)>
#r = affine_map<(b, g, h, m, n, p) -> (b, g, h, m, p)>
#id6 = affine_map<(b, g, h, m, n, p) -> (b, g, h, m, n, p)>
#o = affine_map<(b, c, g, h, m, n, p) -> (b, g, h, m, n, p)>
#w2 = affine_map<(b, c, g, h, m, n, p) -> (g, h, m, n, p, c)>
#c = affine_map<(b, c, g, h, m, n, p) -> (b, c)>
func.func @train_step(%x: tensor<8x2x2x3x4xf32>,
                      %t: tensor<8x2xf32> {pp.target},
                      %w1: tensor<2x2x4x4xf32> {pp.param},
                      %w2: tensor<2x2x3x4x4x2xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<8x2x2x3x4xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<8x2x2x3x4xf32>) -> tensor<8x2x2x3x4xf32>
  %y1 = linalg.generic {indexing_maps = [#x, #w1, #y1],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<8x2x2x3x4xf32>, tensor<2x2x4x4xf32>) outs(%z5 : tensor<8x2x2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x2x2x3x4xf32>
  %a1 = linalg.generic {indexing_maps = [#id5, #id5],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%y1 : tensor<8x2x2x3x4xf32>) outs(%e5 : tensor<8x2x2x3x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  } -> tensor<8x2x2x3x4xf32>
  %e6 = tensor.empty() : tensor<8x2x2x3x4x4xf32>
  %outer = linalg.generic {indexing_maps = [#l, #r, #id6],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%a1, %a1 : tensor<8x2x2x3x4xf32>, tensor<8x2x2x3x4xf32>) outs(%e6 : tensor<8x2x2x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<8x2x2x3x4x4xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %pred = linalg.generic {indexing_maps = [#o, #w2, #c],
      iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "reduction"]}
      ins(%outer, %w2 : tensor<8x2x2x3x4x4xf32>, tensor<2x2x3x4x4x2xf32>) outs(%z2 : tensor<8x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x2xf32>
  %diff = linalg.sub ins(%pred, %t : tensor<8x2xf32>, tensor<8x2xf32>) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %sq = linalg.mul ins(%diff, %diff : tensor<8x2xf32>, tensor<8x2xf32>) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%sq : tensor<8x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %scale = arith.constant dense<0.0625> : tensor<f32>
  %loss = linalg.mul ins(%sum, %scale : tensor<f32>, tensor<f32>) outs(%es : tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
