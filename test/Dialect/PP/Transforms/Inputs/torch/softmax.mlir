#loc1 = loc("torch/nn/modules/linear.py":134:0)
#loc2 = loc("gen_torch_inputs.py":87:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("head.weight":0:0)
#loc7 = loc("head.bias":0:0)
#loc8 = loc("python/pp/torch.py":129:0)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0, d1) -> ()>
#map5 = affine_map<() -> ()>
#loc9 = loc(callsite(#loc2 at #loc3))
#loc10 = loc(callsite(#loc1 at #loc9))
module {
  func.func @train_step(%arg0: tensor<16x8xf32> loc("inputs[0]":0:0), %arg1: tensor<16x4xf32> {pp.target} loc("targets[0]":0:0), %arg2: tensor<4x8xf32> {pp.name = "head.weight", pp.param} loc("head.weight":0:0), %arg3: tensor<4xf32> {pp.name = "head.bias", pp.param} loc("head.bias":0:0)) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc8)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %c0_i64 = arith.constant 0 : i64 loc(#loc)
    %cst_0 = arith.constant 0xFF800000 : f32 loc(#loc9)
    %cst_1 = arith.constant 6.400000e+01 : f32 loc(#loc)
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
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc9)), %in_2: f32 loc(callsite(#loc1 at #loc9)), %out: f32 loc(callsite(#loc1 at #loc9))):
      %23 = arith.addf %in, %in_2 : f32 loc(#loc10)
      linalg.yield %23 : f32 loc(#loc10)
    } -> tensor<16x4xf32> loc(#loc10)
    %6 = tensor.empty() : tensor<16xi64> loc(#loc9)
    %7 = linalg.fill ins(%c0_i64 : i64) outs(%6 : tensor<16xi64>) -> tensor<16xi64> loc(#loc9)
    %8 = tensor.empty() : tensor<16xf32> loc(#loc9)
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<16xf32>) -> tensor<16xf32> loc(#loc9)
    %10:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "reduction"]} ins(%5 : tensor<16x4xf32>) outs(%9, %7 : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc9)), %out: f32 loc(callsite(#loc2 at #loc3)), %out_2: i64 loc(callsite(#loc2 at #loc3))):
      %23 = linalg.index 1 : index loc(#loc9)
      %24 = arith.index_cast %23 : index to i64 loc(#loc9)
      %25 = arith.maximumf %in, %out : f32 loc(#loc9)
      %26 = arith.cmpf ogt, %in, %out : f32 loc(#loc9)
      %27 = arith.select %26, %24, %out_2 : i64 loc(#loc9)
      linalg.yield %25, %27 : f32, i64 loc(#loc9)
    } -> (tensor<16xf32>, tensor<16xi64>) loc(#loc9)
    %expanded = tensor.expand_shape %10#0 [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32> loc(#loc9)
    %11 = linalg.generic {indexing_maps = [#map1, #map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%5, %expanded : tensor<16x4xf32>, tensor<16x1xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc9)), %in_2: f32 loc(callsite(#loc2 at #loc3)), %out: f32 loc(callsite(#loc2 at #loc3))):
      %23 = arith.subf %in, %in_2 : f32 loc(#loc9)
      linalg.yield %23 : f32 loc(#loc9)
    } -> tensor<16x4xf32> loc(#loc9)
    %12 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc2 at #loc3)), %out: f32 loc(callsite(#loc2 at #loc3))):
      %23 = math.exp %in : f32 loc(#loc9)
      linalg.yield %23 : f32 loc(#loc9)
    } -> tensor<16x4xf32> loc(#loc9)
    %13 = tensor.empty() : tensor<16x1xf32> loc(#loc9)
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<16x1xf32>) -> tensor<16x1xf32> loc(#loc9)
    %15 = linalg.generic {indexing_maps = [#map1, #map3], iterator_types = ["parallel", "reduction"]} ins(%12 : tensor<16x4xf32>) outs(%14 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc2 at #loc3)), %out: f32 loc(callsite(#loc2 at #loc3))):
      %23 = arith.addf %in, %out : f32 loc(#loc9)
      linalg.yield %23 : f32 loc(#loc9)
    } -> tensor<16x1xf32> loc(#loc9)
    %16 = linalg.generic {indexing_maps = [#map1, #map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%12, %15 : tensor<16x4xf32>, tensor<16x1xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc2 at #loc3)), %in_2: f32 loc(callsite(#loc2 at #loc3)), %out: f32 loc(callsite(#loc2 at #loc3))):
      %23 = arith.divf %in, %in_2 : f32 loc(#loc9)
      linalg.yield %23 : f32 loc(#loc9)
    } -> tensor<16x4xf32> loc(#loc9)
    %17 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%16, %arg1 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc2 at #loc3)), %in_2: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %23 = arith.subf %in, %in_2 : f32 loc(#loc8)
      linalg.yield %23 : f32 loc(#loc8)
    } -> tensor<16x4xf32> loc(#loc8)
    %18 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%17 : tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %23 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc8)
      linalg.yield %23 : f32 loc(#loc8)
    } -> tensor<16x4xf32> loc(#loc8)
    %19 = tensor.empty() : tensor<f32> loc(#loc8)
    %20 = linalg.fill ins(%cst : f32) outs(%19 : tensor<f32>) -> tensor<f32> loc(#loc8)
    %21 = linalg.generic {indexing_maps = [#map1, #map4], iterator_types = ["reduction", "reduction"]} ins(%18 : tensor<16x4xf32>) outs(%20 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %23 = arith.addf %in, %out : f32 loc(#loc8)
      linalg.yield %23 : f32 loc(#loc8)
    } -> tensor<f32> loc(#loc8)
    %22 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = []} ins(%21 : tensor<f32>) outs(%19 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %23 = arith.divf %in, %cst_1 : f32 loc(#loc8)
      linalg.yield %23 : f32 loc(#loc8)
    } -> tensor<f32> loc(#loc8)
    return %22 : tensor<f32> loc(#loc8)
  } loc(#loc10)
} loc(#loc)
#loc = loc(unknown)
