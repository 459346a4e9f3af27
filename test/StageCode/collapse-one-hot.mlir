// RUN: pp-opt %s -split-input-file --pp-collapse-one-hot | FileCheck %s

// An embedding as pp-lower-gathers writes it: the sum over the vocabulary
// loop becomes a read of the table row the id names, clamped into the
// table, where the equality still zeroes an id outside it.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME: %[[IDS_ARG:.*]]: tensor<4x6xi64>, %[[W:.*]]: tensor<10x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IDS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[IDS_ARG]] : tensor<4x6xi64>)
// CHECK-NEXT: ^bb0(%[[ID:.*]]: i64, %[[ACC:.*]]: f32):
// CHECK: %[[D:.*]] = linalg.index 2 : index
// CHECK: %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C9:.*]] = arith.constant 9 : index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[I]], %[[C0]] : index
// CHECK: %[[ROW:.*]] = arith.minsi %[[LOW]], %[[C9]] : index
// CHECK: %[[ELEM:.*]] = tensor.extract %[[W]][%[[ROW]], %[[D]]] : tensor<10x8xf32>
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[I]], %[[ROW]] : index
// CHECK: %[[PICK:.*]] = arith.select %[[HIT]], %[[ELEM]], %{{.*}} : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[PICK]] : f32
// CHECK: linalg.yield %[[SUM]] : f32
#ids = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#table = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @embedding(%ids: tensor<4x6xi64>, %w: tensor<10x8xf32>, %zero: tensor<4x6x8xf32>) -> tensor<4x6x8xf32> {
  %c0 = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#ids, #table, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ids, %w : tensor<4x6xi64>, tensor<10x8xf32>) outs(%zero : tensor<4x6x8xf32>) {
  ^bb0(%id: i64, %e: f32, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = linalg.index 3 : index
    %hit = arith.cmpi eq, %i, %v : index
    %pick = arith.select %hit, %e, %c0 : f32
    %sum = arith.addf %acc, %pick : f32
    linalg.yield %sum : f32
  } -> tensor<4x6x8xf32>
  return %r : tensor<4x6x8xf32>
}

// -----

// Its gradient as pp-derive-backward writes it: the table's gradient,
// indexed by the vocabulary loop, becomes a loop nest over the ids and the
// width that adds the output's gradient into the id's row.
// CHECK-LABEL: func.func @embedding_grad(
// CHECK-SAME: %[[IDS_ARG:.*]]: tensor<4x6xi64>, %[[W:.*]]: tensor<10x8xf32>, %[[G:.*]]: tensor<4x6x8xf32>, %[[INIT:.*]]: tensor<10x8xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A0:.*]] = %[[INIT]]) -> (tensor<10x8xf32>) {
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A1:.*]] = %[[A0]])
// CHECK: scf.for %[[D:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A2:.*]] = %[[A1]])
// CHECK: %[[ID:.*]] = tensor.extract %[[IDS_ARG]][%[[B]], %[[T]]] : tensor<4x6xi64>
// CHECK: %[[GV:.*]] = tensor.extract %[[G]][%[[B]], %[[T]], %[[D]]] : tensor<4x6x8xf32>
// CHECK: %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[I]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[I]], %[[ROW]] : index
// CHECK: %[[ONE:.*]] = arith.select %[[HIT]]
// CHECK: %[[TERM:.*]] = arith.mulf %[[GV]], %[[ONE]] : f32
// CHECK: %[[OLD:.*]] = tensor.extract %[[A2]][%[[ROW]], %[[D]]] : tensor<10x8xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TERM]] : f32
// CHECK: %[[INS:.*]] = tensor.insert %[[NEW]] into %[[A2]][%[[ROW]], %[[D]]] : tensor<10x8xf32>
// CHECK: scf.yield %[[INS]] : tensor<10x8xf32>
// CHECK: return %[[R]]
#ids2 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#table2 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#out2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @embedding_grad(%ids: tensor<4x6xi64>, %w: tensor<10x8xf32>, %g: tensor<4x6x8xf32>, %init: tensor<10x8xf32>) -> tensor<10x8xf32> {
  %c1 = arith.constant 1.0 : f32
  %c0 = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#ids2, #table2, #out2, #table2], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%ids, %w, %g : tensor<4x6xi64>, tensor<10x8xf32>, tensor<4x6x8xf32>) outs(%init : tensor<10x8xf32>) {
  ^bb0(%id: i64, %e: f32, %gv: f32, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = linalg.index 3 : index
    %hit = arith.cmpi eq, %i, %v : index
    %one = arith.select %hit, %c1, %c0 : f32
    %term = arith.mulf %gv, %one : f32
    %sum = arith.addf %acc, %term : f32
    linalg.yield %sum : f32
  } -> tensor<10x8xf32>
  return %r : tensor<10x8xf32>
}

