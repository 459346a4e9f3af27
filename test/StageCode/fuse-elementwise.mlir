// RUN: pp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pp-fuse-elementwise))' | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// An elementwise op, a named one and a row sum over the same loops become
// one reduction with no 4x5 temporary.
// CHECK-LABEL: func.func @into_reduction
// CHECK-SAME: (%[[A:.*]]: tensor<4x5xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x5xf32>, tensor<4x5xf32>) outs(%[[Z]] : tensor<4xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @into_reduction(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %d = linalg.sub ins(%a, %b : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x5xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x5xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// A producer that is also returned (saved for the backward) is fused into
// its elementwise consumer, which yields it too: computed once, in one pass.
// CHECK-LABEL: func.func @saved_producer
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<4x5xf32>)
// CHECK: %[[X:.*]] = math.exp
// CHECK: %[[Y:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK: linalg.yield %[[X]], %[[Y]]
// CHECK-NOT: math.exp
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @saved_producer(%a: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %e = tensor.empty() : tensor<4x5xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  return %y, %x : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A shared producer whose other user, a row sum, comes before its
// elementwise consumer (layer norm's `x - mean`, summed squared for the
// variance before the normalization reads it) is not fused: the fused op
// would take the consumer's place, after the sum that reads its result.
// CHECK-LABEL: func.func @shared_before_consumer
// CHECK: %[[X:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<4x5xf32>)
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[S]] : tensor<4x5xf32>, tensor<4xf32>)
// CHECK-NOT: math.exp
// CHECK: return %[[Y]], %[[X]]
func.func @shared_before_consumer(%a: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %e = tensor.empty() : tensor<4x5xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x5xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %r = arith.divf %v, %t : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  return %y, %x : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

#x = affine_map<(k, i, j) -> (k, i)>
#w = affine_map<(k, i, j) -> (k, j)>
#dw = affine_map<(k, i, j) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#s = affine_map<(i, j) -> ()>

// The case plain linalg-fuse-elementwise-ops got wrong: a derivative that
// accumulates into its init (`%out + %g`) read by a contraction that
// broadcasts it over i. Fused, the init became an output of the contraction
// written once per i, each time adding %g again. It is not fused; its init,
// a fill of zeros, is read as the constant and the op writes a fresh tensor.
// CHECK-LABEL: func.func @into_contraction
// CHECK-SAME: %[[G:[^:]*]]: tensor<f32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<4x5xf32>
// CHECK: %[[DY:.*]] = linalg.generic
// CHECK-SAME: ins(%[[G]] : tensor<f32>) outs(%[[E]] : tensor<4x5xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.addf %[[IN]], %[[ZERO]]
// CHECK: %[[DW:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-SAME: ins(%{{.*}}, %[[DY]] : tensor<4x3xf32>, tensor<4x5xf32>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK: return %[[DW]]
func.func @into_contraction(%x: tensor<4x3xf32>, %g: tensor<f32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %dy = linalg.generic {indexing_maps = [#s, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<f32>) outs(%z : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  %ew = tensor.empty() : tensor<3x5xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<3x5xf32>) -> tensor<3x5xf32>
  %dw = linalg.generic {indexing_maps = [#x, #w, #dw], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x, %dy : tensor<4x3xf32>, tensor<4x5xf32>) outs(%zw : tensor<3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  return %dw : tensor<3x5xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// The same accumulation into an init that is not a fill (a gradient
// received), read through a broadcast: neither fused nor rewritten.
// CHECK-LABEL: func.func @accumulate_into_broadcast
// CHECK-SAME: (%[[ACC:[^:]*]]: tensor<4xf32>, %[[V:[^:]*]]: tensor<4xf32>
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-SAME: ins(%[[V]] : tensor<4xf32>) outs(%[[ACC]] : tensor<4xf32>)
// CHECK: %[[B:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %[[S]] : tensor<4x5xf32>, tensor<4xf32>)
// CHECK: return %[[B]]
func.func @accumulate_into_broadcast(%acc: tensor<4xf32>, %v: tensor<4xf32>, %m: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%v : tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %s : tensor<4x5xf32>, tensor<4xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.mulf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  return %b : tensor<4x5xf32>
}

// -----

#id = affine_map<(i) -> (i)>

// An accumulation into a non-fill init read through a permutation is fused,
// and its init is an output of the fused op (written once per element).
// CHECK-LABEL: func.func @accumulate_elementwise
// CHECK-SAME: (%[[ACC:[^:]*]]: tensor<4xf32>
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK-SAME: outs(%[[ACC]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#1
func.func @accumulate_elementwise(%acc: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v : tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.tanh %x : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

#mask = affine_map<(b, i, j) -> (i, j)>
#s = affine_map<(b, i, j) -> ()>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#id2 = affine_map<(i, j) -> (i, j)>

// A causal mask's comparison is recomputed in the masked fill that
// broadcasts it over the batch: the fill reads the f32 mask, and no i1
// tensor is left.
// CHECK-LABEL: func.func @broadcast_mask
// CHECK-SAME: (%[[C:.*]]: tensor<4x4xf32>, %[[X:.*]]: tensor<2x4x4xf32>, %[[V:.*]]: tensor<f32>)
// CHECK-NOT: tensor<4x4xi1>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[C]], %[[V]], %[[X]] : tensor<4x4xf32>, tensor<f32>, tensor<2x4x4xf32>)
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @broadcast_mask(%c: tensor<4x4xf32>, %x: tensor<2x4x4xf32>, %v: tensor<f32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x4xi1>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x4xf32>) outs(%e2 : tensor<4x4xi1>) {
  ^bb0(%a: f32, %o: i1):
    %eq = arith.cmpf oeq, %a, %zero : f32
    linalg.yield %eq : i1
  } -> tensor<4x4xi1>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#mask, #s, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m, %v, %x : tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) outs(%e3 : tensor<2x4x4xf32>) {
  ^bb0(%b: i1, %f: f32, %y: f32, %o: f32):
    %sel = arith.select %b, %f, %y : f32
    linalg.yield %sel : f32
  } -> tensor<2x4x4xf32>
  return %r : tensor<2x4x4xf32>
}

// -----

#mask = affine_map<(b, i, j) -> (i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#id2 = affine_map<(i, j) -> (i, j)>

// Broadcast producers that are not a lone comparison (here a comparison
// and a negation) stay apart: each element would be computed per batch row.
// CHECK-LABEL: func.func @broadcast_not_mask
// CHECK: %[[M:.*]] = linalg.generic
// CHECK: arith.cmpf
// CHECK: arith.xori
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[M]], %{{.*}} : tensor<4x4xi1>, tensor<2x4x4xf32>)
func.func @broadcast_not_mask(%c: tensor<4x4xf32>, %x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %e2 = tensor.empty() : tensor<4x4xi1>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x4xf32>) outs(%e2 : tensor<4x4xi1>) {
  ^bb0(%a: f32, %o: i1):
    %eq = arith.cmpf oeq, %a, %zero : f32
    %ne = arith.xori %eq, %true : i1
    linalg.yield %ne : i1
  } -> tensor<4x4xi1>
  %e3 = tensor.empty() : tensor<2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#mask, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m, %x : tensor<4x4xi1>, tensor<2x4x4xf32>) outs(%e3 : tensor<2x4x4xf32>) {
  ^bb0(%b: i1, %y: f32, %o: f32):
    %sel = arith.select %b, %y, %zero : f32
    linalg.yield %sel : f32
  } -> tensor<2x4x4xf32>
  return %r : tensor<2x4x4xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>

// A derivative of one term, its gradient added to zeros, is the gradient
// itself (here one computed, then reshaped): no pass over memory. A
// function's argument stays summed: returned as it is, it would be the
// caller's own buffer.
// CHECK-LABEL: func.func @zero_accumulation
// CHECK-SAME: (%[[X:.*]]: tensor<2x2x5xf32>, %[[A:.*]]: tensor<2x2x5xf32>)
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[G]]
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[A]]
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-SAME: ins(%[[CA]] : tensor<4x5xf32>)
// CHECK: arith.addf
// CHECK: return %[[C]], %[[S]]
func.func @zero_accumulation(%x: tensor<2x2x5xf32>, %a: tensor<2x2x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<2x2x5xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x2x5xf32>) outs(%e3 : tensor<2x2x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<2x2x5xf32>
  %c = tensor.collapse_shape %g [[0, 1], [2]] : tensor<2x2x5xf32> into tensor<4x5xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x5xf32>) outs(%z : tensor<4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %ca = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x2x5xf32> into tensor<4x5xf32>
  %da = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ca : tensor<4x5xf32>) outs(%z : tensor<4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %d, %da : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>

// Added to ones, or read transposed, a computed term stays summed.
// CHECK-LABEL: func.func @nonzero_accumulation
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.addf
func.func @nonzero_accumulation(%x: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<2x2x5xf32>
  %ex = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 2, 5] : tensor<4x5xf32> into tensor<2x2x5xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex : tensor<2x2x5xf32>) outs(%e3 : tensor<2x2x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<2x2x5xf32>
  %a = tensor.collapse_shape %g [[0, 1], [2]] : tensor<2x2x5xf32> into tensor<4x5xf32>
  %b = tensor.collapse_shape %g [[0], [1, 2]] : tensor<2x2x5xf32> into tensor<2x10xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x5xf32>) outs(%ones : tensor<4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %e10 = tensor.empty() : tensor<10x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e10 : tensor<10x2xf32>) -> tensor<10x2xf32>
  %t = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<2x10xf32>) outs(%z : tensor<10x2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<10x2xf32>
  %tc = tensor.collapse_shape %t [[0, 1]] : tensor<10x2xf32> into tensor<20xf32>
  %te = tensor.expand_shape %tc [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  return %d, %te : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// A consumer that reads two results of one shared producer (the gradient
// of a symmetric loss: a row path and a transposed column path from one
// gradient) is not fused with it: upstream fusion merged the transposed
// read of `%g` with its plain one. The transposed sum reads the fused
// op's result transposed, the other result as is.
// CHECK-LABEL: func.func @two_results_of_shared_producer(
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4x4xf32>, %[[E1:[a-z0-9]+]]: tensor<4x4xf32>, %[[E2:[a-z0-9]+]]: tensor<4x4xf32>)
// CHECK: %[[P:.+]]:2 = linalg.generic {{.*}} ins(%[[G]], %[[E2]] :
// CHECK: linalg.generic {indexing_maps = [#[[TR:map[0-9]*]], #[[ID:map[0-9]*]], #[[ID]], #[[ID]]]{{.*}} ins(%[[P]]#1, %[[P]]#0, %[[E1]] :
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @two_results_of_shared_producer(%g: tensor<4x4xf32>, %e1: tensor<4x4xf32>, %e2: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %a = linalg.add ins(%c, %e2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#id, #tr], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %a2 = linalg.add ins(%c, %e1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = linalg.add ins(%t, %a2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %sum : tensor<4x4xf32>
}
