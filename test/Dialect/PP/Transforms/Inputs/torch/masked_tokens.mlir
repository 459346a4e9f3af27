#loc1 = loc("gen_torch_inputs.py":89:0)
#loc2 = loc("python/pp/torch.py":128:0)
#loc3 = loc("inputs[0]":0:0)
#loc4 = loc("targets[0]":0:0)
#loc5 = loc("embed.weight":0:0)
#loc6 = loc("l1.weight":0:0)
#loc7 = loc("l1.bias":0:0)
#loc8 = loc("l2.weight":0:0)
#loc9 = loc("l2.bias":0:0)
#loc10 = loc("l3.weight":0:0)
#loc11 = loc("l3.bias":0:0)
#loc12 = loc("head.weight":0:0)
#loc13 = loc("head.bias":0:0)
#loc14 = loc("bias.weight":0:0)
#loc15 = loc("python/pp/torch.py":129:0)
#loc16 = loc("gen_torch_inputs.py":90:0)
#loc17 = loc("gen_torch_inputs.py":92:0)
#loc18 = loc("torch/nn/modules/sparse.py":189:0)
#loc19 = loc("gen_torch_inputs.py":91:0)
#loc20 = loc("torch/nn/modules/linear.py":134:0)
#loc21 = loc("gen_torch_inputs.py":93:0)
#loc22 = loc("gen_torch_inputs.py":94:0)
#loc23 = loc("gen_torch_inputs.py":95:0)
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map3 = affine_map<(d0, d1) -> (d1)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map5 = affine_map<(d0, d1, d2) -> ()>
#map6 = affine_map<(d0, d1) -> (d0)>
#map7 = affine_map<(d0, d1) -> (d0, 0)>
#map8 = affine_map<(d0) -> (d0)>
#map9 = affine_map<(d0) -> ()>
#map10 = affine_map<() -> ()>
#loc24 = loc(callsite(#loc1 at #loc2))
#loc25 = loc(callsite(#loc16 at #loc2))
#loc26 = loc(callsite(#loc17 at #loc2))
#loc27 = loc(callsite(#loc19 at #loc2))
#loc28 = loc(callsite(#loc21 at #loc2))
#loc29 = loc(callsite(#loc22 at #loc2))
#loc30 = loc(callsite(#loc23 at #loc2))
#loc31 = loc(callsite(#loc18 at #loc27))
#loc32 = loc(callsite(#loc20 at #loc27))
#loc33 = loc(callsite(#loc20 at #loc28))
#loc34 = loc(callsite(#loc20 at #loc30))
#loc35 = loc(callsite(#loc18 at #loc30))
module {
  func.func @train_step(%arg0: tensor<4x6xi64> loc("inputs[0]":0:0), %arg1: tensor<4x6xi64> {pp.target} loc("targets[0]":0:0), %arg2: tensor<10x8xf32> {pp.name = "embed.weight", pp.param} loc("embed.weight":0:0), %arg3: tensor<8x8xf32> {pp.name = "l1.weight", pp.param} loc("l1.weight":0:0), %arg4: tensor<8xf32> {pp.name = "l1.bias", pp.param} loc("l1.bias":0:0), %arg5: tensor<8x8xf32> {pp.name = "l2.weight", pp.param} loc("l2.weight":0:0), %arg6: tensor<8xf32> {pp.name = "l2.bias", pp.param} loc("l2.bias":0:0), %arg7: tensor<8x8xf32> {pp.name = "l3.weight", pp.param} loc("l3.weight":0:0), %arg8: tensor<8xf32> {pp.name = "l3.bias", pp.param} loc("l3.bias":0:0), %arg9: tensor<10x8xf32> {pp.name = "head.weight", pp.param} loc("head.weight":0:0), %arg10: tensor<10xf32> {pp.name = "head.bias", pp.param} loc("head.bias":0:0), %arg11: tensor<10x10xf32> {pp.name = "bias.weight", pp.param} loc("bias.weight":0:0)) -> tensor<f32> {
    %c-100_i64 = arith.constant -100 : i64 loc(#loc15)
    %c10_i64 = arith.constant 10 : i64 loc(#loc)
    %c1_i64 = arith.constant 1 : i64 loc(#loc25)
    %c0_i64 = arith.constant 0 : i64 loc(#loc)
    %c10 = arith.constant 10 : index loc(#loc)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %true = arith.constant true loc(#loc)
    %cst_0 = arith.constant 0xFF800000 : f32 loc(#loc15)
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<f32> loc(#loc26)
    %cst_2 = arith.constant dense<0> : tensor<i64> loc(#loc15)
    %0 = tensor.empty() : tensor<4x6xi1> loc(#loc24)
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x6xi64>) outs(%0 : tensor<4x6xi1>) {
    ^bb0(%in: i64 loc(callsite(#loc1 at #loc2)), %out: i1 loc(callsite(#loc1 at #loc2))):
      %63 = arith.cmpi ne, %in, %c0_i64 : i64 loc(#loc24)
      linalg.yield %63 : i1 loc(#loc24)
    } -> tensor<4x6xi1> loc(#loc24)
    %2 = tensor.empty() : tensor<4x6xi64> loc(#loc25)
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x6xi64>) outs(%2 : tensor<4x6xi64>) {
    ^bb0(%in: i64 loc(callsite(#loc1 at #loc2)), %out: i64 loc(callsite(#loc16 at #loc2))):
      %63 = arith.addi %in, %c1_i64 : i64 loc(#loc25)
      linalg.yield %63 : i64 loc(#loc25)
    } -> tensor<4x6xi64> loc(#loc25)
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<4x6xi64>) outs(%2 : tensor<4x6xi64>) {
    ^bb0(%in: i64 loc(callsite(#loc16 at #loc2)), %out: i64 loc(callsite(#loc16 at #loc2))):
      %63 = arith.remsi %in, %c10_i64 : i64 loc(#loc25)
      %64 = arith.cmpi ne, %63, %c0_i64 : i64 loc(#loc25)
      %65 = arith.cmpi slt, %63, %c0_i64 : i64 loc(#loc25)
      %66 = arith.andi %64, %65 : i1 loc(#loc25)
      %67 = arith.addi %63, %c10_i64 : i64 loc(#loc25)
      %68 = arith.select %66, %67, %63 : i64 loc(#loc25)
      linalg.yield %68 : i64 loc(#loc25)
    } -> tensor<4x6xi64> loc(#loc25)
    %5 = tensor.empty() : tensor<4x6x8xf32> loc(#loc31)
    %6 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<4x6xi64>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: i64 loc(callsite(#loc1 at #loc2)), %out: f32 loc(callsite(#loc18 at #loc27))):
      %63 = arith.index_cast %in : i64 to index loc(#loc31)
      %64 = linalg.index 2 : index loc(#loc31)
      %65 = arith.cmpi slt, %63, %c10 : index loc(#loc31)
      cf.assert %65, "index must be smaller than dim size" loc(#loc31)
      %66 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc31)
      cf.assert %66, "index must be larger or equal to 0" loc(#loc31)
      %extracted = tensor.extract %arg2[%63, %64] : tensor<10x8xf32> loc(#loc31)
      linalg.yield %extracted : f32 loc(#loc31)
    } -> tensor<4x6x8xf32> loc(#loc31)
    %7 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<4x6xi64>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: i64 loc(callsite(#loc16 at #loc2)), %out: f32 loc(callsite(#loc18 at #loc27))):
      %63 = arith.index_cast %in : i64 to index loc(#loc31)
      %64 = linalg.index 2 : index loc(#loc31)
      %65 = arith.cmpi slt, %63, %c10 : index loc(#loc31)
      cf.assert %65, "index must be smaller than dim size" loc(#loc31)
      %66 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc31)
      cf.assert %66, "index must be larger or equal to 0" loc(#loc31)
      %extracted = tensor.extract %arg2[%63, %64] : tensor<10x8xf32> loc(#loc31)
      linalg.yield %extracted : f32 loc(#loc31)
    } -> tensor<4x6x8xf32> loc(#loc31)
    %8 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %7 : tensor<4x6x8xf32>, tensor<4x6x8xf32>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc18 at #loc27)), %in_18: f32 loc(callsite(#loc18 at #loc27)), %out: f32 loc(callsite(#loc19 at #loc2))):
      %63 = arith.addf %in, %in_18 : f32 loc(#loc27)
      linalg.yield %63 : f32 loc(#loc27)
    } -> tensor<4x6x8xf32> loc(#loc27)
    %collapsed = tensor.collapse_shape %8 [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32> loc(#loc32)
    %9 = tensor.empty() : tensor<8x8xf32> loc(#loc32)
    %transposed = linalg.transpose ins(%arg3 : tensor<8x8xf32>) outs(%9 : tensor<8x8xf32>) permutation = [1, 0]  loc(#loc32)
    %10 = tensor.empty() : tensor<24x8xf32> loc(#loc32)
    %11 = linalg.fill ins(%cst : f32) outs(%10 : tensor<24x8xf32>) -> tensor<24x8xf32> loc(#loc32)
    %12 = linalg.matmul ins(%collapsed, %transposed : tensor<24x8xf32>, tensor<8x8xf32>) outs(%11 : tensor<24x8xf32>) -> tensor<24x8xf32> loc(#loc32)
    %13 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%arg4 : tensor<8xf32>) outs(%10 : tensor<24x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc27)), %out: f32 loc(callsite(#loc20 at #loc27))):
      linalg.yield %in : f32 loc(#loc32)
    } -> tensor<24x8xf32> loc(#loc32)
    %14 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%12, %13 : tensor<24x8xf32>, tensor<24x8xf32>) outs(%10 : tensor<24x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc27)), %in_18: f32 loc(callsite(#loc20 at #loc27)), %out: f32 loc(callsite(#loc20 at #loc27))):
      %63 = arith.addf %in, %in_18 : f32 loc(#loc32)
      linalg.yield %63 : f32 loc(#loc32)
    } -> tensor<24x8xf32> loc(#loc32)
    %expanded = tensor.expand_shape %14 [[0, 1], [2]] output_shape [4, 6, 8] : tensor<24x8xf32> into tensor<4x6x8xf32> loc(#loc32)
    %15 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<4x6x8xf32>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc27)), %out: f32 loc(callsite(#loc19 at #loc2))):
      %63 = math.tanh %in : f32 loc(#loc27)
      linalg.yield %63 : f32 loc(#loc27)
    } -> tensor<4x6x8xf32> loc(#loc27)
    %expanded_3 = tensor.expand_shape %1 [[0], [1, 2]] output_shape [4, 6, 1] : tensor<4x6xi1> into tensor<4x6x1xi1> loc(#loc26)
    %16 = tensor.empty() : tensor<4x6x1xi1> loc(#loc26)
    %17 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_3 : tensor<4x6x1xi1>) outs(%16 : tensor<4x6x1xi1>) {
    ^bb0(%in: i1 loc(callsite(#loc17 at #loc2)), %out: i1 loc(callsite(#loc17 at #loc2))):
      %63 = arith.xori %in, %true : i1 loc(#loc26)
      linalg.yield %63 : i1 loc(#loc26)
    } -> tensor<4x6x1xi1> loc(#loc26)
    %18 = linalg.generic {indexing_maps = [#map4, #map5, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17, %cst_1, %15 : tensor<4x6x1xi1>, tensor<f32>, tensor<4x6x8xf32>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: i1 loc(callsite(#loc17 at #loc2)), %in_18: f32 loc(callsite(#loc17 at #loc2)), %in_19: f32 loc(callsite(#loc19 at #loc2)), %out: f32 loc(callsite(#loc17 at #loc2))):
      %63 = arith.select %in, %in_18, %in_19 : f32 loc(#loc26)
      linalg.yield %63 : f32 loc(#loc26)
    } -> tensor<4x6x8xf32> loc(#loc26)
    %collapsed_4 = tensor.collapse_shape %18 [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32> loc(#loc33)
    %transposed_5 = linalg.transpose ins(%arg5 : tensor<8x8xf32>) outs(%9 : tensor<8x8xf32>) permutation = [1, 0]  loc(#loc33)
    %19 = linalg.matmul ins(%collapsed_4, %transposed_5 : tensor<24x8xf32>, tensor<8x8xf32>) outs(%11 : tensor<24x8xf32>) -> tensor<24x8xf32> loc(#loc33)
    %20 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%arg6 : tensor<8xf32>) outs(%10 : tensor<24x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc28)), %out: f32 loc(callsite(#loc20 at #loc28))):
      linalg.yield %in : f32 loc(#loc33)
    } -> tensor<24x8xf32> loc(#loc33)
    %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %20 : tensor<24x8xf32>, tensor<24x8xf32>) outs(%10 : tensor<24x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc28)), %in_18: f32 loc(callsite(#loc20 at #loc28)), %out: f32 loc(callsite(#loc20 at #loc28))):
      %63 = arith.addf %in, %in_18 : f32 loc(#loc33)
      linalg.yield %63 : f32 loc(#loc33)
    } -> tensor<24x8xf32> loc(#loc33)
    %expanded_6 = tensor.expand_shape %21 [[0, 1], [2]] output_shape [4, 6, 8] : tensor<24x8xf32> into tensor<4x6x8xf32> loc(#loc33)
    %22 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_6 : tensor<4x6x8xf32>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc28)), %out: f32 loc(callsite(#loc21 at #loc2))):
      %63 = math.tanh %in : f32 loc(#loc28)
      linalg.yield %63 : f32 loc(#loc28)
    } -> tensor<4x6x8xf32> loc(#loc28)
    %collapsed_7 = tensor.collapse_shape %22 [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32> loc(#loc33)
    %transposed_8 = linalg.transpose ins(%arg7 : tensor<8x8xf32>) outs(%9 : tensor<8x8xf32>) permutation = [1, 0]  loc(#loc33)
    %23 = linalg.matmul ins(%collapsed_7, %transposed_8 : tensor<24x8xf32>, tensor<8x8xf32>) outs(%11 : tensor<24x8xf32>) -> tensor<24x8xf32> loc(#loc33)
    %24 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%arg8 : tensor<8xf32>) outs(%10 : tensor<24x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc28)), %out: f32 loc(callsite(#loc20 at #loc28))):
      linalg.yield %in : f32 loc(#loc33)
    } -> tensor<24x8xf32> loc(#loc33)
    %25 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%23, %24 : tensor<24x8xf32>, tensor<24x8xf32>) outs(%10 : tensor<24x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc28)), %in_18: f32 loc(callsite(#loc20 at #loc28)), %out: f32 loc(callsite(#loc20 at #loc28))):
      %63 = arith.addf %in, %in_18 : f32 loc(#loc33)
      linalg.yield %63 : f32 loc(#loc33)
    } -> tensor<24x8xf32> loc(#loc33)
    %expanded_9 = tensor.expand_shape %25 [[0, 1], [2]] output_shape [4, 6, 8] : tensor<24x8xf32> into tensor<4x6x8xf32> loc(#loc33)
    %26 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_9 : tensor<4x6x8xf32>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc28)), %out: f32 loc(callsite(#loc21 at #loc2))):
      %63 = math.tanh %in : f32 loc(#loc28)
      linalg.yield %63 : f32 loc(#loc28)
    } -> tensor<4x6x8xf32> loc(#loc28)
    %27 = linalg.generic {indexing_maps = [#map4, #map2, #map5, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_3, %26, %cst_1 : tensor<4x6x1xi1>, tensor<4x6x8xf32>, tensor<f32>) outs(%5 : tensor<4x6x8xf32>) {
    ^bb0(%in: i1 loc(callsite(#loc22 at #loc2)), %in_18: f32 loc(callsite(#loc21 at #loc2)), %in_19: f32 loc(callsite(#loc17 at #loc2)), %out: f32 loc(callsite(#loc22 at #loc2))):
      %63 = arith.select %in, %in_18, %in_19 : f32 loc(#loc29)
      linalg.yield %63 : f32 loc(#loc29)
    } -> tensor<4x6x8xf32> loc(#loc29)
    %collapsed_10 = tensor.collapse_shape %27 [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32> loc(#loc34)
    %28 = tensor.empty() : tensor<8x10xf32> loc(#loc34)
    %transposed_11 = linalg.transpose ins(%arg9 : tensor<10x8xf32>) outs(%28 : tensor<8x10xf32>) permutation = [1, 0]  loc(#loc34)
    %29 = tensor.empty() : tensor<24x10xf32> loc(#loc34)
    %30 = linalg.fill ins(%cst : f32) outs(%29 : tensor<24x10xf32>) -> tensor<24x10xf32> loc(#loc34)
    %31 = linalg.matmul ins(%collapsed_10, %transposed_11 : tensor<24x8xf32>, tensor<8x10xf32>) outs(%30 : tensor<24x10xf32>) -> tensor<24x10xf32> loc(#loc34)
    %32 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%arg10 : tensor<10xf32>) outs(%29 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc30)), %out: f32 loc(callsite(#loc20 at #loc30))):
      linalg.yield %in : f32 loc(#loc34)
    } -> tensor<24x10xf32> loc(#loc34)
    %33 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%31, %32 : tensor<24x10xf32>, tensor<24x10xf32>) outs(%29 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc30)), %in_18: f32 loc(callsite(#loc20 at #loc30)), %out: f32 loc(callsite(#loc20 at #loc30))):
      %63 = arith.addf %in, %in_18 : f32 loc(#loc34)
      linalg.yield %63 : f32 loc(#loc34)
    } -> tensor<24x10xf32> loc(#loc34)
    %expanded_12 = tensor.expand_shape %33 [[0, 1], [2]] output_shape [4, 6, 10] : tensor<24x10xf32> into tensor<4x6x10xf32> loc(#loc34)
    %34 = tensor.empty() : tensor<4x6x10xf32> loc(#loc35)
    %35 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<4x6xi64>) outs(%34 : tensor<4x6x10xf32>) {
    ^bb0(%in: i64 loc(callsite(#loc16 at #loc2)), %out: f32 loc(callsite(#loc18 at #loc30))):
      %63 = arith.index_cast %in : i64 to index loc(#loc35)
      %64 = linalg.index 2 : index loc(#loc35)
      %65 = arith.cmpi slt, %63, %c10 : index loc(#loc35)
      cf.assert %65, "index must be smaller than dim size" loc(#loc35)
      %66 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc35)
      cf.assert %66, "index must be larger or equal to 0" loc(#loc35)
      %extracted = tensor.extract %arg11[%63, %64] : tensor<10x10xf32> loc(#loc35)
      linalg.yield %extracted : f32 loc(#loc35)
    } -> tensor<4x6x10xf32> loc(#loc35)
    %36 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_12, %35 : tensor<4x6x10xf32>, tensor<4x6x10xf32>) outs(%34 : tensor<4x6x10xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc20 at #loc30)), %in_18: f32 loc(callsite(#loc18 at #loc30)), %out: f32 loc(callsite(#loc23 at #loc2))):
      %63 = arith.addf %in, %in_18 : f32 loc(#loc30)
      linalg.yield %63 : f32 loc(#loc30)
    } -> tensor<4x6x10xf32> loc(#loc30)
    %collapsed_13 = tensor.collapse_shape %36 [[0, 1], [2]] : tensor<4x6x10xf32> into tensor<24x10xf32> loc(#loc15)
    %collapsed_14 = tensor.collapse_shape %arg1 [[0, 1]] : tensor<4x6xi64> into tensor<24xi64> loc(#loc15)
    %37 = tensor.empty() : tensor<24xi64> loc(#loc15)
    %38 = linalg.fill ins(%c0_i64 : i64) outs(%37 : tensor<24xi64>) -> tensor<24xi64> loc(#loc15)
    %39 = tensor.empty() : tensor<24xf32> loc(#loc15)
    %40 = linalg.fill ins(%cst_0 : f32) outs(%39 : tensor<24xf32>) -> tensor<24xf32> loc(#loc15)
    %41:2 = linalg.generic {indexing_maps = [#map, #map6, #map6], iterator_types = ["parallel", "reduction"]} ins(%collapsed_13 : tensor<24x10xf32>) outs(%40, %38 : tensor<24xf32>, tensor<24xi64>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0), %out_18: i64 loc("python/pp/torch.py":129:0)):
      %63 = linalg.index 1 : index loc(#loc15)
      %64 = arith.index_cast %63 : index to i64 loc(#loc15)
      %65 = arith.maximumf %in, %out : f32 loc(#loc15)
      %66 = arith.cmpf ogt, %in, %out : f32 loc(#loc15)
      %67 = arith.select %66, %64, %out_18 : i64 loc(#loc15)
      linalg.yield %65, %67 : f32, i64 loc(#loc15)
    } -> (tensor<24xf32>, tensor<24xi64>) loc(#loc15)
    %expanded_15 = tensor.expand_shape %41#0 [[0, 1]] output_shape [24, 1] : tensor<24xf32> into tensor<24x1xf32> loc(#loc15)
    %42 = linalg.generic {indexing_maps = [#map, #map7, #map], iterator_types = ["parallel", "parallel"]} ins(%collapsed_13, %expanded_15 : tensor<24x10xf32>, tensor<24x1xf32>) outs(%29 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_18: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.subf %in, %in_18 : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<24x10xf32> loc(#loc15)
    %43 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%42 : tensor<24x10xf32>) outs(%29 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = math.exp %in : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<24x10xf32> loc(#loc15)
    %44 = tensor.empty() : tensor<24x1xf32> loc(#loc15)
    %45 = linalg.fill ins(%cst : f32) outs(%44 : tensor<24x1xf32>) -> tensor<24x1xf32> loc(#loc15)
    %46 = linalg.generic {indexing_maps = [#map, #map7], iterator_types = ["parallel", "reduction"]} ins(%43 : tensor<24x10xf32>) outs(%45 : tensor<24x1xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.addf %in, %out : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<24x1xf32> loc(#loc15)
    %47 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%46 : tensor<24x1xf32>) outs(%44 : tensor<24x1xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = math.log %in : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<24x1xf32> loc(#loc15)
    %48 = linalg.generic {indexing_maps = [#map, #map7, #map], iterator_types = ["parallel", "parallel"]} ins(%42, %47 : tensor<24x10xf32>, tensor<24x1xf32>) outs(%29 : tensor<24x10xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_18: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.subf %in, %in_18 : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<24x10xf32> loc(#loc15)
    %49 = tensor.empty() : tensor<24xi1> loc(#loc15)
    %50 = linalg.generic {indexing_maps = [#map8, #map8], iterator_types = ["parallel"]} ins(%collapsed_14 : tensor<24xi64>) outs(%49 : tensor<24xi1>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: i1 loc("python/pp/torch.py":129:0)):
      %63 = arith.cmpi ne, %in, %c-100_i64 : i64 loc(#loc15)
      linalg.yield %63 : i1 loc(#loc15)
    } -> tensor<24xi1> loc(#loc15)
    %51 = linalg.generic {indexing_maps = [#map8, #map8, #map9, #map8], iterator_types = ["parallel"]} ins(%50, %collapsed_14, %cst_2 : tensor<24xi1>, tensor<24xi64>, tensor<i64>) outs(%37 : tensor<24xi64>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %in_18: i64 loc("python/pp/torch.py":129:0), %in_19: i64 loc("python/pp/torch.py":129:0), %out: i64 loc("python/pp/torch.py":129:0)):
      %63 = arith.select %in, %in_18, %in_19 : i64 loc(#loc15)
      linalg.yield %63 : i64 loc(#loc15)
    } -> tensor<24xi64> loc(#loc15)
    %expanded_16 = tensor.expand_shape %51 [[0, 1]] output_shape [24, 1] : tensor<24xi64> into tensor<24x1xi64> loc(#loc15)
    %52 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_16 : tensor<24x1xi64>) outs(%45 : tensor<24x1xf32>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = linalg.index 0 : index loc(#loc15)
      %64 = arith.index_cast %in : i64 to index loc(#loc15)
      %65 = arith.cmpi slt, %64, %c10 : index loc(#loc15)
      cf.assert %65, "index must be smaller than dim size" loc(#loc15)
      %66 = arith.cmpi sge, %in, %c0_i64 : i64 loc(#loc15)
      cf.assert %66, "index must be larger or equal to 0" loc(#loc15)
      %extracted = tensor.extract %48[%63, %64] : tensor<24x10xf32> loc(#loc15)
      linalg.yield %extracted : f32 loc(#loc15)
    } -> tensor<24x1xf32> loc(#loc15)
    %collapsed_17 = tensor.collapse_shape %52 [[0, 1]] : tensor<24x1xf32> into tensor<24xf32> loc(#loc15)
    %53 = linalg.generic {indexing_maps = [#map8, #map8], iterator_types = ["parallel"]} ins(%collapsed_17 : tensor<24xf32>) outs(%39 : tensor<24xf32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.negf %in : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<24xf32> loc(#loc15)
    %54 = linalg.generic {indexing_maps = [#map8, #map8, #map9, #map8], iterator_types = ["parallel"]} ins(%50, %53, %cst_1 : tensor<24xi1>, tensor<24xf32>, tensor<f32>) outs(%39 : tensor<24xf32>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %in_18: f32 loc("python/pp/torch.py":129:0), %in_19: f32 loc(callsite(#loc17 at #loc2)), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.select %in, %in_18, %in_19 : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<24xf32> loc(#loc15)
    %55 = tensor.empty() : tensor<i64> loc(#loc15)
    %56 = linalg.fill ins(%c0_i64 : i64) outs(%55 : tensor<i64>) -> tensor<i64> loc(#loc15)
    %57 = linalg.generic {indexing_maps = [#map8, #map9], iterator_types = ["reduction"]} ins(%50 : tensor<24xi1>) outs(%56 : tensor<i64>) {
    ^bb0(%in: i1 loc("python/pp/torch.py":129:0), %out: i64 loc("python/pp/torch.py":129:0)):
      %63 = arith.extui %in : i1 to i64 loc(#loc15)
      %64 = arith.addi %63, %out : i64 loc(#loc15)
      linalg.yield %64 : i64 loc(#loc15)
    } -> tensor<i64> loc(#loc15)
    %58 = tensor.empty() : tensor<f32> loc(#loc15)
    %59 = linalg.generic {indexing_maps = [#map10, #map10], iterator_types = []} ins(%57 : tensor<i64>) outs(%58 : tensor<f32>) {
    ^bb0(%in: i64 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.sitofp %in : i64 to f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<f32> loc(#loc15)
    %60 = linalg.fill ins(%cst : f32) outs(%58 : tensor<f32>) -> tensor<f32> loc(#loc15)
    %61 = linalg.generic {indexing_maps = [#map8, #map9], iterator_types = ["reduction"]} ins(%54 : tensor<24xf32>) outs(%60 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.addf %in, %out : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<f32> loc(#loc15)
    %62 = linalg.generic {indexing_maps = [#map10, #map10, #map10], iterator_types = []} ins(%61, %59 : tensor<f32>, tensor<f32>) outs(%58 : tensor<f32>) {
    ^bb0(%in: f32 loc("python/pp/torch.py":129:0), %in_18: f32 loc("python/pp/torch.py":129:0), %out: f32 loc("python/pp/torch.py":129:0)):
      %63 = arith.divf %in, %in_18 : f32 loc(#loc15)
      linalg.yield %63 : f32 loc(#loc15)
    } -> tensor<f32> loc(#loc15)
    return %62 : tensor<f32> loc(#loc15)
  } loc(#loc24)
} loc(#loc)
#loc = loc(unknown)
