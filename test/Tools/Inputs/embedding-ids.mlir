// Token ids into an embedding of 10 rows, and target ids into one of 12, as
// torch-mlir imports F.embedding: each gather reads its table with
// tensor.extract at the id. The loss pulls the two embeddings together.
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @train_step(%ids: tensor<4x6xi64>, %tgt: tensor<4x6xi64> {pp.target},
                      %a: tensor<10x8xf32> {pp.param},
                      %b: tensor<12x8xf32> {pp.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x6x8xf32>
  %x = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<4x6xi64>) outs(%e : tensor<4x6x8xf32>) {
  ^bb0(%in: i64, %o: f32):
    %i = arith.index_cast %in : i64 to index
    %d = linalg.index 2 : index
    %v = tensor.extract %a[%i, %d] : tensor<10x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x6x8xf32>
  %y = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%tgt : tensor<4x6xi64>) outs(%e : tensor<4x6x8xf32>) {
  ^bb0(%in: i64, %o: f32):
    %i = arith.index_cast %in : i64 to index
    %d = linalg.index 2 : index
    %v = tensor.extract %b[%i, %d] : tensor<12x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x6x8xf32>
  %diff = linalg.sub ins(%x, %y : tensor<4x6x8xf32>, tensor<4x6x8xf32>) outs(%e : tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %sq = linalg.mul ins(%diff, %diff : tensor<4x6x8xf32>, tensor<4x6x8xf32>) outs(%e : tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  %z = arith.constant 0.0 : f32
  %s = tensor.empty() : tensor<f32>
  %sf = linalg.fill ins(%z : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%sq : tensor<4x6x8xf32>) outs(%sf : tensor<f32>) dimensions = [0, 1, 2]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
