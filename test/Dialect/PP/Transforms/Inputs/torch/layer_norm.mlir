#loc1 = loc("torch/nn/modules/normalization.py":228:0)
#loc2 = loc("gen_torch_inputs.py":41:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("norm.weight":0:0)
#loc7 = loc("norm.bias":0:0)
#loc8 = loc("head.weight":0:0)
#loc9 = loc("head.bias":0:0)
#loc10 = loc("python/pp/torch.py":129:0)
#loc11 = loc("torch/nn/modules/linear.py":134:0)
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> ()>
#map4 = affine_map<() -> ()>
#loc12 = loc(callsite(#loc2 at #loc3))
#loc13 = loc(callsite(#loc1 at #loc12))
#loc14 = loc(callsite(#loc11 at #loc12))
module {
  func.func @train_step(%arg0: tensor<16x8xf32> loc("inputs[0]":0:0), %arg1: tensor<16x4xf32> {pp.target} loc("targets[0]":0:0), %arg2: tensor<8xf32> {pp.name = "norm.weight", pp.param} loc("norm.weight":0:0), %arg3: tensor<8xf32> {pp.name = "norm.bias", pp.param} loc("norm.bias":0:0), %arg4: tensor<4x8xf32> {pp.name = "head.weight", pp.param} loc("head.weight":0:0), %arg5: tensor<4xf32> {pp.name = "head.bias", pp.param} loc("head.bias":0:0)) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc10)
    %cst = arith.constant 0.000000e+00 : f64 loc(#loc)
    %cst_0 = arith.constant 0.000000e+00 : f32 loc(#loc)
    %cst_1 = arith.constant 1.000000e-05 : f64 loc(#loc13)
    %cst_2 = arith.constant 8.000000e+00 : f64 loc(#loc)
    %cst_3 = arith.constant 8.000000e+00 : f32 loc(#loc)
    %cst_4 = arith.constant 6.400000e+01 : f32 loc(#loc)
    %0 = tensor.empty() : tensor<16x8xf64> loc(#loc13)
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<16x8xf32>) outs(%0 : tensor<16x8xf64>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f64 loc(callsite(#loc1 at #loc12))):
      %34 = arith.extf %in : f32 to f64 loc(#loc13)
      linalg.yield %34 : f64 loc(#loc13)
    } -> tensor<16x8xf64> loc(#loc13)
    %2 = tensor.empty() : tensor<16x1xf64> loc(#loc13)
    %3 = linalg.fill ins(%cst : f64) outs(%2 : tensor<16x1xf64>) -> tensor<16x1xf64> loc(#loc13)
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<16x8xf64>) outs(%3 : tensor<16x1xf64>) {
    ^bb0(%in: f64 loc(callsite(#loc1 at #loc12)), %out: f64 loc(callsite(#loc1 at #loc12))):
      %34 = arith.addf %in, %out : f64 loc(#loc13)
      linalg.yield %34 : f64 loc(#loc13)
    } -> tensor<16x1xf64> loc(#loc13)
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<16x1xf64>) outs(%2 : tensor<16x1xf64>) {
    ^bb0(%in: f64 loc(callsite(#loc1 at #loc12)), %out: f64 loc(callsite(#loc1 at #loc12))):
      %34 = arith.divf %in, %cst_2 : f64 loc(#loc13)
      linalg.yield %34 : f64 loc(#loc13)
    } -> tensor<16x1xf64> loc(#loc13)
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %5 : tensor<16x8xf64>, tensor<16x1xf64>) outs(%0 : tensor<16x8xf64>) {
    ^bb0(%in: f64 loc(callsite(#loc1 at #loc12)), %in_5: f64 loc(callsite(#loc1 at #loc12)), %out: f64 loc(callsite(#loc1 at #loc12))):
      %34 = arith.subf %in, %in_5 : f64 loc(#loc13)
      linalg.yield %34 : f64 loc(#loc13)
    } -> tensor<16x8xf64> loc(#loc13)
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %6 : tensor<16x8xf64>, tensor<16x8xf64>) outs(%0 : tensor<16x8xf64>) {
    ^bb0(%in: f64 loc(callsite(#loc1 at #loc12)), %in_5: f64 loc(callsite(#loc1 at #loc12)), %out: f64 loc(callsite(#loc1 at #loc12))):
      %34 = arith.mulf %in, %in_5 : f64 loc(#loc13)
      linalg.yield %34 : f64 loc(#loc13)
    } -> tensor<16x8xf64> loc(#loc13)
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<16x8xf64>) outs(%3 : tensor<16x1xf64>) {
    ^bb0(%in: f64 loc(callsite(#loc1 at #loc12)), %out: f64 loc(callsite(#loc1 at #loc12))):
      %34 = arith.addf %in, %out : f64 loc(#loc13)
      linalg.yield %34 : f64 loc(#loc13)
    } -> tensor<16x1xf64> loc(#loc13)
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<16x1xf64>) outs(%2 : tensor<16x1xf64>) {
    ^bb0(%in: f64 loc(callsite(#loc1 at #loc12)), %out: f64 loc(callsite(#loc1 at #loc12))):
      %34 = arith.divf %in, %cst_2 : f64 loc(#loc13)
      linalg.yield %34 : f64 loc(#loc13)
    } -> tensor<16x1xf64> loc(#loc13)
    %10 = tensor.empty() : tensor<16x1xf32> loc(#loc13)
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<16x1xf64>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f64 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.truncf %in : f64 to f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x1xf32> loc(#loc13)
    %12 = linalg.fill ins(%cst_0 : f32) outs(%10 : tensor<16x1xf32>) -> tensor<16x1xf32> loc(#loc13)
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<16x8xf32>) outs(%12 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.addf %in, %out : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x1xf32> loc(#loc13)
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%13 : tensor<16x1xf32>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.divf %in, %cst_3 : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x1xf32> loc(#loc13)
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<16x1xf32>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.truncf %cst_1 : f64 to f32 loc(#loc13)
      %35 = arith.addf %in, %34 : f32 loc(#loc13)
      linalg.yield %35 : f32 loc(#loc13)
    } -> tensor<16x1xf32> loc(#loc13)
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%15 : tensor<16x1xf32>) outs(%10 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = math.rsqrt %in : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x1xf32> loc(#loc13)
    %17 = tensor.empty() : tensor<16x8xf32> loc(#loc13)
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %14 : tensor<16x8xf32>, tensor<16x1xf32>) outs(%17 : tensor<16x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %in_5: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.subf %in, %in_5 : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x8xf32> loc(#loc13)
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%18, %16 : tensor<16x8xf32>, tensor<16x1xf32>) outs(%17 : tensor<16x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %in_5: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.mulf %in, %in_5 : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x8xf32> loc(#loc13)
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %arg2 : tensor<16x8xf32>, tensor<8xf32>) outs(%17 : tensor<16x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %in_5: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.mulf %in, %in_5 : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x8xf32> loc(#loc13)
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%20, %arg3 : tensor<16x8xf32>, tensor<8xf32>) outs(%17 : tensor<16x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc12)), %in_5: f32 loc(callsite(#loc1 at #loc12)), %out: f32 loc(callsite(#loc1 at #loc12))):
      %34 = arith.addf %in, %in_5 : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<16x8xf32> loc(#loc13)
    %22 = tensor.empty() : tensor<8x4xf32> loc(#loc14)
    %transposed = linalg.transpose ins(%arg4 : tensor<4x8xf32>) outs(%22 : tensor<8x4xf32>) permutation = [1, 0]  loc(#loc14)
    %23 = tensor.empty() : tensor<16x4xf32> loc(#loc14)
    %24 = linalg.fill ins(%cst_0 : f32) outs(%23 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc14)
    %25 = linalg.matmul ins(%21, %transposed : tensor<16x8xf32>, tensor<8x4xf32>) outs(%24 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc14)
    %26 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<4xf32>) outs(%23 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc11 at #loc12)), %out: f32 loc(callsite(#loc11 at #loc12))):
      linalg.yield %in : f32 loc(#loc14)
    } -> tensor<16x4xf32> loc(#loc14)
    %27 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%25, %26 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%23 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc11 at #loc12)), %in_5: f32 loc(callsite(#loc11 at #loc12)), %out: f32 loc(callsite(#loc11 at #loc12))):
      %34 = arith.addf %in, %in_5 : f32 loc(#loc14)
      linalg.yield %34 : f32 loc(#loc14)
    } -> tensor<16x4xf32> loc(#loc14)
    %28 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%27, %arg1 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%23 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc11 at #loc12)), %in_5: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.subf %in, %in_5 : f32 loc(#loc10)
      linalg.yield %34 : f32 loc(#loc10)
    } -> tensor<16x4xf32> loc(#loc10)
    %29 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%28 : tensor<16x4xf32>) outs(%23 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc10)
      linalg.yield %34 : f32 loc(#loc10)
    } -> tensor<16x4xf32> loc(#loc10)
    %30 = tensor.empty() : tensor<f32> loc(#loc10)
    %31 = linalg.fill ins(%cst_0 : f32) outs(%30 : tensor<f32>) -> tensor<f32> loc(#loc10)
    %32 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["reduction", "reduction"]} ins(%29 : tensor<16x4xf32>) outs(%31 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.addf %in, %out : f32 loc(#loc10)
      linalg.yield %34 : f32 loc(#loc10)
    } -> tensor<f32> loc(#loc10)
    %33 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = []} ins(%32 : tensor<f32>) outs(%30 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.divf %in, %cst_4 : f32 loc(#loc10)
      linalg.yield %34 : f32 loc(#loc10)
    } -> tensor<f32> loc(#loc10)
    return %33 : tensor<f32> loc(#loc10)
  } loc(#loc13)
} loc(#loc)
#loc = loc(unknown)
