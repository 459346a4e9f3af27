// RUN: pp-opt %s -split-input-file --pp-derive-backward | FileCheck %s

// The max a stable softmax subtracts gets no gradient: softmax is
// shift-invariant, so the gradient of the max through `x - max` is zero
// exactly (in real arithmetic). The backward neither counts the ties of
// each row's max nor saves the scores or the max: it saves the exps and
// their row sums only.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: %[[R:[a-z0-9]+]]: tensor<2xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<2x3xf32> {pp.slot = #pp.slot<loss_grad>}
// CHECK-SAME: %[[E:[a-z0-9]+]]: tensor<2x3xf32> {pp.slot = #pp.slot<saved stage 0 value 1>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<2x3xf32> {pp.slot = #pp.slot<data 0>})
// CHECK-NOT: arith.cmpf oeq
// CHECK-NOT: arith.maximumf
// CHECK: return
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
func.func @train_step(%x: tensor<2x3xf32>, %w: tensor<2x3xf32> {pp.param}) -> tensor<2x3xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<2x3xf32>
    %er = tensor.empty() : tensor<2xf32>
    %s = linalg.mul ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %lowr = linalg.fill ins(%low : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %m = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%s : tensor<2x3xf32>) outs(%lowr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %shifted = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%s, %m : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %exps = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%exps : tensor<2x3xf32>) outs(%zr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %p = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%exps, %sum : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.divf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %p : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

// The row sums also leave the stage (not shift-invariant): the max keeps
// its gradient, routed to the iterations that attain it.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: arith.cmpf oeq
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
func.func @train_step(%x: tensor<2x3xf32>, %w: tensor<2x3xf32> {pp.param}) -> tensor<2x3xf32> {
  %r:2 = pp.stage 0 (%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>) {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<2x3xf32>
    %er = tensor.empty() : tensor<2xf32>
    %s = linalg.mul ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %lowr = linalg.fill ins(%low : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %m = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%s : tensor<2x3xf32>) outs(%lowr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %shifted = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%s, %m : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %exps = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%exps : tensor<2x3xf32>) outs(%zr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %p = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%exps, %sum : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.divf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %p, %sum : tensor<2x3xf32>, tensor<2xf32>
  }
  %l = pp.stage 1 (%r#0, %r#1) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32> {
  ^bb0(%p1: tensor<2x3xf32>, %q1: tensor<2xf32>):
    %e1 = tensor.empty() : tensor<2x3xf32>
    %v1 = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%p1, %q1 : tensor<2x3xf32>, tensor<2xf32>) outs(%e1 : tensor<2x3xf32>) {
      ^bb0(%in: f32, %other: f32, %out: f32):
        %v = arith.mulf %in, %other : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %v1 : tensor<2x3xf32>
  }
  return %l : tensor<2x3xf32>
}

// -----

// A sum from one, not zero, is no softmax: the max keeps its gradient.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: arith.cmpf oeq
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
func.func @train_step(%x: tensor<2x3xf32>, %w: tensor<2x3xf32> {pp.param}) -> tensor<2x3xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %zero = arith.constant 1.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<2x3xf32>
    %er = tensor.empty() : tensor<2xf32>
    %s = linalg.mul ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %lowr = linalg.fill ins(%low : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %m = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%s : tensor<2x3xf32>) outs(%lowr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %shifted = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%s, %m : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %exps = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%exps : tensor<2x3xf32>) outs(%zr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %p = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%exps, %sum : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.divf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %p : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

// The exps also leave the stage: the max keeps its gradient.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: arith.cmpf oeq
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
func.func @train_step(%x: tensor<2x3xf32>, %w: tensor<2x3xf32> {pp.param}) -> tensor<2x3xf32> {
  %r:2 = pp.stage 0 (%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<2x3xf32>
    %er = tensor.empty() : tensor<2xf32>
    %s = linalg.mul ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %lowr = linalg.fill ins(%low : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %m = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%s : tensor<2x3xf32>) outs(%lowr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %shifted = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%s, %m : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %exps = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%exps : tensor<2x3xf32>) outs(%zr : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %p = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%exps, %sum : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.divf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %p, %exps : tensor<2x3xf32>, tensor<2x3xf32>
  }
  %l = pp.stage 1 (%r#0, %r#1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%p1: tensor<2x3xf32>, %q1: tensor<2x3xf32>):
    %e1 = tensor.empty() : tensor<2x3xf32>
    %v1 = linalg.generic {indexing_maps = [#xy, #xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%p1, %q1 : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e1 : tensor<2x3xf32>) {
      ^bb0(%in: f32, %other: f32, %out: f32):
        %v = arith.mulf %in, %other : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %v1 : tensor<2x3xf32>
  }
  return %l : tensor<2x3xf32>
}
