#loc1 = loc("torch/nn/modules/linear.py":134:0)
#loc2 = loc("gen_torch_inputs.py":62:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("layer.weight":0:0)
#loc7 = loc("layer.bias":0:0)
#loc8 = loc("python/pp/torch.py":129:0)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<() -> ()>
#loc9 = loc(callsite(#loc2 at #loc3))
#loc10 = loc(callsite(#loc1 at #loc9))
module {
  func.func @train_step(%arg0: tensor<16x8xf32> loc("inputs[0]":0:0), %arg1: tensor<16x4xf32> {pp.target} loc("targets[0]":0:0), %arg2: tensor<4x8xf32> {pp.name = "layer.weight", pp.param} loc("layer.weight":0:0), %arg3: tensor<4xf32> {pp.name = "layer.bias", pp.param} loc("layer.bias":0:0)) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc8)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %cst_0 = arith.constant 6.400000e+01 : f32 loc(#loc)
    %0 = tensor.empty() : tensor<8x4xf32> loc(#loc10)
    %transposed = linalg.transpose ins(%arg2 : tensor<4x8xf32>) outs(%0 : tensor<8x4xf32>) permutation = [1, 0]  loc(#loc10)
    %1 = tensor.empty() : tensor<16x4xf32> loc(#loc10)
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc10)
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<16x8xf32>, tensor<8x4xf32>) outs(%2 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc10)
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc9)), %out: f32 loc(callsite(#loc1 at #loc9))):
      linalg.yield %in : f32 loc(#loc10)
    } -> tensor<16x4xf32> loc(#loc10)
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc9)), %in_1: f32 loc(callsite(#loc1 at #loc9)), %out: f32 loc(callsite(#loc1 at #loc9))):
      %13 = arith.addf %in, %in_1 : f32 loc(#loc10)
      linalg.yield %13 : f32 loc(#loc10)
    } -> tensor<16x4xf32> loc(#loc10)
    %6 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc9)), %out: f32 loc(callsite(#loc2 at #loc3))):
      %13 = math.tan %in : f32 loc(#loc9)
      linalg.yield %13 : f32 loc(#loc9)
    } -> tensor<16x4xf32> loc(#loc9)
    %7 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%6, %arg1 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc2 at #loc3)), %in_1: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %13 = arith.subf %in, %in_1 : f32 loc(#loc8)
      linalg.yield %13 : f32 loc(#loc8)
    } -> tensor<16x4xf32> loc(#loc8)
    %8 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %13 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc8)
      linalg.yield %13 : f32 loc(#loc8)
    } -> tensor<16x4xf32> loc(#loc8)
    %9 = tensor.empty() : tensor<f32> loc(#loc8)
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<f32>) -> tensor<f32> loc(#loc8)
    %11 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["reduction", "reduction"]} ins(%8 : tensor<16x4xf32>) outs(%10 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %13 = arith.addf %in, %out : f32 loc(#loc8)
      linalg.yield %13 : f32 loc(#loc8)
    } -> tensor<f32> loc(#loc8)
    %12 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = []} ins(%11 : tensor<f32>) outs(%9 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %13 = arith.divf %in, %cst_0 : f32 loc(#loc8)
      linalg.yield %13 : f32 loc(#loc8)
    } -> tensor<f32> loc(#loc8)
    return %12 : tensor<f32> loc(#loc8)
  } loc(#loc10)
} loc(#loc)
#loc = loc(unknown)
