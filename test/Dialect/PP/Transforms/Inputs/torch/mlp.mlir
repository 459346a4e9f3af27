#loc1 = loc("torch/nn/modules/linear.py":134:0)
#loc2 = loc("torch/nn/modules/container.py":259:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("0.weight":0:0)
#loc7 = loc("0.bias":0:0)
#loc8 = loc("2.weight":0:0)
#loc9 = loc("2.bias":0:0)
#loc10 = loc("python/pp/torch.py":129:0)
#loc11 = loc("torch/nn/modules/activation.py":143:0)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<() -> ()>
#loc12 = loc(callsite(#loc2 at #loc3))
#loc13 = loc(callsite(#loc1 at #loc12))
#loc14 = loc(callsite(#loc11 at #loc12))
module {
  func.func @train_step(%arg0: tensor<16x16xf32> loc("inputs[0]":0:0), %arg1: tensor<16x4xf32> {pp.target} loc("targets[0]":0:0), %arg2: tensor<32x16xf32> {pp.name = "0.weight", pp.param} loc("0.weight":0:0), %arg3: tensor<32xf32> {pp.name = "0.bias", pp.param} loc("0.bias":0:0), %arg4: tensor<4x32xf32> {pp.name = "2.weight", pp.param} loc("2.weight":0:0), %arg5: tensor<4xf32> {pp.name = "2.bias", pp.param} loc("2.bias":0:0)) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc10)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %cst_0 = arith.constant 6.400000e+01 : f32 loc(#loc)
    %0 = tensor.empty() : tensor<16x32xf32> loc(#loc13)
    %transposed = linalg.transpose ins(%arg2 : tensor<32x16xf32>) outs(%0 : tensor<16x32xf32>) permutation = [1, 0]  loc(#loc13)
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x32xf32>) -> tensor<16x32xf32> loc(#loc13)
    %2 = linalg.matmul ins(%arg0, %transposed : tensor<16x16xf32>, tensor<16x32xf32>) outs(%1 : tensor<16x32xf32>) -> tensor<16x32xf32> loc(#loc13)
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<32xf32>) outs(%0 : tensor<16x32xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      linalg.yield %in : f32 loc(#loc13)
    } -> tensor<16x32xf32> loc(#loc13)
    %4 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%2, %3 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%0 : tensor<16x32xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %in_2: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %18 = arith.addf %in, %in_2 : f32 loc(#loc13)
      linalg.yield %18 : f32 loc(#loc13)
    } -> tensor<16x32xf32> loc(#loc13)
    %5 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<16x32xf32>) outs(%0 : tensor<16x32xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc11 at #loc12))):
      %18 = arith.cmpf ugt, %in, %cst : f32 loc(#loc14)
      %19 = arith.select %18, %in, %cst : f32 loc(#loc14)
      linalg.yield %19 : f32 loc(#loc14)
    } -> tensor<16x32xf32> loc(#loc14)
    %6 = tensor.empty() : tensor<32x4xf32> loc(#loc13)
    %transposed_1 = linalg.transpose ins(%arg4 : tensor<4x32xf32>) outs(%6 : tensor<32x4xf32>) permutation = [1, 0]  loc(#loc13)
    %7 = tensor.empty() : tensor<16x4xf32> loc(#loc13)
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc13)
    %9 = linalg.matmul ins(%5, %transposed_1 : tensor<16x32xf32>, tensor<32x4xf32>) outs(%8 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc13)
    %10 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<4xf32>) outs(%7 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      linalg.yield %in : f32 loc(#loc13)
    } -> tensor<16x4xf32> loc(#loc13)
    %11 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%9, %10 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%7 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %in_2: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %18 = arith.addf %in, %in_2 : f32 loc(#loc13)
      linalg.yield %18 : f32 loc(#loc13)
    } -> tensor<16x4xf32> loc(#loc13)
    %12 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%11, %arg1 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%7 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %in_2: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %18 = arith.subf %in, %in_2 : f32 loc(#loc10)
      linalg.yield %18 : f32 loc(#loc10)
    } -> tensor<16x4xf32> loc(#loc10)
    %13 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%12 : tensor<16x4xf32>) outs(%7 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %18 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc10)
      linalg.yield %18 : f32 loc(#loc10)
    } -> tensor<16x4xf32> loc(#loc10)
    %14 = tensor.empty() : tensor<f32> loc(#loc10)
    %15 = linalg.fill ins(%cst : f32) outs(%14 : tensor<f32>) -> tensor<f32> loc(#loc10)
    %16 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["reduction", "reduction"]} ins(%13 : tensor<16x4xf32>) outs(%15 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %18 = arith.addf %in, %out : f32 loc(#loc10)
      linalg.yield %18 : f32 loc(#loc10)
    } -> tensor<f32> loc(#loc10)
    %17 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = []} ins(%16 : tensor<f32>) outs(%14 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %18 = arith.divf %in, %cst_0 : f32 loc(#loc10)
      linalg.yield %18 : f32 loc(#loc10)
    } -> tensor<f32> loc(#loc10)
    return %17 : tensor<f32> loc(#loc10)
  } loc(#loc13)
} loc(#loc)
#loc = loc(unknown)
