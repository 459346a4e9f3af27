#loc1 = loc("torch/nn/modules/linear.py":134:0)
#loc2 = loc("gen_torch_inputs.py":118:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("pool":0:0)
#loc7 = loc("left.weight":0:0)
#loc8 = loc("left.bias":0:0)
#loc9 = loc("right.weight":0:0)
#loc10 = loc("right.bias":0:0)
#loc11 = loc("head.weight":0:0)
#loc12 = loc("head.bias":0:0)
#loc13 = loc("gen_torch_inputs.py":119:0)
#loc14 = loc("gen_torch_inputs.py":120:0)
#loc16 = loc("gen_torch_inputs.py":122:0)
#loc17 = loc("python/pp/torch.py":129:0)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 0)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, d4)>
#map4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map5 = affine_map<(d0, d1) -> ()>
#map6 = affine_map<() -> ()>
#loc18 = loc(callsite(#loc2 at #loc3))
#loc19 = loc(callsite(#loc13 at #loc3))
#loc20 = loc(callsite(#loc14 at #loc3))
#loc22 = loc(callsite(#loc16 at #loc3))
#loc23 = loc(callsite(#loc1 at #loc18))
#loc24 = loc(callsite(#loc1 at #loc19))
#loc25 = loc(callsite(#loc1 at #loc22))
module {
  func.func @train_step(%arg0: tensor<16x8xf32> loc("inputs[0]":0:0), %arg1: tensor<16x4xf32> {pp.target} loc("targets[0]":0:0), %arg2: tensor<4x4xf32> {pp.name = "pool", pp.param} loc("pool":0:0), %arg3: tensor<24x8xf32> {pp.name = "left.weight", pp.param} loc("left.weight":0:0), %arg4: tensor<24xf32> {pp.name = "left.bias", pp.param} loc("left.bias":0:0), %arg5: tensor<24x8xf32> {pp.name = "right.weight", pp.param} loc("right.weight":0:0), %arg6: tensor<24xf32> {pp.name = "right.bias", pp.param} loc("right.bias":0:0), %arg7: tensor<4x6xf32> {pp.name = "head.weight", pp.param} loc("head.weight":0:0), %arg8: tensor<4xf32> {pp.name = "head.bias", pp.param} loc("head.bias":0:0)) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %cst_0 = arith.constant 6.400000e+01 : f32 loc(#loc)
    %0 = tensor.empty() : tensor<8x24xf32> loc(#loc23)
    %transposed = linalg.transpose ins(%arg3 : tensor<24x8xf32>) outs(%0 : tensor<8x24xf32>) permutation = [1, 0]  loc(#loc23)
    %1 = tensor.empty() : tensor<16x24xf32> loc(#loc23)
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<16x24xf32>) -> tensor<16x24xf32> loc(#loc23)
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<16x8xf32>, tensor<8x24xf32>) outs(%2 : tensor<16x24xf32>) -> tensor<16x24xf32> loc(#loc23)
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg4 : tensor<24xf32>) outs(%1 : tensor<16x24xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc18)), %out: f32 loc(callsite(#loc1 at #loc18))):
      linalg.yield %in : f32 loc(#loc23)
    } -> tensor<16x24xf32> loc(#loc23)
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<16x24xf32>, tensor<16x24xf32>) outs(%1 : tensor<16x24xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc18)), %in_12: f32 loc(callsite(#loc1 at #loc18)), %out: f32 loc(callsite(#loc1 at #loc18))):
      %28 = arith.addf %in, %in_12 : f32 loc(#loc23)
      linalg.yield %28 : f32 loc(#loc23)
    } -> tensor<16x24xf32> loc(#loc23)
    %transposed_1 = linalg.transpose ins(%arg5 : tensor<24x8xf32>) outs(%0 : tensor<8x24xf32>) permutation = [1, 0]  loc(#loc24)
    %6 = linalg.matmul ins(%arg0, %transposed_1 : tensor<16x8xf32>, tensor<8x24xf32>) outs(%2 : tensor<16x24xf32>) -> tensor<16x24xf32> loc(#loc24)
    %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg6 : tensor<24xf32>) outs(%1 : tensor<16x24xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc19)), %out: f32 loc(callsite(#loc1 at #loc19))):
      linalg.yield %in : f32 loc(#loc24)
    } -> tensor<16x24xf32> loc(#loc24)
    %8 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%6, %7 : tensor<16x24xf32>, tensor<16x24xf32>) outs(%1 : tensor<16x24xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc19)), %in_12: f32 loc(callsite(#loc1 at #loc19)), %out: f32 loc(callsite(#loc1 at #loc19))):
      %28 = arith.addf %in, %in_12 : f32 loc(#loc24)
      linalg.yield %28 : f32 loc(#loc24)
    } -> tensor<16x24xf32> loc(#loc24)
    %expanded = tensor.expand_shape %5 [[0], [1, 2, 3, 4]] output_shape [16, 2, 3, 4, 1] : tensor<16x24xf32> into tensor<16x2x3x4x1xf32> loc(#loc20)
    %expanded_2 = tensor.expand_shape %8 [[0], [1, 2, 3, 4]] output_shape [16, 2, 3, 4, 1] : tensor<16x24xf32> into tensor<16x2x3x4x1xf32> loc(#loc20)
    %9 = tensor.empty() : tensor<16x2x3x1x4xf32> loc(#loc20)
    %transposed_3 = linalg.transpose ins(%expanded_2 : tensor<16x2x3x4x1xf32>) outs(%9 : tensor<16x2x3x1x4xf32>) permutation = [0, 1, 2, 4, 3]  loc(#loc20)
    %10 = tensor.empty() : tensor<16x2x3x4x4xf32> loc(#loc20)
    %11 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %transposed_3 : tensor<16x2x3x4x1xf32>, tensor<16x2x3x1x4xf32>) outs(%10 : tensor<16x2x3x4x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc14 at #loc3)), %in_12: f32 loc(callsite(#loc14 at #loc3)), %out: f32 loc(callsite(#loc14 at #loc3))):
      %28 = arith.mulf %in, %in_12 : f32 loc(#loc20)
      linalg.yield %28 : f32 loc(#loc20)
    } -> tensor<16x2x3x4x4xf32> loc(#loc20)
    %12 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<16x2x3x4x4xf32>) outs(%10 : tensor<16x2x3x4x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc14 at #loc3)), %out: f32 loc(callsite(#loc14 at #loc3))):
      %28 = math.tanh %in : f32 loc(#loc20)
      linalg.yield %28 : f32 loc(#loc20)
    } -> tensor<16x2x3x4x4xf32> loc(#loc20)
    %expanded_4 = tensor.expand_shape %arg2 [[0], [1, 2, 3, 4]] output_shape [4, 4, 1, 1, 1] : tensor<4x4xf32> into tensor<4x4x1x1x1xf32> loc(#loc21)
    %collapsed = tensor.collapse_shape %12 [[0, 1, 2], [3, 4]] : tensor<16x2x3x4x4xf32> into tensor<96x16xf32> loc(#loc21)
    %expanded_5 = tensor.expand_shape %collapsed [[0, 1], [2]] output_shape [1, 96, 16] : tensor<96x16xf32> into tensor<1x96x16xf32> loc(#loc21)
    %collapsed_6 = tensor.collapse_shape %expanded_4 [[0, 1], [2, 3, 4]] : tensor<4x4x1x1x1xf32> into tensor<16x1xf32> loc(#loc21)
    %expanded_7 = tensor.expand_shape %collapsed_6 [[0, 1], [2]] output_shape [1, 16, 1] : tensor<16x1xf32> into tensor<1x16x1xf32> loc(#loc21)
    %13 = tensor.empty() : tensor<1x96x1xf32> loc(#loc21)
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<1x96x1xf32>) -> tensor<1x96x1xf32> loc(#loc21)
    %15 = linalg.batch_matmul ins(%expanded_5, %expanded_7 : tensor<1x96x16xf32>, tensor<1x16x1xf32>) outs(%14 : tensor<1x96x1xf32>) -> tensor<1x96x1xf32> loc(#loc21)
    %collapsed_8 = tensor.collapse_shape %15 [[0, 1], [2]] : tensor<1x96x1xf32> into tensor<96x1xf32> loc(#loc21)
    %expanded_9 = tensor.expand_shape %collapsed_8 [[0, 1, 2], [3, 4]] output_shape [16, 2, 3, 1, 1] : tensor<96x1xf32> into tensor<16x2x3x1x1xf32> loc(#loc21)
    %collapsed_10 = tensor.collapse_shape %expanded_9 [[0], [1, 2, 3, 4]] : tensor<16x2x3x1x1xf32> into tensor<16x6xf32> loc(#loc22)
    %16 = tensor.empty() : tensor<6x4xf32> loc(#loc25)
    %transposed_11 = linalg.transpose ins(%arg7 : tensor<4x6xf32>) outs(%16 : tensor<6x4xf32>) permutation = [1, 0]  loc(#loc25)
    %17 = tensor.empty() : tensor<16x4xf32> loc(#loc25)
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc25)
    %19 = linalg.matmul ins(%collapsed_10, %transposed_11 : tensor<16x6xf32>, tensor<6x4xf32>) outs(%18 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc25)
    %20 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg8 : tensor<4xf32>) outs(%17 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc22)), %out: f32 loc(callsite(#loc1 at #loc22))):
      linalg.yield %in : f32 loc(#loc25)
    } -> tensor<16x4xf32> loc(#loc25)
    %21 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%19, %20 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%17 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc22)), %in_12: f32 loc(callsite(#loc1 at #loc22)), %out: f32 loc(callsite(#loc1 at #loc22))):
      %28 = arith.addf %in, %in_12 : f32 loc(#loc25)
      linalg.yield %28 : f32 loc(#loc25)
    } -> tensor<16x4xf32> loc(#loc25)
    %22 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%21, %arg1 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%17 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc22)), %in_12: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %28 = arith.subf %in, %in_12 : f32 loc(#loc17)
      linalg.yield %28 : f32 loc(#loc17)
    } -> tensor<16x4xf32> loc(#loc17)
    %23 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%22 : tensor<16x4xf32>) outs(%17 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %28 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc17)
      linalg.yield %28 : f32 loc(#loc17)
    } -> tensor<16x4xf32> loc(#loc17)
    %24 = tensor.empty() : tensor<f32> loc(#loc17)
    %25 = linalg.fill ins(%cst : f32) outs(%24 : tensor<f32>) -> tensor<f32> loc(#loc17)
    %26 = linalg.generic {indexing_maps = [#map1, #map5], iterator_types = ["reduction", "reduction"]} ins(%23 : tensor<16x4xf32>) outs(%25 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %28 = arith.addf %in, %out : f32 loc(#loc17)
      linalg.yield %28 : f32 loc(#loc17)
    } -> tensor<f32> loc(#loc17)
    %27 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = []} ins(%26 : tensor<f32>) outs(%24 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %28 = arith.divf %in, %cst_0 : f32 loc(#loc17)
      linalg.yield %28 : f32 loc(#loc17)
    } -> tensor<f32> loc(#loc17)
    return %27 : tensor<f32> loc(#loc17)
  } loc(#loc23)
} loc(#loc)
#loc = loc(unknown)
#loc15 = loc("gen_torch_inputs.py":121:0)
#loc21 = loc(callsite(#loc15 at #loc3))