// -----

// The target pick of a cross-entropy reads the logits at the target's
// class; a term not zeroed by the equality is left a sum.
// CHECK-LABEL: func.func @pick(
// CHECK-SAME: %[[TGT:.*]]: tensor<24x1xi64>, %[[LOGITS:.*]]: tensor<24x10xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[TGT]] : tensor<24x1xi64>)
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: tensor.extract %[[LOGITS]][%[[ROW]], %{{.*}}] : tensor<24x10xf32>
// CHECK-LABEL: func.func @not_one_hot(
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: tensor.extract
#t = affine_map<(d0, d1, d2) -> (d0, d1)>
#x = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @pick(%t: tensor<24x1xi64>, %x: tensor<24x10xf32>, %zero: tensor<24x1xf32>) -> tensor<24x1xf32> {
  %c0 = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#t, #x, #t], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t, %x : tensor<24x1xi64>, tensor<24x10xf32>) outs(%zero : tensor<24x1xf32>) {
  ^bb0(%id: i64, %e: f32, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = linalg.index 2 : index
    %hit = arith.cmpi eq, %i, %v : index
    %pick = arith.select %hit, %e, %c0 : f32
    %sum = arith.addf %acc, %pick : f32
    linalg.yield %sum : f32
  } -> tensor<24x1xf32>
  return %r : tensor<24x1xf32>
}
func.func @not_one_hot(%t: tensor<24x1xi64>, %x: tensor<24x10xf32>, %zero: tensor<24x1xf32>) -> tensor<24x1xf32> {
  %c0 = arith.constant 1.0 : f32
  %r = linalg.generic {indexing_maps = [#t, #x, #t], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t, %x : tensor<24x1xi64>, tensor<24x10xf32>) outs(%zero : tensor<24x1xf32>) {
  ^bb0(%id: i64, %e: f32, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = linalg.index 2 : index
    %hit = arith.cmpi eq, %i, %v : index
    %pick = arith.select %hit, %e, %c0 : f32
    %sum = arith.addf %acc, %pick : f32
    linalg.yield %sum : f32
  } -> tensor<24x1xf32>
  return %r : tensor<24x1xf32>
}

// -----

// A pick at two computed indices (torch-mlir's group norm reads its
// statistics so): collapsing one loop would leave the other read by no
// kept operand, so the sum stays, and the walk folds nothing on the way.
// CHECK-LABEL: func.func @pick_2d(
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-NOT: tensor.extract
#ids = affine_map<(d0, d1, d2) -> (d0)>
#tab = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @pick_2d(%a: tensor<6xi64>, %b: tensor<6xi64>, %x: tensor<4x5xf32>, %zero: tensor<6xf32>) -> tensor<6xf32> {
  %c0 = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#ids, #ids, #tab, #ids], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%a, %b, %x : tensor<6xi64>, tensor<6xi64>, tensor<4x5xf32>) outs(%zero : tensor<6xf32>) {
  ^bb0(%ia: i64, %ib: i64, %e: f32, %acc: f32):
    %i = arith.index_cast %ia : i64 to index
    %j = arith.index_cast %ib : i64 to index
    %v = linalg.index 1 : index
    %w = linalg.index 2 : index
    %hv = arith.cmpi eq, %i, %v : index
    %hw = arith.cmpi eq, %j, %w : index
    %hit = arith.andi %hv, %hw : i1
    %pick = arith.select %hit, %e, %c0 : f32
    %sum = arith.addf %acc, %pick : f32
    linalg.yield %sum : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}
