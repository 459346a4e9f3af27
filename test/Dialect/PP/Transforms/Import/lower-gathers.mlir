// RUN: pp-opt %s -split-input-file --pp-lower-gathers | FileCheck %s

// F.embedding as torch-mlir imports it: the table becomes an operand read
// at (id loop, embedding loop), the id selects its row through a new
// reduction loop over the vocabulary, and the bounds checks go.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[TABLE:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// The ids index a table of 10 rows: the runtime checks them against it.
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME: %[[IDS_ARG:.*]]: tensor<4x6xi64> {pp.id_bound = 10 : i64}, %[[W:.*]]: tensor<10x8xf32>)
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x6x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IDS]], #[[TABLE]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[IDS_ARG]], %[[W]] : tensor<4x6xi64>, tensor<10x8xf32>) outs(%[[ZEROS]] : tensor<4x6x8xf32>)
// CHECK-NEXT: ^bb0(%[[ID:.*]]: i64, %[[ELEM:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[V:.*]] = linalg.index 3 : index
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[I]], %[[V]] : index
// CHECK: %[[PICK:.*]] = arith.select %[[HIT]], %[[ELEM]], %{{.*}} : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[PICK]] : f32
// CHECK: linalg.yield %[[SUM]] : f32
// CHECK-NOT: cf.assert
// CHECK-NOT: tensor.extract
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @embedding(%ids: tensor<4x6xi64>, %w: tensor<10x8xf32>) -> tensor<4x6x8xf32> {
  %c10 = arith.constant 10 : index
  %c0_i64 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4x6x8xf32>
  %r = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<4x6xi64>) outs(%e : tensor<4x6x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %d = linalg.index 2 : index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %w[%i, %d] : tensor<10x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x6x8xf32>
  return %r : tensor<4x6x8xf32>
}

// -----

// The target pick of F.cross_entropy: the logits are read at (row loop,
// class loop), summed over the class loop where the class is the target.
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @pick(
// CHECK-SAME: %[[TGT:.*]]: tensor<24x1xi64> {pp.id_bound = 10 : i64}, %[[LOGITS:.*]]: tensor<24x10xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[T]], #[[X]], #[[T]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[TGT]], %[[LOGITS]] : tensor<24x1xi64>, tensor<24x10xf32>)
// CHECK: linalg.index 2 : index
#m = affine_map<(d0, d1) -> (d0, d1)>
func.func @pick(%t: tensor<24x1xi64>, %x: tensor<24x10xf32>) -> tensor<24x1xf32> {
  %e = tensor.empty() : tensor<24x1xf32>
  %r = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<24x1xi64>) outs(%e : tensor<24x1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = linalg.index 0 : index
    %c = arith.index_cast %in : i64 to index
    %v = tensor.extract %x[%row, %c] : tensor<24x10xf32>
    linalg.yield %v : f32
  } -> tensor<24x1xf32>
  return %r : tensor<24x1xf32>
}

// -----

