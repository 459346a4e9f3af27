#loc1 = loc("torch/nn/modules/linear.py":134:0)
#loc2 = loc("gen_torch_inputs.py":51:0)
#loc3 = loc("python/pp/torch.py":128:0)
#loc4 = loc("inputs[0]":0:0)
#loc5 = loc("targets[0]":0:0)
#loc6 = loc("hidden.weight":0:0)
#loc7 = loc("hidden.bias":0:0)
#loc8 = loc("head.weight":0:0)
#loc9 = loc("head.bias":0:0)
#loc10 = loc("python/pp/torch.py":129:0)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<(d0) -> (d0)>
#map5 = affine_map<(d0) -> ()>
#map6 = affine_map<() -> ()>
#loc11 = loc(callsite(#loc2 at #loc3))
#loc12 = loc(callsite(#loc1 at #loc11))
module {
  func.func @train_step(%arg0: tensor<16x8xf32> loc("inputs[0]":0:0), %arg1: tensor<16xi64> {pp.target} loc("targets[0]":0:0), %arg2: tensor<16x8xf32> {pp.name = "hidden.weight", pp.param} loc("hidden.weight":0:0), %arg3: tensor<16xf32> {pp.name = "hidden.bias", pp.param} loc("hidden.bias":0:0), %arg4: tensor<5x16xf32> {pp.name = "head.weight", pp.param} loc("head.weight":0:0), %arg5: tensor<5xf32> {pp.name = "head.bias", pp.param} loc("head.bias":0:0)) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64 loc(#loc10)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %c0_i64 = arith.constant 0 : i64 loc(#loc)
    %c5 = arith.constant 5 : index loc(#loc)
    %cst_0 = arith.constant 0xFF800000 : f32 loc(#loc10)
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<f32> loc(#loc10)
    %cst_2 = arith.constant dense<0> : tensor<i64> loc(#loc10)
    %0 = tensor.empty() : tensor<8x16xf32> loc(#loc12)
    %transposed = linalg.transpose ins(%arg2 : tensor<16x8xf32>) outs(%0 : tensor<8x16xf32>) permutation = [1, 0]  loc(#loc12)
    %1 = tensor.empty() : tensor<16x16xf32> loc(#loc12)
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<16x16xf32>) -> tensor<16x16xf32> loc(#loc12)
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<16x8xf32>, tensor<8x16xf32>) outs(%2 : tensor<16x16xf32>) -> tensor<16x16xf32> loc(#loc12)
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<16xf32>) outs(%1 : tensor<16x16xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc1 at #loc11))):
      linalg.yield %in : f32 loc(#loc12)
    } -> tensor<16x16xf32> loc(#loc12)
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%1 : tensor<16x16xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %in_5: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc1 at #loc11))):
      %38 = arith.addf %in, %in_5 : f32 loc(#loc12)
      linalg.yield %38 : f32 loc(#loc12)
    } -> tensor<16x16xf32> loc(#loc12)
    %6 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<16x16xf32>) outs(%1 : tensor<16x16xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc2 at #loc3))):
      %38 = math.tanh %in : f32 loc(#loc11)
      linalg.yield %38 : f32 loc(#loc11)
    } -> tensor<16x16xf32> loc(#loc11)
    %7 = tensor.empty() : tensor<16x5xf32> loc(#loc12)
    %transposed_3 = linalg.transpose ins(%arg4 : tensor<5x16xf32>) outs(%7 : tensor<16x5xf32>) permutation = [1, 0]  loc(#loc12)
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<16x5xf32>) -> tensor<16x5xf32> loc(#loc12)
    %9 = linalg.matmul ins(%6, %transposed_3 : tensor<16x16xf32>, tensor<16x5xf32>) outs(%8 : tensor<16x5xf32>) -> tensor<16x5xf32> loc(#loc12)
    %10 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg5 : tensor<5xf32>) outs(%7 : tensor<16x5xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc1 at #loc11))):
      linalg.yield %in : f32 loc(#loc12)
    } -> tensor<16x5xf32> loc(#loc12)
    %11 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%9, %10 : tensor<16x5xf32>, tensor<16x5xf32>) outs(%7 : tensor<16x5xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %in_5: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc(callsite(#loc1 at #loc11))):
      %38 = arith.addf %in, %in_5 : f32 loc(#loc12)
      linalg.yield %38 : f32 loc(#loc12)
    } -> tensor<16x5xf32> loc(#loc12)
    %12 = tensor.empty() : tensor<16xi64> loc(#loc10)
    %13 = linalg.fill ins(%c0_i64 : i64) outs(%12 : tensor<16xi64>) -> tensor<16xi64> loc(#loc10)
    %14 = tensor.empty() : tensor<16xf32> loc(#loc10)
    %15 = linalg.fill ins(%cst_0 : f32) outs(%14 : tensor<16xf32>) -> tensor<16xf32> loc(#loc10)
    %16:2 = linalg.generic {indexing_maps = [#map1, #map2, #map2], iterator_types = ["parallel", "reduction"]} ins(%11 : tensor<16x5xf32>) outs(%15, %13 : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %out: f32 loc("python/pp/torch.py":129:0), %out_5: i64 loc("python/pp/torch.py":129:0)):
      %38 = linalg.index 1 : index loc(#loc10)
      %39 = arith.index_cast %38 : index to i64 loc(#loc10)
      %40 = arith.maximumf %in, %out : f32 loc(#loc10)
      %41 = arith.cmpf ogt, %in, %out : f32 loc(#loc10)
      %42 = arith.select %41, %39, %out_5 : i64 loc(#loc10)
      linalg.yield %40, %42 : f32, i64 loc(#loc10)
    } -> (tensor<16xf32>, tensor<16xi64>) loc(#loc10)
    %expanded = tensor.expand_shape %16#0 [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32> loc(#loc10)
    %17 = linalg.generic {indexing_maps = [#map1, #map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%11, %expanded : tensor<16x5xf32>, tensor<16x1xf32>) outs(%7 : tensor<16x5xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc11)), %in_5: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.subf %in, %in_5 : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<16x5xf32> loc(#loc10)
    %18 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%17 : tensor<16x5xf32>) outs(%7 : tensor<16x5xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = math.exp %in : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<16x5xf32> loc(#loc10)
    %19 = tensor.empty() : tensor<16x1xf32> loc(#loc10)
    %20 = linalg.fill ins(%cst : f32) outs(%19 : tensor<16x1xf32>) -> tensor<16x1xf32> loc(#loc10)
    %21 = linalg.generic {indexing_maps = [#map1, #map3], iterator_types = ["parallel", "reduction"]} ins(%18 : tensor<16x5xf32>) outs(%20 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.addf %in, %out : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<16x1xf32> loc(#loc10)
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%21 : tensor<16x1xf32>) outs(%19 : tensor<16x1xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = math.log %in : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<16x1xf32> loc(#loc10)
    %23 = linalg.generic {indexing_maps = [#map1, #map3, #map1], iterator_types = ["parallel", "parallel"]} ins(%17, %22 : tensor<16x5xf32>, tensor<16x1xf32>) outs(%7 : tensor<16x5xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_5: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.subf %in, %in_5 : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<16x5xf32> loc(#loc10)
    %24 = tensor.empty() : tensor<16xi1> loc(#loc10)
    %25 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%arg1 : tensor<16xi64>) outs(%24 : tensor<16xi1>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: i1 loc("python/pp/torch.py":129:0)):
      %38 = arith.cmpi ne, %in, %c-100_i64 : i64 loc(#loc10)
      linalg.yield %38 : i1 loc(#loc10)
    } -> tensor<16xi1> loc(#loc10)
    %26 = linalg.generic {indexing_maps = [#map4, #map4, #map5, #map4], iterator_types = ["parallel"]} ins(%25, %arg1, %cst_2 : tensor<16xi1>, tensor<16xi64>, tensor<i64>) outs(%12 : tensor<16xi64>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %in_5: i64 loc("python/pp/torch.py":129:0), %in_6: i64 loc("python/pp/torch.py":129:0), %out: i64 loc("python/pp/torch.py":129:0)):
      %38 = arith.select %in, %in_5, %in_6 : i64 loc(#loc10)
      linalg.yield %38 : i64 loc(#loc10)
    } -> tensor<16xi64> loc(#loc10)
    %expanded_4 = tensor.expand_shape %26 [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64> loc(#loc10)
    %27 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%expanded_4 : tensor<16x1xi64>) outs(%20 : tensor<16x1xf32>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = linalg.index 0 : index loc(#loc10)
      %39 = arith.index_cast %in : i64 to index loc(#loc10)
      %40 = arith.cmpi slt, %39, %c5 : index loc(#loc10)
      cf.assert %40, "index must be smaller than dim size" loc(#loc10)
      %41 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc10)
      cf.assert %41, "index must be larger or equal to 0" loc(#loc10)
      %extracted = tensor.extract %23[%38, %39] : tensor<16x5xf32> loc(#loc10)
      linalg.yield %extracted : f32 loc(#loc10)
    } -> tensor<16x1xf32> loc(#loc10)
    %collapsed = tensor.collapse_shape %27 [[0, 1]] : tensor<16x1xf32> into tensor<16xf32> loc(#loc10)
    %28 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel"]} ins(%collapsed : tensor<16xf32>) outs(%14 : tensor<16xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.negf %in : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<16xf32> loc(#loc10)
    %29 = linalg.generic {indexing_maps = [#map4, #map4, #map5, #map4], iterator_types = ["parallel"]} ins(%25, %28, %cst_1 : tensor<16xi1>, tensor<16xf32>, tensor<f32>) outs(%14 : tensor<16xf32>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %in_5: f32 loc("python/pp/torch.py":129:0), %in_6: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.select %in, %in_5, %in_6 : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<16xf32> loc(#loc10)
    %30 = tensor.empty() : tensor<i64> loc(#loc10)
    %31 = linalg.fill ins(%c0_i64 : i64) outs(%30 : tensor<i64>) -> tensor<i64> loc(#loc10)
    %32 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["reduction"]} ins(%25 : tensor<16xi1>) outs(%31 : tensor<i64>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %out: i64 loc("python/pp/torch.py":129:0)):
      %38 = arith.extui %in : i1 to i64 loc(#loc10)
      %39 = arith.addi %38, %out : i64 loc(#loc10)
      linalg.yield %39 : i64 loc(#loc10)
    } -> tensor<i64> loc(#loc10)
    %33 = tensor.empty() : tensor<f32> loc(#loc10)
    %34 = linalg.generic {indexing_maps = [#map6, #map6], iterator_types = []} ins(%32 : tensor<i64>) outs(%33 : tensor<f32>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.sitofp %in : i64 to f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<f32> loc(#loc10)
    %35 = linalg.fill ins(%cst : f32) outs(%33 : tensor<f32>) -> tensor<f32> loc(#loc10)
    %36 = linalg.generic {indexing_maps = [#map4, #map5], iterator_types = ["reduction"]} ins(%29 : tensor<16xf32>) outs(%35 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.addf %in, %out : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<f32> loc(#loc10)
    %37 = linalg.generic {indexing_maps = [#map6, #map6, #map6], iterator_types = []} ins(%36, %34 : tensor<f32>, tensor<f32>) outs(%33 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_5: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %38 = arith.divf %in, %in_5 : f32 loc(#loc10)
      linalg.yield %38 : f32 loc(#loc10)
    } -> tensor<f32> loc(#loc10)
    return %37 : tensor<f32> loc(#loc10)
  } loc(#loc12)
} loc(#loc)
#loc = loc(unknown)
