// Stage 0 sends %h to stage 1 and also saves it for its own backward (the
// row sum reads it), so its forward returns %h twice; pp-compile must still
// lower it (buffer-results-to-out-params needs one buffer per result).
// REQUIRES: mpi
// RUN: pp-compile %s --stages 2 --microbatches 2 --emit=schedule -o - | FileCheck %s --check-prefix=SCHED
// RUN: pp-compile %s --stages 2 --microbatches 2 --emit=mlir -o - | FileCheck %s --check-prefix=MLIR
// SCHED: func.func @train_step_s0_forward
// SCHED: return %[[H:[0-9]+]], %{{[0-9]+}}, %[[H]]
// MLIR: llvm.func @train_step_s0_forward
// MLIR: llvm.func @pp_run_step(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @train_step(%x: tensor<4x3xf32>, %y: tensor<4x3xf32> {pp.target},
                      %w: tensor<3x3xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %er = tensor.empty() : tensor<4xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x3xf32>) outs(%zr : tensor<4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %r = arith.addf %acc, %sq : f32
      linalg.yield %r : f32
  } -> tensor<4xf32>
  %cut = pp.boundary %s : tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %cut, %y : tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %t: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %d = arith.subf %m, %t : f32
      %d2 = arith.mulf %d, %d : f32
      linalg.yield %d2 : f32
  } -> tensor<4x3xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%p : tensor<4x3xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %sum = arith.addf %in, %acc : f32
      linalg.yield %sum : f32
    }
  return %loss : tensor<f32>
}
