// RUN: pp-opt %s --pp-split-sequence=slices=2 | FileCheck %s
// RUN: pp-opt %s --pp-split-sequence=slices=3 | FileCheck %s --check-prefix=THREE
// RUN: pp-opt %s --pp-split-sequence=slices=1 | FileCheck %s --check-prefix=ONE

// One head of causal attention over 4 positions, learned positions, and a
// summed loss: x[b, t, d], positions wpe[t, d], scores s[b, t, u].
#btd = affine_map<(b, t, d) -> (b, t, d)>
#td = affine_map<(b, t, d) -> (t, d)>
#s_q = affine_map<(b, t, u, d) -> (b, t, d)>
#s_k = affine_map<(b, t, u, d) -> (b, u, d)>
#s_o = affine_map<(b, t, u, d) -> (b, t, u)>
#btu = affine_map<(b, t, u) -> (b, t, u)>
#bt = affine_map<(b, t, u) -> (b, t)>
#o_p = affine_map<(b, t, d, u) -> (b, t, u)>
#o_v = affine_map<(b, t, d, u) -> (b, u, d)>
#o_o = affine_map<(b, t, d, u) -> (b, t, d)>
#all = affine_map<(b, t, d) -> ()>
func.func @train_step(%x: tensor<2x4x3xf32>, %wpe: tensor<4x3xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %he = tensor.empty() : tensor<2x4x3xf32>
  %h = linalg.generic {indexing_maps = [#btd, #td, #btd], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %wpe : tensor<2x4x3xf32>, tensor<4x3xf32>) outs(%he : tensor<2x4x3xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %r = arith.addf %a, %p : f32
      linalg.yield %r : f32
  } -> tensor<2x4x3xf32>
  %se = tensor.empty() : tensor<2x4x4xf32>
  %si = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%h, %h : tensor<2x4x3xf32>, tensor<2x4x3xf32>) outs(%si : tensor<2x4x4xf32>) {
    ^bb0(%q: f32, %k: f32, %o: f32):
      %m = arith.mulf %q, %k : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %me = tensor.empty() : tensor<2x4xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%me : tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = linalg.generic {indexing_maps = [#btu, #bt], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x4x4xf32>) outs(%mi : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = linalg.index 1 : index
      %u = linalg.index 2 : index
      %vis = arith.cmpi ule, %u, %t : index
      %sel = arith.select %vis, %a, %ninf : f32
      %r = arith.maximumf %o, %sel : f32
      linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %pe = tensor.empty() : tensor<2x4x4xf32>
  %p = linalg.generic {indexing_maps = [#btu, #bt, #btu], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%pe : tensor<2x4x4xf32>) {
    ^bb0(%a: f32, %mx: f32, %o: f32):
      %d = arith.subf %a, %mx : f32
      %e = math.exp %d : f32
      %t = linalg.index 1 : index
      %u = linalg.index 2 : index
      %vis = arith.cmpi ule, %u, %t : index
      %sel = arith.select %vis, %e, %zero : f32
      linalg.yield %sel : f32
  } -> tensor<2x4x4xf32>
  %oe = tensor.empty() : tensor<2x4x3xf32>
  %oi = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %o = linalg.generic {indexing_maps = [#o_p, #o_v, #o_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %h : tensor<2x4x4xf32>, tensor<2x4x3xf32>) outs(%oi : tensor<2x4x3xf32>) {
    ^bb0(%a: f32, %v: f32, %acc: f32):
      %w = arith.mulf %a, %v : f32
      %r = arith.addf %acc, %w : f32
      linalg.yield %r : f32
  } -> tensor<2x4x3xf32>
  %le = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#btd, #all], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%o : tensor<2x4x3xf32>) outs(%li : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}

// The data, cut at position 2.
// CHECK-LABEL: func.func @train_step
// CHECK-DAG: %[[X0:.*]] = tensor.extract_slice %arg0[0, 0, 0] [2, 2, 3] [1, 1, 1] {pp.slice = 0 : i64} : tensor<2x4x3xf32> to tensor<2x2x3xf32>
// CHECK-DAG: %[[X1:.*]] = tensor.extract_slice %arg0[0, 2, 0] [2, 2, 3] [1, 1, 1] {pp.slice = 1 : i64} : tensor<2x4x3xf32> to tensor<2x2x3xf32>
// Slice 0: its positions, attention over its own keys (no concat).
// CHECK: %[[P0:.*]] = tensor.extract_slice %arg1[0, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
// CHECK: %[[H0:.*]] = linalg.generic {{.*}} ins(%[[X0]], %[[P0]] : tensor<2x2x3xf32>, tensor<2x3xf32>) outs(%{{.*}} : tensor<2x2x3xf32>)
// Slice 1: positions 2..3.
// CHECK: %[[P1:.*]] = tensor.extract_slice %arg1[2, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
// CHECK: %[[H1:.*]] = linalg.generic {{.*}} ins(%[[X1]], %[[P1]] : tensor<2x2x3xf32>, tensor<2x3xf32>) outs(%{{.*}} : tensor<2x2x3xf32>)
// Scores: slice 0's queries over keys 0..1, slice 1's over the cached keys
// of slice 0 and its own.
// CHECK: %[[S0:.*]] = linalg.generic {{.*}} ins(%[[H0]], %[[H0]] : {{.*}}) outs(%{{.*}} : tensor<2x2x2xf32>)
// CHECK: %[[K01:.*]] = tensor.concat dim(1) %[[H0]], %[[H1]] : (tensor<2x2x3xf32>, tensor<2x2x3xf32>) -> tensor<2x4x3xf32>
// CHECK: %[[S1:.*]] = linalg.generic {{.*}} ins(%[[H1]], %[[K01]] : tensor<2x2x3xf32>, tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x2x4xf32>)
// The mask: slice 1's query positions start at 2, keys at 0.
// CHECK: linalg.generic {{.*}} ins(%[[S0]] : tensor<2x2x2xf32>)
// CHECK: %[[T0:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[U0:.*]] = linalg.index 2 : index
// CHECK-NEXT: arith.cmpi ule, %[[U0]], %[[T0]] : index
// CHECK: linalg.generic {{.*}} ins(%[[S1]] : tensor<2x2x4xf32>)
// CHECK: %[[T1:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[T1S:.*]] = arith.addi %[[T1]], %[[C2]] : index
// CHECK-NEXT: %[[U1:.*]] = linalg.index 2 : index
// CHECK-NEXT: arith.cmpi ule, %[[U1]], %[[T1S]] : index
// Values: slice 1 reads the values of both slices.
// CHECK: %[[E1:.*]] = linalg.generic {{.*}} ins(%[[S1]], %{{.*}} : tensor<2x2x4xf32>, tensor<2x2xf32>)
// CHECK: %[[O0:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[H0]] : tensor<2x2x2xf32>, tensor<2x2x3xf32>)
// CHECK: %[[O1:.*]] = linalg.generic {{.*}} ins(%[[E1]], %[[K01]] : tensor<2x2x4xf32>, tensor<2x4x3xf32>)
// The loss: one part per slice, added.
// CHECK: %[[L0:.*]] = linalg.generic {{.*}} ins(%[[O0]] : tensor<2x2x3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[L1:.*]] = linalg.generic {{.*}} ins(%[[O1]] : tensor<2x2x3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[L:.*]] = linalg.generic {{.*}} ins(%[[L0]], %[[L1]] : tensor<f32>, tensor<f32>)
// CHECK: arith.addf
// CHECK: return %[[L]] : tensor<f32>

// Three slices of 4 positions: 1, 1 and 2 long; slice 2 attends to all 4.
// THREE-DAG: tensor.extract_slice %arg0[0, 0, 0] [2, 1, 3]
// THREE-DAG: tensor.extract_slice %arg0[0, 1, 0] [2, 1, 3]
// THREE-DAG: tensor.extract_slice %arg0[0, 2, 0] [2, 2, 3]
// THREE: tensor.concat dim(1) {{.*}} -> tensor<2x2x3xf32>
// THREE: tensor.concat dim(1) {{.*}} -> tensor<2x4x3xf32>
// THREE-NOT: tensor.concat

// ONE-NOT: tensor.extract_slice
// ONE-NOT: tensor.concat
