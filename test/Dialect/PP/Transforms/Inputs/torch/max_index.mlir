#loc1 = loc("torch/nn/modules/linear.py":134:0)
#loc2 = loc("gen_torch_inputs.py":98:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("layer.weight":0:0)
#loc7 = loc("layer.bias":0:0)
#loc8 = loc("python/pp/torch.py":129:0)
#loc9 = loc("gen_torch_inputs.py":99:0)
#loc10 = loc("gen_torch_inputs.py":100:0)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#map3 = affine_map<(d0, d1) -> ()>
#map4 = affine_map<() -> ()>
#loc11 = loc(callsite(#loc2 at #loc3))
#loc12 = loc(callsite(#loc9 at #loc3))
#loc13 = loc(callsite(#loc10 at #loc3))
#loc14 = loc(callsite(#loc1 at #loc11))
module {
  func.func @train_step(%arg0: tensor<16x8xf32> loc("inputs[0]":0:0), %arg1: tensor<16x1xf32> {pp.target} loc("targets[0]":0:0), %arg2: tensor<4x8xf32> {pp.name = "layer.weight", pp.param} loc("layer.weight":0:0), %arg3: tensor<4xf32> {pp.name = "layer.bias", pp.param} loc("layer.bias":0:0)) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc8)
    %c4_i64 = arith.constant 4 : i64 loc(#loc)
    %c1_i64 = arith.constant 1 : i64 loc(#loc14)
    %c4 = arith.constant 4 : index loc(#loc)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %c0_i64 = arith.constant 0 : i64 loc(#loc)
    %cst_0 = arith.constant 0xFF800000 : f32 loc(#loc12)
    %cst_1 = arith.constant 1.600000e+01 : f32 loc(#loc)
    %0 = tensor.empty() : tensor<8x4xf32> loc(#loc14)
    %transposed = linalg.transpose ins(%arg2 : tensor<4x8xf32>) outs(%0 : tensor<8x4xf32>) permutation = [1, 0]  loc(#loc14)
    %1 = tensor.empty() : tensor<16x4xf32> loc(#loc14)
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc14)
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<16x8xf32>, tensor<8x4xf32>) outs(%2 : tensor<16x4xf32>) -> tensor<16x4xf32> loc(#loc14)
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc1 at #loc11))):
      linalg.yield %in : f32 loc(#loc14)
    } -> tensor<16x4xf32> loc(#loc14)
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%1 : tensor<16x4xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %in_3: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc1 at #loc11))):
      %24 = arith.addf %in, %in_3 : f32 loc(#loc14)
      linalg.yield %24 : f32 loc(#loc14)
    } -> tensor<16x4xf32> loc(#loc14)
    %6 = tensor.empty() : tensor<16xi64> loc(#loc12)
    %7 = linalg.fill ins(%c0_i64 : i64) outs(%6 : tensor<16xi64>) -> tensor<16xi64> loc(#loc12)
    %8 = tensor.empty() : tensor<16xf32> loc(#loc12)
    %9 = linalg.fill ins(%cst_0 : f32) outs(%8 : tensor<16xf32>) -> tensor<16xf32> loc(#loc12)
    %10:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "reduction"]} ins(%5 : tensor<16x4xf32>) outs(%9, %7 : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc9 at #loc3)), %out_3: i64 loc(callsite(#loc9 at #loc3))):
      %24 = linalg.index 1 : index loc(#loc12)
      %25 = arith.index_cast %24 : index to i64 loc(#loc12)
      %26 = arith.maximumf %in, %out : f32 loc(#loc12)
      %27 = arith.cmpf ogt, %in, %out : f32 loc(#loc12)
      %28 = arith.select %27, %25, %out_3 : i64 loc(#loc12)
      linalg.yield %26, %28 : f32, i64 loc(#loc12)
    } -> (tensor<16xf32>, tensor<16xi64>) loc(#loc12)
    %expanded = tensor.expand_shape %10#0 [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32> loc(#loc12)
    %expanded_2 = tensor.expand_shape %10#1 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64> loc(#loc12)
    %11 = tensor.empty() : tensor<16x1xi64> loc(#loc13)
    %12 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded_2 : tensor<16x1xi64>) outs(%11 : tensor<16x1xi64>) {
    ^bb0(%in: i64 loc(callsite(#loc9 at #loc3)), %out: i64 loc(callsite(#loc10 at #loc3))):
      %24 = arith.addi %in, %c1_i64 : i64 loc(#loc13)
      linalg.yield %24 : i64 loc(#loc13)
    } -> tensor<16x1xi64> loc(#loc13)
    %13 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%12 : tensor<16x1xi64>) outs(%11 : tensor<16x1xi64>) {
    ^bb0(%in: i64 loc(callsite(#loc10 at #loc3)), %out: i64 loc(callsite(#loc10 at #loc3))):
      %24 = arith.remsi %in, %c4_i64 : i64 loc(#loc13)
      %25 = arith.cmpi ne, %24, %c0_i64 : i64 loc(#loc13)
      %26 = arith.cmpi slt, %24, %c0_i64 : i64 loc(#loc13)
      %27 = arith.andi %25, %26 : i1 loc(#loc13)
      %28 = arith.addi %24, %c4_i64 : i64 loc(#loc13)
      %29 = arith.select %27, %28, %24 : i64 loc(#loc13)
      linalg.yield %29 : i64 loc(#loc13)
    } -> tensor<16x1xi64> loc(#loc13)
    %14 = tensor.empty() : tensor<16x1xf32> loc(#loc13)
    %15 = linalg.fill ins(%cst : f32) outs(%14 : tensor<16x1xf32>) -> tensor<16x1xf32> loc(#loc13)
    %16 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%13 : tensor<16x1xi64>) outs(%15 : tensor<16x1xf32>) {
    ^bb0(%in: i64 loc(callsite(#loc10 at #loc3)), %out: f32 loc(callsite(#loc10 at #loc3))):
      %24 = linalg.index 0 : index loc(#loc13)
      %25 = arith.index_cast %in : i64 to index loc(#loc13)
      %26 = arith.cmpi slt, %25, %c4 : index loc(#loc13)
      cf.assert %26, "index must be smaller than dim size" loc(#loc13)
      %27 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc13)
      cf.assert %27, "index must be larger or equal to 0" loc(#loc13)
      %extracted = tensor.extract %5[%24, %25] : tensor<16x4xf32> loc(#loc13)
      linalg.yield %extracted : f32 loc(#loc13)
    } -> tensor<16x1xf32> loc(#loc13)
    %17 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded, %16 : tensor<16x1xf32>, tensor<16x1xf32>) outs(%14 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc9 at #loc3)), %in_3: f32 loc(callsite(#loc10 at #loc3)), %out: f32 loc(callsite(#loc10 at #loc3))):
      %24 = arith.mulf %in, %in_3 : f32 loc(#loc13)
      linalg.yield %24 : f32 loc(#loc13)
    } -> tensor<16x1xf32> loc(#loc13)
    %18 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%17, %arg1 : tensor<16x1xf32>, tensor<16x1xf32>) outs(%14 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc10 at #loc3)), %in_3: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %24 = arith.subf %in, %in_3 : f32 loc(#loc8)
      linalg.yield %24 : f32 loc(#loc8)
    } -> tensor<16x1xf32> loc(#loc8)
    %19 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%18 : tensor<16x1xf32>) outs(%14 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %24 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc8)
      linalg.yield %24 : f32 loc(#loc8)
    } -> tensor<16x1xf32> loc(#loc8)
    %20 = tensor.empty() : tensor<f32> loc(#loc8)
    %21 = linalg.fill ins(%cst : f32) outs(%20 : tensor<f32>) -> tensor<f32> loc(#loc8)
    %22 = linalg.generic {indexing_maps = [#map1, #map3], iterator_types = ["reduction", "reduction"]} ins(%19 : tensor<16x1xf32>) outs(%21 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %24 = arith.addf %in, %out : f32 loc(#loc8)
      linalg.yield %24 : f32 loc(#loc8)
    } -> tensor<f32> loc(#loc8)
    %23 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = []} ins(%22 : tensor<f32>) outs(%20 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %24 = arith.divf %in, %cst_1 : f32 loc(#loc8)
      linalg.yield %24 : f32 loc(#loc8)
    } -> tensor<f32> loc(#loc8)
    return %23 : tensor<f32> loc(#loc8)
  } loc(#loc14)
} loc(#loc)
#loc = loc(unknown)
