#loc1 = loc("torch/nn/modules/sparse.py":189:0)
#loc2 = loc("gen_torch_inputs.py":72:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("embed.weight":0:0)
#loc7 = loc("head.weight":0:0)
#loc8 = loc("head.bias":0:0)
#loc9 = loc("python/pp/torch.py":129:0)
#loc10 = loc("torch/nn/modules/linear.py":134:0)
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1) -> (d0, 0)>
#map6 = affine_map<(d0) -> (d0)>
#map7 = affine_map<(d0) -> ()>
#map8 = affine_map<() -> ()>
#loc11 = loc(callsite(#loc2 at #loc3))
#loc12 = loc(callsite(#loc1 at #loc11))
#loc13 = loc(callsite(#loc10 at #loc11))
module {
  func.func @train_step(%arg0: tensor<4x6xi64> loc("inputs[0]":0:0), %arg1: tensor<4x6xi64> {pp.target} loc("targets[0]":0:0), %arg2: tensor<10x8xf32> {pp.name = "embed.weight", pp.param} loc("embed.weight":0:0), %arg3: tensor<10x8xf32> {pp.name = "head.weight", pp.param} loc("head.weight":0:0), %arg4: tensor<10xf32> {pp.name = "head.bias", pp.param} loc("head.bias":0:0)) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64 loc(#loc9)
    %c10 = arith.constant 10 : index loc(#loc)
    %c0_i64 = arith.constant 0 : i64 loc(#loc)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %cst_0 = arith.constant 0xFF800000 : f32 loc(#loc9)
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<f32> loc(#loc9)
    %cst_2 = arith.constant dense<0> : tensor<i64> loc(#loc9)
    %0 = tensor.empty() : tensor<4x6x8xf32> loc(#loc12)
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<4x6xi64>) outs(%0 : tensor<4x6x8xf32>) {
    ^bb0(%in: i64 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc1 at #loc11))):
      %34 = arith.index_cast %in : i64 to index loc(#loc12)
      %35 = linalg.index 2 : index loc(#loc12)
      %36 = arith.cmpi slt, %34, %c10 : index loc(#loc12)
      cf.assert %36, "index must be smaller than dim size" loc(#loc12)
      %37 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc12)
      cf.assert %37, "index must be larger or equal to 0" loc(#loc12)
      %extracted = tensor.extract %arg2[%34, %35] : tensor<10x8xf32> loc(#loc12)
      linalg.yield %extracted : f32 loc(#loc12)
    } -> tensor<4x6x8xf32> loc(#loc12)
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32> loc(#loc13)
    %2 = tensor.empty() : tensor<8x10xf32> loc(#loc13)
    %transposed = linalg.transpose ins(%arg3 : tensor<10x8xf32>) outs(%2 : tensor<8x10xf32>) permutation = [1, 0]  loc(#loc13)
    %3 = tensor.empty() : tensor<24x10xf32> loc(#loc13)
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<24x10xf32>) -> tensor<24x10xf32> loc(#loc13)
    %5 = linalg.matmul ins(%collapsed, %transposed : tensor<24x8xf32>, tensor<8x10xf32>) outs(%4 : tensor<24x10xf32>) -> tensor<24x10xf32> loc(#loc13)
    %6 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%arg4 : tensor<10xf32>) outs(%3 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc10 at #loc11)), %out: f32 loc(callsite(#loc10 at #loc11))):
      linalg.yield %in : f32 loc(#loc13)
    } -> tensor<24x10xf32> loc(#loc13)
    %7 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%5, %6 : tensor<24x10xf32>, tensor<24x10xf32>) outs(%3 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc10 at #loc11)), %in_6: f32 loc(callsite(#loc10 at #loc11)), %out: f32 loc(callsite(#loc10 at #loc11))):
      %34 = arith.addf %in, %in_6 : f32 loc(#loc13)
      linalg.yield %34 : f32 loc(#loc13)
    } -> tensor<24x10xf32> loc(#loc13)
    %collapsed_3 = tensor.collapse_shape %arg1 [[0, 1]] : tensor<4x6xi64> into tensor<24xi64> loc(#loc9)
    %8 = tensor.empty() : tensor<24xi64> loc(#loc9)
    %9 = linalg.fill ins(%c0_i64 : i64) outs(%8 : tensor<24xi64>) -> tensor<24xi64> loc(#loc9)
    %10 = tensor.empty() : tensor<24xf32> loc(#loc9)
    %11 = linalg.fill ins(%cst_0 : f32) outs(%10 : tensor<24xf32>) -> tensor<24xf32> loc(#loc9)
    %12:2 = linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<24x10xf32>) outs(%11, %9 : tensor<24xf32>, tensor<24xi64>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0), %out_6: i64 loc("python/pp/torch.py":129:0)):
      %34 = linalg.index 1 : index loc(#loc9)
      %35 = arith.index_cast %34 : index to i64 loc(#loc9)
      %36 = arith.maximumf %in, %out : f32 loc(#loc9)
      %37 = arith.cmpf ogt, %in, %out : f32 loc(#loc9)
      %38 = arith.select %37, %35, %out_6 : i64 loc(#loc9)
      linalg.yield %36, %38 : f32, i64 loc(#loc9)
    } -> (tensor<24xf32>, tensor<24xi64>) loc(#loc9)
    %expanded = tensor.expand_shape %12#0 [[0, 1]] output_shape [24, 1] : tensor<24xf32> into tensor<24x1xf32> loc(#loc9)
    %13 = linalg.generic {indexing_maps = [#map3, #map5, #map3], iterator_types = ["parallel", "parallel"]} ins(%7, %expanded : tensor<24x10xf32>, tensor<24x1xf32>) outs(%3 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_6: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.subf %in, %in_6 : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<24x10xf32> loc(#loc9)
    %14 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%13 : tensor<24x10xf32>) outs(%3 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = math.exp %in : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<24x10xf32> loc(#loc9)
    %15 = tensor.empty() : tensor<24x1xf32> loc(#loc9)
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<24x1xf32>) -> tensor<24x1xf32> loc(#loc9)
    %17 = linalg.generic {indexing_maps = [#map3, #map5], iterator_types = ["parallel", "reduction"]} ins(%14 : tensor<24x10xf32>) outs(%16 : tensor<24x1xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.addf %in, %out : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<24x1xf32> loc(#loc9)
    %18 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%17 : tensor<24x1xf32>) outs(%15 : tensor<24x1xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = math.log %in : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<24x1xf32> loc(#loc9)
    %19 = linalg.generic {indexing_maps = [#map3, #map5, #map3], iterator_types = ["parallel", "parallel"]} ins(%13, %18 : tensor<24x10xf32>, tensor<24x1xf32>) outs(%3 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_6: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.subf %in, %in_6 : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<24x10xf32> loc(#loc9)
    %20 = tensor.empty() : tensor<24xi1> loc(#loc9)
    %21 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel"]} ins(%collapsed_3 : tensor<24xi64>) outs(%20 : tensor<24xi1>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: i1 loc("python/pp/torch.py":129:0)):
      %34 = arith.cmpi ne, %in, %c-100_i64 : i64 loc(#loc9)
      linalg.yield %34 : i1 loc(#loc9)
    } -> tensor<24xi1> loc(#loc9)
    %22 = linalg.generic {indexing_maps = [#map6, #map6, #map7, #map6], iterator_types = ["parallel"]} ins(%21, %collapsed_3, %cst_2 : tensor<24xi1>, tensor<24xi64>, tensor<i64>) outs(%8 : tensor<24xi64>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %in_6: i64 loc("python/pp/torch.py":129:0), %in_7: i64 loc("python/pp/torch.py":129:0), %out: i64 loc("python/pp/torch.py":129:0)):
      %34 = arith.select %in, %in_6, %in_7 : i64 loc(#loc9)
      linalg.yield %34 : i64 loc(#loc9)
    } -> tensor<24xi64> loc(#loc9)
    %expanded_4 = tensor.expand_shape %22 [[0, 1]] output_shape [24, 1] : tensor<24xi64> into tensor<24x1xi64> loc(#loc9)
    %23 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%expanded_4 : tensor<24x1xi64>) outs(%16 : tensor<24x1xf32>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = linalg.index 0 : index loc(#loc9)
      %35 = arith.index_cast %in : i64 to index loc(#loc9)
      %36 = arith.cmpi slt, %35, %c10 : index loc(#loc9)
      cf.assert %36, "index must be smaller than dim size" loc(#loc9)
      %37 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc9)
      cf.assert %37, "index must be larger or equal to 0" loc(#loc9)
      %extracted = tensor.extract %19[%34, %35] : tensor<24x10xf32> loc(#loc9)
      linalg.yield %extracted : f32 loc(#loc9)
    } -> tensor<24x1xf32> loc(#loc9)
    %collapsed_5 = tensor.collapse_shape %23 [[0, 1]] : tensor<24x1xf32> into tensor<24xf32> loc(#loc9)
    %24 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = ["parallel"]} ins(%collapsed_5 : tensor<24xf32>) outs(%10 : tensor<24xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.negf %in : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<24xf32> loc(#loc9)
    %25 = linalg.generic {indexing_maps = [#map6, #map6, #map7, #map6], iterator_types = ["parallel"]} ins(%21, %24, %cst_1 : tensor<24xi1>, tensor<24xf32>, tensor<f32>) outs(%10 : tensor<24xf32>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %in_6: f32 loc("python/pp/torch.py":129:0), %in_7: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.select %in, %in_6, %in_7 : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<24xf32> loc(#loc9)
    %26 = tensor.empty() : tensor<i64> loc(#loc9)
    %27 = linalg.fill ins(%c0_i64 : i64) outs(%26 : tensor<i64>) -> tensor<i64> loc(#loc9)
    %28 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["reduction"]} ins(%21 : tensor<24xi1>) outs(%27 : tensor<i64>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %out: i64 loc("python/pp/torch.py":129:0)):
      %34 = arith.extui %in : i1 to i64 loc(#loc9)
      %35 = arith.addi %34, %out : i64 loc(#loc9)
      linalg.yield %35 : i64 loc(#loc9)
    } -> tensor<i64> loc(#loc9)
    %29 = tensor.empty() : tensor<f32> loc(#loc9)
    %30 = linalg.generic {indexing_maps = [#map8, #map8], iterator_types = []} ins(%28 : tensor<i64>) outs(%29 : tensor<f32>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.sitofp %in : i64 to f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<f32> loc(#loc9)
    %31 = linalg.fill ins(%cst : f32) outs(%29 : tensor<f32>) -> tensor<f32> loc(#loc9)
    %32 = linalg.generic {indexing_maps = [#map6, #map7], iterator_types = ["reduction"]} ins(%25 : tensor<24xf32>) outs(%31 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.addf %in, %out : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<f32> loc(#loc9)
    %33 = linalg.generic {indexing_maps = [#map8, #map8, #map8], iterator_types = []} ins(%32, %30 : tensor<f32>, tensor<f32>) outs(%29 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_6: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %34 = arith.divf %in, %in_6 : f32 loc(#loc9)
      linalg.yield %34 : f32 loc(#loc9)
    } -> tensor<f32> loc(#loc9)
    return %33 : tensor<f32> loc(#loc9)
  } loc(#loc12)
} loc(#loc)
#loc = loc(unknown)
