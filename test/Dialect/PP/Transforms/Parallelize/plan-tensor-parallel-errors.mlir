// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-plan-tensor-parallel

// A mask computed from the index of the column-parallel dimension: the
// plan refuses to split it.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @train_step(%x: tensor<8x16xf32>, %w0: tensor<16x8xf32> {pp.param}, %w1: tensor<8x4xf32> {pp.param}) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-note @+1 {{the product by the weight}}
  %mm0 = linalg.matmul ins(%x, %w0 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %masked = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mm0 : tensor<8x8xf32>) outs(%e0 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    // expected-error @+1 {{'linalg.index' op reads loop dimension 1, which splitting the weight column-parallel splits: upstream partitioning would leave the index local}}
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %v = arith.select %keep, %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm1 = linalg.matmul ins(%masked, %w1 : tensor<8x8xf32>, tensor<8x4xf32>) outs(%z1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %mm1 : tensor<8x4xf32>
}

