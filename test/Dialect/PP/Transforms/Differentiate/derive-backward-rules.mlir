// RUN: pp-opt %s -split-input-file --pp-derive-backward | FileCheck %s

// A max reduction: the backward counts the iterations that attain the max
// (ties share the gradient), divides the result gradient by that count and
// routes it to those iterations.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x3xf32> {pp.slot = #pp.slot<data 0>}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3xf32> {pp.slot = #pp.slot<param 1>}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {pp.slot = #pp.slot<loss_grad>}
// CHECK: %[[COUNT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[W]], %[[M]] : tensor<4x3xf32>, tensor<3xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[MAX:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[ATTAINS:.*]] = arith.cmpf oeq, %[[V]], %[[MAX]] : f32
// CHECK: %[[ONE:.*]] = arith.select %[[ATTAINS]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[ONE]] : f32
// CHECK: %[[SHARE:.*]] = linalg.div ins(%[[G]], %[[COUNT]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[GRAD:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[X]], %[[W]], %[[M]], %[[SHARE]] : tensor<4x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[MAX:.*]]: f32, %[[S:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[V:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[DV:.*]] = arith.mulf %[[A]], %{{.*}} : f32
// CHECK-NEXT: %[[ATTAINS:.*]] = arith.cmpf oeq, %[[V]], %[[MAX]] : f32
// CHECK: %[[ROUTED:.*]] = arith.select %[[ATTAINS]], %[[S]], %{{.*}} : f32
// CHECK-NEXT: %[[TERM:.*]] = arith.mulf %[[ROUTED]], %[[DV]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[TERM]] : f32
// CHECK: return %[[GRAD]]
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<3xf32>):
    %lowest = arith.constant -3.40282347E+38 : f32
    %e = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%a, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%init : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %acc: f32):
        %v = arith.mulf %p, %q : f32
        %mx = arith.maximumf %v, %acc : f32
        linalg.yield %mx : f32
    } -> tensor<4xf32>
    pp.yield %m : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Data movement goes back the way it came: the gradient of an
// expand_shape is a collapse_shape, of an extract_slice an insert_slice into
// zeros, of a concat one slice per input.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, 0] [4, 2] [1, 1] : tensor<4x6xf32> to tensor<4x2xf32>
// CHECK-DAG: tensor.extract_slice %{{.*}}[0, 2] [4, 4] [1, 1] : tensor<4x6xf32> to tensor<4x4xf32>
// CHECK-DAG: tensor.insert_slice %{{.*}} into %{{.*}}[0, 1] [4, 2] [1, 2] : tensor<4x2xf32> into tensor<4x4xf32>
// CHECK-DAG: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<4x2x2xf32> into tensor<4x4xf32>
// CHECK: return
func.func @train_step(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {pp.param}) -> tensor<4x6xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x6xf32> {
  ^bb0(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>):
    %e = tensor.empty() : tensor<4x4xf32>
    %p = linalg.mul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %x3 = tensor.expand_shape %p [[0], [1, 2]] output_shape [4, 2, 2] : tensor<4x4xf32> into tensor<4x2x2xf32>
    %odd = tensor.extract_slice %p[0, 1] [4, 2] [1, 2] : tensor<4x4xf32> to tensor<4x2xf32>
    %c = tensor.collapse_shape %x3 [[0], [1, 2]] : tensor<4x2x2xf32> into tensor<4x4xf32>
    %cat = tensor.concat dim(1) %odd, %c : (tensor<4x2xf32>, tensor<4x4xf32>) -> tensor<4x6xf32>
    pp.yield %cat : tensor<4x6xf32>
  }
  return %r : tensor<4x6xf32>
}

// -----

// A mask computed in the forward is not a runtime buffer: the backward
// recomputes it from the saved scores instead of receiving it.
// CHECK-LABEL: func.func @train_step_s0_forward(
// CHECK-SAME: -> (tensor<4xf32> {pp.slot = #pp.slot<loss>}, tensor<4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>})
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-NOT: i1
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK: return
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %zero = arith.constant dense<0.0> : tensor<4xf32>
    %s = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %pos = arith.cmpf ogt, %s, %zero : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
        ins(%pos, %s : tensor<4xi1>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%c: i1, %v: f32, %o: f32):
        %sq = arith.mulf %v, %v : f32
        %r1 = arith.select %c, %sq, %v : f32
        linalg.yield %r1 : f32
    } -> tensor<4xf32>
    pp.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// linalg.softmax is decomposed (max, exp, sum, divide) before it is
