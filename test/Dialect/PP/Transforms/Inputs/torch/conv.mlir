#loc1 = loc("torch/nn/modules/conv.py":565:0)
#loc2 = loc("gen_torch_inputs.py":160:0)
#loc3 = loc("python/pp/torch.py":137:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("stem.weight":0:0)
#loc7 = loc("stem.bias":0:0)
#loc8 = loc("conv.weight":0:0)
#loc9 = loc("conv.bias":0:0)
#loc10 = loc("head.weight":0:0)
#loc11 = loc("head.bias":0:0)
#loc12 = loc("gen_torch_inputs.py":161:0)
#loc13 = loc("gen_torch_inputs.py":162:0)
#loc14 = loc("torch/nn/modules/linear.py":134:0)
#loc15 = loc("python/pp/torch.py":138:0)
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> ()>
#map5 = affine_map<() -> ()>
#loc16 = loc(callsite(#loc2 at #loc3))
#loc17 = loc(callsite(#loc12 at #loc3))
#loc18 = loc(callsite(#loc13 at #loc3))
#loc19 = loc(callsite(#loc1 at #loc16))
#loc20 = loc(callsite(#loc14 at #loc18))
module {
  func.func @train_step(%arg0: tensor<2x1x8x8xf32> loc("inputs[0]":0:0), %arg1: tensor<2x2xf32> {pp.target} loc("targets[0]":0:0), %arg2: tensor<4x1x3x3xf32> {pp.name = "stem.weight", pp.param} loc("stem.weight":0:0), %arg3: tensor<4xf32> {pp.name = "stem.bias", pp.param} loc("stem.bias":0:0), %arg4: tensor<4x2x3x3xf32> {pp.name = "conv.weight", pp.param} loc("conv.weight":0:0), %arg5: tensor<4xf32> {pp.name = "conv.bias", pp.param} loc("conv.bias":0:0), %arg6: tensor<2x4xf32> {pp.name = "head.weight", pp.param} loc("head.weight":0:0), %arg7: tensor<2xf32> {pp.name = "head.bias", pp.param} loc("head.bias":0:0)) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %cst_0 = arith.constant 0xFF800000 : f32 loc(#loc17)
    %cst_1 = arith.constant 4.000000e+00 : f32 loc(#loc)
    %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg8: index loc(callsite(#loc1 at #loc16)), %arg9: index loc(callsite(#loc1 at #loc16)), %arg10: index loc(callsite(#loc1 at #loc16)), %arg11: index loc(callsite(#loc1 at #loc16))):
      tensor.yield %cst : f32 loc(#loc19)
    } : tensor<2x1x8x8xf32> to tensor<2x1x10x10xf32> loc(#loc19)
    %0 = tensor.empty() : tensor<2x4x4x4xf32> loc(#loc19)
    %broadcasted = linalg.broadcast ins(%arg3 : tensor<4xf32>) outs(%0 : tensor<2x4x4x4xf32>) dimensions = [0, 2, 3]  loc(#loc19)
    %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %arg2 : tensor<2x1x10x10xf32>, tensor<4x1x3x3xf32>) outs(%broadcasted : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> loc(#loc19)
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<2x4x4x4xf32>) outs(%0 : tensor<2x4x4x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc16)), %out: f32 loc(callsite(#loc2 at #loc3))):
      %27 = math.tanh %in : f32 loc(#loc16)
      linalg.yield %27 : f32 loc(#loc16)
    } -> tensor<2x4x4x4xf32> loc(#loc16)
    %padded_2 = tensor.pad %2 low[0, 0, 2, 2] high[0, 0, 2, 2] {
    ^bb0(%arg8: index loc(callsite(#loc1 at #loc16)), %arg9: index loc(callsite(#loc1 at #loc16)), %arg10: index loc(callsite(#loc1 at #loc16)), %arg11: index loc(callsite(#loc1 at #loc16))):
      tensor.yield %cst : f32 loc(#loc19)
    } : tensor<2x4x4x4xf32> to tensor<2x4x8x8xf32> loc(#loc19)
    %broadcasted_3 = linalg.broadcast ins(%arg5 : tensor<4xf32>) outs(%0 : tensor<2x4x4x4xf32>) dimensions = [0, 2, 3]  loc(#loc19)
    %expanded = tensor.expand_shape %padded_2 [[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 8, 8] : tensor<2x4x8x8xf32> into tensor<2x2x2x8x8xf32> loc(#loc19)
    %expanded_4 = tensor.expand_shape %arg4 [[0, 1], [2], [3], [4]] output_shape [2, 2, 2, 3, 3] : tensor<4x2x3x3xf32> into tensor<2x2x2x3x3xf32> loc(#loc19)
    %expanded_5 = tensor.expand_shape %broadcasted_3 [[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 4, 4] : tensor<2x4x4x4xf32> into tensor<2x2x2x4x4xf32> loc(#loc19)
    %3 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%expanded, %expanded_4 : tensor<2x2x2x8x8xf32>, tensor<2x2x2x3x3xf32>) outs(%expanded_5 : tensor<2x2x2x4x4xf32>) -> tensor<2x2x2x4x4xf32> loc(#loc19)
    %collapsed = tensor.collapse_shape %3 [[0], [1, 2], [3], [4]] : tensor<2x2x2x4x4xf32> into tensor<2x4x4x4xf32> loc(#loc19)
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed : tensor<2x4x4x4xf32>) outs(%0 : tensor<2x4x4x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc16)), %out: f32 loc(callsite(#loc12 at #loc3))):
      %27 = math.tanh %in : f32 loc(#loc17)
      linalg.yield %27 : f32 loc(#loc17)
    } -> tensor<2x4x4x4xf32> loc(#loc17)
    %5 = tensor.empty() : tensor<2x4x2x2xf32> loc(#loc17)
    %6 = linalg.fill ins(%cst_0 : f32) outs(%5 : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32> loc(#loc17)
    %7 = tensor.empty() : tensor<2x2xf32> loc(#loc17)
    %8 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%4, %7 : tensor<2x4x4x4xf32>, tensor<2x2xf32>) outs(%6 : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32> loc(#loc17)
    %padded_6 = tensor.pad %8 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg8: index loc(callsite(#loc12 at #loc3)), %arg9: index loc(callsite(#loc12 at #loc3)), %arg10: index loc(callsite(#loc12 at #loc3)), %arg11: index loc(callsite(#loc12 at #loc3))):
      tensor.yield %cst : f32 loc(#loc17)
    } : tensor<2x4x2x2xf32> to tensor<2x4x4x4xf32> loc(#loc17)
    %9 = linalg.fill ins(%cst : f32) outs(%5 : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32> loc(#loc17)
    %10 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded_6, %7 : tensor<2x4x4x4xf32>, tensor<2x2xf32>) outs(%9 : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32> loc(#loc17)
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10 : tensor<2x4x2x2xf32>) outs(%5 : tensor<2x4x2x2xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc12 at #loc3)), %out: f32 loc(callsite(#loc12 at #loc3))):
      %27 = arith.divf %in, %cst_1 : f32 loc(#loc17)
      linalg.yield %27 : f32 loc(#loc17)
    } -> tensor<2x4x2x2xf32> loc(#loc17)
    %12 = tensor.empty() : tensor<2x4x1x1xf32> loc(#loc18)
    %13 = linalg.fill ins(%cst : f32) outs(%12 : tensor<2x4x1x1xf32>) -> tensor<2x4x1x1xf32> loc(#loc18)
    %14 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%11 : tensor<2x4x2x2xf32>) outs(%13 : tensor<2x4x1x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc12 at #loc3)), %out: f32 loc(callsite(#loc13 at #loc3))):
      %27 = arith.addf %in, %out : f32 loc(#loc18)
      linalg.yield %27 : f32 loc(#loc18)
    } -> tensor<2x4x1x1xf32> loc(#loc18)
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14 : tensor<2x4x1x1xf32>) outs(%12 : tensor<2x4x1x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc13 at #loc3)), %out: f32 loc(callsite(#loc13 at #loc3))):
      %27 = arith.divf %in, %cst_1 : f32 loc(#loc18)
      linalg.yield %27 : f32 loc(#loc18)
    } -> tensor<2x4x1x1xf32> loc(#loc18)
    %collapsed_7 = tensor.collapse_shape %15 [[0], [1, 2, 3]] : tensor<2x4x1x1xf32> into tensor<2x4xf32> loc(#loc18)
    %16 = tensor.empty() : tensor<4x2xf32> loc(#loc20)
    %transposed = linalg.transpose ins(%arg6 : tensor<2x4xf32>) outs(%16 : tensor<4x2xf32>) permutation = [1, 0]  loc(#loc20)
    %17 = linalg.fill ins(%cst : f32) outs(%7 : tensor<2x2xf32>) -> tensor<2x2xf32> loc(#loc20)
    %18 = linalg.matmul ins(%collapsed_7, %transposed : tensor<2x4xf32>, tensor<4x2xf32>) outs(%17 : tensor<2x2xf32>) -> tensor<2x2xf32> loc(#loc20)
    %19 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg7 : tensor<2xf32>) outs(%7 : tensor<2x2xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc14 at #loc18)), %out: f32 loc(callsite(#loc14 at #loc18))):
      linalg.yield %in : f32 loc(#loc20)
    } -> tensor<2x2xf32> loc(#loc20)
    %20 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%18, %19 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%7 : tensor<2x2xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc14 at #loc18)), %in_8: f32 loc(callsite(#loc14 at #loc18)), %out: f32 loc(callsite(#loc14 at #loc18))):
      %27 = arith.addf %in, %in_8 : f32 loc(#loc20)
      linalg.yield %27 : f32 loc(#loc20)
    } -> tensor<2x2xf32> loc(#loc20)
    %21 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%20, %arg1 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%7 : tensor<2x2xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc14 at #loc18)), %in_8: f32 loc("python/pp/torch.py":138:0), %out: f32 loc("python/pp/torch.py":138:0)):
      %27 = arith.subf %in, %in_8 : f32 loc(#loc15)
      linalg.yield %27 : f32 loc(#loc15)
    } -> tensor<2x2xf32> loc(#loc15)
    %22 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%21 : tensor<2x2xf32>) outs(%7 : tensor<2x2xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":138:0), %out: f32 loc("python/pp/torch.py":138:0)):
      %27 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc15)
      linalg.yield %27 : f32 loc(#loc15)
    } -> tensor<2x2xf32> loc(#loc15)
    %23 = tensor.empty() : tensor<f32> loc(#loc15)
    %24 = linalg.fill ins(%cst : f32) outs(%23 : tensor<f32>) -> tensor<f32> loc(#loc15)
    %25 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["reduction", "reduction"]} ins(%22 : tensor<2x2xf32>) outs(%24 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":138:0), %out: f32 loc("python/pp/torch.py":138:0)):
      %27 = arith.addf %in, %out : f32 loc(#loc15)
      linalg.yield %27 : f32 loc(#loc15)
    } -> tensor<f32> loc(#loc15)
    %26 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = []} ins(%25 : tensor<f32>) outs(%23 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":138:0), %out: f32 loc("python/pp/torch.py":138:0)):
      %27 = arith.divf %in, %cst_1 : f32 loc(#loc15)
      linalg.yield %27 : f32 loc(#loc15)
    } -> tensor<f32> loc(#loc15)
    return %26 : tensor<f32> loc(#loc15)
  } loc(#loc19)
} loc(#loc)
#loc = loc(unknown)
