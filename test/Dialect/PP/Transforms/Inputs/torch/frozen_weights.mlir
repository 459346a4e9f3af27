#loc1 = loc("torch/nn/modules/linear.py":134:0)
#loc2 = loc("gen_torch_inputs.py":151:0)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> ()>
#map3 = affine_map<() -> ()>
#loc3 = loc(callsite(#loc1 at #loc2))
module {
  func.func @train_step(%arg0: tensor<8x4xf32> loc(callsite(#loc1 at #loc2)), %arg1: tensor<8x2xf32> loc(callsite(#loc1 at #loc2))) -> tensor<f32> {
    %c2_i64 = arith.constant 2 : i64 loc(#loc)
    %cst = arith.constant 0.000000e+00 : f32 loc(#loc)
    %cst_0 = arith.constant dense_resource<torch_tensor_2_torch.float32> : tensor<2xf32> loc(#loc3)
    %cst_1 = arith.constant dense_resource<torch_tensor_2_4_torch.float32> : tensor<2x4xf32> loc(#loc3)
    %cst_2 = arith.constant 1.600000e+01 : f32 loc(#loc)
    %0 = tensor.empty() : tensor<4x2xf32> loc(#loc3)
    %transposed = linalg.transpose ins(%cst_1 : tensor<2x4xf32>) outs(%0 : tensor<4x2xf32>) permutation = [1, 0]  loc(#loc3)
    %1 = tensor.empty() : tensor<8x2xf32> loc(#loc3)
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<8x2xf32>) -> tensor<8x2xf32> loc(#loc3)
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<8x4xf32>, tensor<4x2xf32>) outs(%2 : tensor<8x2xf32>) -> tensor<8x2xf32> loc(#loc3)
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%cst_0 : tensor<2xf32>) outs(%1 : tensor<8x2xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc2)), %out: f32 loc(callsite(#loc1 at #loc2))):
      linalg.yield %in : f32 loc(#loc3)
    } -> tensor<8x2xf32> loc(#loc3)
    %5 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%3, %4 : tensor<8x2xf32>, tensor<8x2xf32>) outs(%1 : tensor<8x2xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc2)), %in_3: f32 loc(callsite(#loc1 at #loc2)), %out: f32 loc(callsite(#loc1 at #loc2))):
      %12 = arith.addf %in, %in_3 : f32 loc(#loc3)
      linalg.yield %12 : f32 loc(#loc3)
    } -> tensor<8x2xf32> loc(#loc3)
    %6 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%5, %arg1 : tensor<8x2xf32>, tensor<8x2xf32>) outs(%1 : tensor<8x2xf32>) {
    ^bb0(%in: f32 loc(callsite(#loc1 at #loc2)), %in_3: f32 loc("gen_torch_inputs.py":151:0), %out: f32 loc("gen_torch_inputs.py":151:0)):
      %12 = arith.subf %in, %in_3 : f32 loc(#loc2)
      linalg.yield %12 : f32 loc(#loc2)
    } -> tensor<8x2xf32> loc(#loc2)
    %7 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<8x2xf32>) outs(%1 : tensor<8x2xf32>) {
    ^bb0(%in: f32 loc("gen_torch_inputs.py":151:0), %out: f32 loc("gen_torch_inputs.py":151:0)):
      %12 = math.fpowi %in, %c2_i64 : f32, i64 loc(#loc2)
      linalg.yield %12 : f32 loc(#loc2)
    } -> tensor<8x2xf32> loc(#loc2)
    %8 = tensor.empty() : tensor<f32> loc(#loc2)
    %9 = linalg.fill ins(%cst : f32) outs(%8 : tensor<f32>) -> tensor<f32> loc(#loc2)
    %10 = linalg.generic {indexing_maps = [#map1, #map2], iterator_types = ["reduction", "reduction"]} ins(%7 : tensor<8x2xf32>) outs(%9 : tensor<f32>) {
    ^bb0(%in: f32 loc("gen_torch_inputs.py":151:0), %out: f32 loc("gen_torch_inputs.py":151:0)):
      %12 = arith.addf %in, %out : f32 loc(#loc2)
      linalg.yield %12 : f32 loc(#loc2)
    } -> tensor<f32> loc(#loc2)
    %11 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = []} ins(%10 : tensor<f32>) outs(%8 : tensor<f32>) {
    ^bb0(%in: f32 loc("gen_torch_inputs.py":151:0), %out: f32 loc("gen_torch_inputs.py":151:0)):
      %12 = arith.divf %in, %cst_2 : f32 loc(#loc2)
      linalg.yield %12 : f32 loc(#loc2)
    } -> tensor<f32> loc(#loc2)
    return %11 : tensor<f32> loc(#loc2)
  } loc(#loc3)
} loc(#loc)
#loc = loc(unknown)

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_2_torch.float32: "0x0400000010243CBE3C1BFF3E",
      torch_tensor_2_4_torch.float32: "0x04000000DCA538BE0015F83E34039DBEB4F952BE728CC0BE6498BC3EB40BB0BE0CEF533E"
    }
  }
#-}