// differentiated; the forward computes the decomposition. The max it
// subtracts gets no gradient (derive-backward-softmax.mlir).
// CHECK-LABEL: func.func @train_step_s0_forward(
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-NOT: arith.cmpf oeq
// CHECK: return
func.func @train_step(%x: tensor<2x3xf32>, %w: tensor<2x3xf32> {pp.param}) -> tensor<2x3xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %e = tensor.empty() : tensor<2x3xf32>
    %s = linalg.mul ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %p = linalg.softmax dimension(1) ins(%s : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    pp.yield %p : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

// exp of values computed in the stage: its derivative reads the exp the
// forward computed (saved instead of the two values it was computed from)
// and recomputes no exp.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {pp.slot = #pp.slot<loss_grad>}
// CHECK-SAME: %[[E:[a-z0-9]+]]: tensor<4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}
// CHECK-NOT: saved stage 0 value 1
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[G]], %[[E]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[GV:.*]]: f32, %[[EV:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[ONE]], %[[EV]] : f32
// CHECK-NEXT: %[[TERM:.*]] = arith.mulf %[[GV]], %[[D]] : f32
#id = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %t = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %u = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%t, %u : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %d = arith.subf %p, %q : f32
        %v = math.exp %d : f32
        linalg.yield %v : f32
    } -> tensor<4xf32>
    pp.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An integer power (PyTorch's `(y - t)**3` is math.fpowi): d(x^n) is
// n x^(n-1) dx, with n - 1 and n taken from the integer exponent.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: %[[N:.*]] = arith.constant 3 : i64
// CHECK: ^bb0(%[[X:.*]]: f32, %[[W:.*]]: f32, %[[G:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[D:.*]] = arith.subf %[[W]], %[[X]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[NM1:.*]] = arith.subi %[[N]], %[[ONE]] : i64
// CHECK-NEXT: %[[POW:.*]] = math.fpowi %[[D]], %[[NM1]] : f32, i64
// CHECK-NEXT: %[[NF:.*]] = arith.sitofp %[[N]] : i64 to f32
// CHECK-NEXT: %[[DPOW:.*]] = arith.mulf %[[NF]], %[[POW]] : f32
// CHECK-NEXT: %[[DW:.*]] = arith.mulf %{{.*}}, %[[DPOW]] : f32
// CHECK-NEXT: %[[TERM:.*]] = arith.mulf %[[G]], %[[DW]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[TERM]] : f32
#id = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %n = arith.constant 3 : i64
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %d = arith.subf %q, %p : f32
        %v = math.fpowi %d, %n : f32, i64
        linalg.yield %v : f32
    } -> tensor<4xf32>
    pp.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Float conversions inside a body: the tangent is widened and rounded
// with the value.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: ^bb0(%[[X:.*]]: f32, %[[W:.*]]: f32, %[[G:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[WIDE:.*]] = arith.extf %[[W]] : f32 to f64
// CHECK-NEXT: %[[DWIDE:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: %[[DSQ:.*]] = arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: %[[DT:.*]] = arith.truncf %[[DSQ]] : f64 to f32
// CHECK: %[[DM:.*]] = arith.mulf %[[X]], %[[DT]] : f32
// CHECK-NEXT: %[[TERM:.*]] = arith.mulf %[[G]], %[[DM]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[TERM]] : f32
#id = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %wide = arith.extf %q : f32 to f64
        %sq = arith.mulf %wide, %wide : f64
        %t = arith.truncf %sq : f64 to f32
        %m = arith.mulf %p, %t : f32
        linalg.yield %m : f32
    } -> tensor<4xf32>
    pp.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A max that also returns the index where it is attained (PyTorch's
// `max(dim)`), both used: the index is an integer and carries no gradient;
// the max's gradient goes to the iterations that attain it, as for a max
// alone, scaled by the (saved) index the forward computed. The weight's
// gradient reads the input, not the weight.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-NOT: #pp.slot<param 1>
// CHECK-SAME: {pp.slot = #pp.slot<data 0>}) -> (tensor<4x3xf32> {pp.slot = #pp.slot<param_grad 1>})
// CHECK: arith.cmpf oeq
// CHECK: linalg.div
// CHECK: arith.cmpf oeq
// CHECK: return
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<4x3xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>):
    %lowest = arith.constant -3.40282347E+38 : f32
    %zero = arith.constant 0 : i64
    %e = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %ei = tensor.empty() : tensor<4xi64>
    %initi = linalg.fill ins(%zero : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
    %p = linalg.mul ins(%a, %b : tensor<4x3xf32>, tensor<4x3xf32>) outs(%a : tensor<4x3xf32>) -> tensor<4x3xf32>
    %m:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
        ins(%p : tensor<4x3xf32>) outs(%init, %initi : tensor<4xf32>, tensor<4xi64>) {
      ^bb0(%in: f32, %out: f32, %out_i: i64):
        %j = linalg.index 1 : index
        %ji = arith.index_cast %j : index to i64
        %v = arith.maximumf %in, %out : f32
        %gt = arith.cmpf ogt, %in, %out : f32
        %i = arith.select %gt, %ji, %out_i : i64
        linalg.yield %v, %i : f32, i64
    } -> (tensor<4xf32>, tensor<4xi64>)
    %ef = tensor.empty() : tensor<4xf32>
    %fi = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%m#1 : tensor<4xi64>) outs(%ef : tensor<4xf32>) {
      ^bb0(%k: i64, %o: f32):
        %f = arith.sitofp %k : i64 to f32
        linalg.yield %f : f32
    } -> tensor<4xf32>
    %s = linalg.mul ins(%m#0, %fi : tensor<4xf32>, tensor<4xf32>) outs(%ef : tensor<4xf32>) -> tensor<4xf32>
    pp.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