// An extract of a tensor the op reads as an operand, or whose loop index
// spans another size than the table's dimension, is left alone.
// CHECK-LABEL: func.func @not_a_gather(
// CHECK-NOT: pp.id_bound
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<10x9xf32>
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_a_gather(%ids: tensor<4x8xi64>, %w: tensor<10x9xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4x8xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %d = linalg.index 1 : index
    %v = tensor.extract %w[%i, %d] : tensor<10x9xf32>
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Ids read through a reshape of the argument and a sign extension, by two
// tables: the smaller one bounds them.
// CHECK-LABEL: func.func @two_tables(
// CHECK-SAME: %{{.*}}: tensor<24xi32> {pp.id_bound = 7 : i64}
#m3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#o3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @two_tables(%ids: tensor<24xi32>, %a: tensor<9x8xf32>, %b: tensor<7x8xf32>) -> (tensor<4x6x8xf32>, tensor<4x6x8xf32>) {
  %r = tensor.expand_shape %ids [[0, 1]] output_shape [4, 6] : tensor<24xi32> into tensor<4x6xi32>
  %e = tensor.empty() : tensor<4x6x8xf32>
  %x = linalg.generic {indexing_maps = [#m3, #o3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<4x6xi32>) outs(%e : tensor<4x6x8xf32>) {
  ^bb0(%in: i32, %out: f32):
    %w = arith.extsi %in : i32 to i64
    %i = arith.index_cast %w : i64 to index
    %d = linalg.index 2 : index
    %v = tensor.extract %a[%i, %d] : tensor<9x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x6x8xf32>
  %y = linalg.generic {indexing_maps = [#m3, #o3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<4x6xi32>) outs(%e : tensor<4x6x8xf32>) {
  ^bb0(%in: i32, %out: f32):
    %i = arith.index_cast %in : i32 to index
    %d = linalg.index 2 : index
    %v = tensor.extract %b[%i, %d] : tensor<7x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x6x8xf32>
  return %x, %y : tensor<4x6x8xf32>, tensor<4x6x8xf32>
}

// -----

// F.cross_entropy's ignore_index mask, as torch-mlir imports it: targets
// of -100 are read as class 0 and counted for nothing, so the argument is
// bounded by the classes and may also hold -100.
// CHECK-LABEL: func.func @masked_pick(
// CHECK-SAME: %{{.*}}: tensor<16xi64> {pp.id_bound = 5 : i64, pp.id_ignored = -100 : i64}
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
#m4 = affine_map<(d0, d1) -> (d0, d1)>
func.func @masked_pick(%t: tensor<16xi64>, %x: tensor<16x5xf32>) -> tensor<16x1xf32> {
  %ignore = arith.constant -100 : i64
  %zero = arith.constant dense<0> : tensor<i64>
  %be = tensor.empty() : tensor<16xi1>
  %kept = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%t : tensor<16xi64>) outs(%be : tensor<16xi1>) {
  ^bb0(%in: i64, %out: i1):
    %ne = arith.cmpi ne, %in, %ignore : i64
    linalg.yield %ne : i1
  } -> tensor<16xi1>
  %ie = tensor.empty() : tensor<16xi64>
  %ids = linalg.generic {indexing_maps = [#v, #v, #s, #v], iterator_types = ["parallel"]}
      ins(%kept, %t, %zero : tensor<16xi1>, tensor<16xi64>, tensor<i64>) outs(%ie : tensor<16xi64>) {
  ^bb0(%k: i1, %id: i64, %z: i64, %out: i64):
    %sel = arith.select %k, %id, %z : i64
    linalg.yield %sel : i64
  } -> tensor<16xi64>
  %col = tensor.expand_shape %ids [[0, 1]] output_shape [16, 1] : tensor<16xi64> into tensor<16x1xi64>
  %e = tensor.empty() : tensor<16x1xf32>
  %r = linalg.generic {indexing_maps = [#m4, #m4], iterator_types = ["parallel", "parallel"]}
      ins(%col : tensor<16x1xi64>) outs(%e : tensor<16x1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = linalg.index 0 : index
    %c = arith.index_cast %in : i64 to index
    %v = tensor.extract %x[%row, %c] : tensor<16x5xf32>
    linalg.yield %v : f32
  } -> tensor<16x1xf32>
  return %r : tensor<16x1xf32>
}

// -----

// The same mask, but the targets are also gathered unmasked: -100 would
// gather nothing there, so only the bound is kept. A mask that replaces
// -100 by a class past the table (7 of 5) leaves it out as well.
// CHECK-LABEL: func.func @masked_and_unmasked(
// CHECK-SAME: %{{.*}}: tensor<16xi64> {pp.id_bound = 5 : i64}, %{{.*}}: tensor<16xi64> {pp.id_bound = 5 : i64}, %{{.*}}: tensor<16x5xf32>)
#v5 = affine_map<(d0) -> (d0)>
#s5 = affine_map<(d0) -> ()>
func.func @masked_and_unmasked(%t: tensor<16xi64>, %u: tensor<16xi64>, %x: tensor<16x5xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %ignore = arith.constant -100 : i64
  %zero = arith.constant dense<0> : tensor<i64>
  %seven = arith.constant dense<7> : tensor<i64>
  %be = tensor.empty() : tensor<16xi1>
  %ie = tensor.empty() : tensor<16xi64>
  %e = tensor.empty() : tensor<16xf32>
  %kept = linalg.generic {indexing_maps = [#v5, #v5], iterator_types = ["parallel"]}
      ins(%t : tensor<16xi64>) outs(%be : tensor<16xi1>) {
  ^bb0(%in: i64, %out: i1):
    %ne = arith.cmpi ne, %in, %ignore : i64
    linalg.yield %ne : i1
  } -> tensor<16xi1>
  %ids = linalg.generic {indexing_maps = [#v5, #v5, #s5, #v5], iterator_types = ["parallel"]}
      ins(%kept, %t, %zero : tensor<16xi1>, tensor<16xi64>, tensor<i64>) outs(%ie : tensor<16xi64>) {
  ^bb0(%k: i1, %id: i64, %z: i64, %out: i64):
    %sel = arith.select %k, %id, %z : i64
    linalg.yield %sel : i64
  } -> tensor<16xi64>
  %a = linalg.generic {indexing_maps = [#v5, #v5], iterator_types = ["parallel"]}
      ins(%ids : tensor<16xi64>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = linalg.index 0 : index
    %c = arith.index_cast %in : i64 to index
    %v = tensor.extract %x[%row, %c] : tensor<16x5xf32>
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#v5, #v5], iterator_types = ["parallel"]}
      ins(%t : tensor<16xi64>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = linalg.index 0 : index
    %c = arith.index_cast %in : i64 to index
    %v = tensor.extract %x[%row, %c] : tensor<16x5xf32>
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %ukept = linalg.generic {indexing_maps = [#v5, #v5], iterator_types = ["parallel"]}
      ins(%u : tensor<16xi64>) outs(%be : tensor<16xi1>) {
  ^bb0(%in: i64, %out: i1):
    %ne = arith.cmpi ne, %in, %ignore : i64
    linalg.yield %ne : i1
  } -> tensor<16xi1>
  %uids = linalg.generic {indexing_maps = [#v5, #v5, #s5, #v5], iterator_types = ["parallel"]}
      ins(%ukept, %u, %seven : tensor<16xi1>, tensor<16xi64>, tensor<i64>) outs(%ie : tensor<16xi64>) {
  ^bb0(%k: i1, %id: i64, %z: i64, %out: i64):
    %sel = arith.select %k, %id, %z : i64
    linalg.yield %sel : i64
  } -> tensor<16xi64>
  %c2 = linalg.generic {indexing_maps = [#v5, #v5], iterator_types = ["parallel"]}
      ins(%uids : tensor<16xi64>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = linalg.index 0 : index
    %c = arith.index_cast %in : i64 to index
    %v = tensor.extract %x[%row, %c] : tensor<16x5xf32>
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %a, %b, %c2 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
