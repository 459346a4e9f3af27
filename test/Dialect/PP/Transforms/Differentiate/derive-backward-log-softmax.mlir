// RUN: pp-opt %s -split-input-file --pp-derive-backward | FileCheck %s

// A CLIP-style symmetric loss: the log-softmax of the logits' rows and the
// log-softmax of their transpose's rows (the logits' columns), both summed
// into the loss. Each max is its own tensor's row max, subtracted along the
// row its exps are summed over: log-softmax is shift-invariant, so neither
// max gets a gradient (no ties are counted) and the backward saves neither
// the logits, their transpose nor the maxes: the exps and row sums only.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: tensor<3xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}
// CHECK-SAME: tensor<3x3xf32> {pp.slot = #pp.slot<saved stage 0 value 1>}
// CHECK-SAME: tensor<3xf32> {pp.slot = #pp.slot<saved stage 0 value 2>}
// CHECK-SAME: tensor<3x3xf32> {pp.slot = #pp.slot<saved stage 0 value 3>}
// CHECK-SAME: tensor<3x3xf32> {pp.slot = #pp.slot<data 0>})
// CHECK-NOT: arith.cmpf oeq
// CHECK-NOT: arith.maximumf
// CHECK: return
#xy = affine_map<(i, j) -> (i, j)>
#yx = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#i = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<3x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<3x3xf32> {
  %res = pp.stage 0 (%x, %w) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32> {
  ^bb0(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<3x3xf32>
    %er = tensor.empty() : tensor<3xf32>
    %logits = linalg.mul ins(%a, %b : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    %rlowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rm = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%logits : tensor<3x3xf32>) outs(%rlowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rs = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %rm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %re = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %rzr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rr = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%re : tensor<3x3xf32>) outs(%rzr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%rr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %ry = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs, %rl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %t = linalg.generic {indexing_maps = [#yx, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
    } -> tensor<3x3xf32>
    %clowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cm = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%t : tensor<3x3xf32>) outs(%clowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cs = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%t, %cm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %ce = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %czr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cr = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%ce : tensor<3x3xf32>) outs(%czr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%cr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cy = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs, %cl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %loss = linalg.add ins(%ry, %cy : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    pp.yield %loss : tensor<3x3xf32>
  }
  return %res : tensor<3x3xf32>
}

// -----

// The same loss with the columns' log-softmax over dim 0 of the logits
// themselves (max, difference, sum and log along the columns): both maxes
// get no gradient.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-NOT: arith.cmpf oeq
// CHECK: return
#xy = affine_map<(i, j) -> (i, j)>
#yx = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#i = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<3x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<3x3xf32> {
  %res = pp.stage 0 (%x, %w) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32> {
  ^bb0(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<3x3xf32>
    %er = tensor.empty() : tensor<3xf32>
    %logits = linalg.mul ins(%a, %b : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    %rlowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rm = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%logits : tensor<3x3xf32>) outs(%rlowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rs = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %rm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %re = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %rzr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rr = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%re : tensor<3x3xf32>) outs(%rzr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%rr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %ry = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs, %rl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %clowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cm = linalg.generic {indexing_maps = [#xy, #col], iterator_types = ["reduction", "parallel"]}
        ins(%logits : tensor<3x3xf32>) outs(%clowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cs = linalg.generic {indexing_maps = [#xy, #col, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %cm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %ce = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %czr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cr = linalg.generic {indexing_maps = [#xy, #col], iterator_types = ["reduction", "parallel"]}
        ins(%ce : tensor<3x3xf32>) outs(%czr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%cr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cy = linalg.generic {indexing_maps = [#xy, #col, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs, %cl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %loss = linalg.add ins(%ry, %cy : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    pp.yield %loss : tensor<3x3xf32>
  }
  return %res : tensor<3x3xf32>
}

// -----

// The columns' max (square logits) subtracted along the rows, whose exps
// are summed over the rows: not the max of the row the sum runs over. The
// rows' max gets no gradient, this one keeps the chain rule.
// CHECK-LABEL: func.func @train_step_s0_backward(
// (one max's ties counted, and its gradient routed to them)
// CHECK-COUNT-2: arith.cmpf oeq
// CHECK-NOT: arith.cmpf oeq
// CHECK: return
#xy = affine_map<(i, j) -> (i, j)>
#yx = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#i = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<3x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<3x3xf32> {
  %res = pp.stage 0 (%x, %w) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32> {
  ^bb0(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<3x3xf32>
    %er = tensor.empty() : tensor<3xf32>
    %logits = linalg.mul ins(%a, %b : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    %rlowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rm = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%logits : tensor<3x3xf32>) outs(%rlowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rs = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %rm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %re = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %rzr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rr = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%re : tensor<3x3xf32>) outs(%rzr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%rr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %ry = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs, %rl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %clowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cm = linalg.generic {indexing_maps = [#xy, #col], iterator_types = ["reduction", "parallel"]}
        ins(%logits : tensor<3x3xf32>) outs(%clowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cs = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %cm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %ce = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %czr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cr = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%ce : tensor<3x3xf32>) outs(%czr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%cr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cy = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs, %cl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %loss = linalg.add ins(%ry, %cy : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    pp.yield %loss : tensor<3x3xf32>
  }
  return %res : tensor<3x3xf32>
}

// -----

// The rows' max of the transpose subtracted from the logits' rows: the max
// of another tensor keeps the chain rule.
// CHECK-LABEL: func.func @train_step_s0_backward(
// (one max's ties counted, and its gradient routed to them)
// CHECK-COUNT-2: arith.cmpf oeq
// CHECK-NOT: arith.cmpf oeq
// CHECK: return
#xy = affine_map<(i, j) -> (i, j)>
#yx = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#i = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<3x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<3x3xf32> {
  %res = pp.stage 0 (%x, %w) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32> {
  ^bb0(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<3x3xf32>
    %er = tensor.empty() : tensor<3xf32>
    %logits = linalg.mul ins(%a, %b : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    %rlowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rm = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%logits : tensor<3x3xf32>) outs(%rlowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rs = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %rm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %re = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %rzr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %rr = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%re : tensor<3x3xf32>) outs(%rzr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %rl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%rr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %ry = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%rs, %rl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %t = linalg.generic {indexing_maps = [#yx, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
    } -> tensor<3x3xf32>
    %clowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cm = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%t : tensor<3x3xf32>) outs(%clowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cs = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%logits, %cm : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %ce = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %czr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %cr = linalg.generic {indexing_maps = [#xy, #row], iterator_types = ["parallel", "reduction"]}
        ins(%ce : tensor<3x3xf32>) outs(%czr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cl = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%cr : tensor<3xf32>) outs(%er : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %cy = linalg.generic {indexing_maps = [#xy, #row, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%cs, %cl : tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %loss = linalg.add ins(%ry, %cy : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    pp.yield %loss : tensor<3x3xf32>
  }
  return %res : tensor<3x3xf32>
}


// -----

// The max a log-softmax (a cross-entropy's) subtracts gets no gradient:
// (x - max) - log(sum_row exp(x - max)) is shift-invariant too (the -1
// through `x - max` and the +1 through the log cancel). The backward
// saves the exps and their row sums only.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: tensor<2xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}
// CHECK-SAME: tensor<2x3xf32> {pp.slot = #pp.slot<saved stage 0 value 1>}
// CHECK-SAME: tensor<2x3xf32> {pp.slot = #pp.slot<data 0>})
// CHECK-NOT: arith.cmpf oeq
// CHECK-NOT: arith.maximumf
// CHECK: return
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
#i = affine_map<(i) -> (i)>
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
    %log = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%sum : tensor<2xf32>) outs(%er : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %y = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted, %log : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %y : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

// The log of the row sums added, not subtracted, is no log-softmax: the
// max keeps its gradient.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: arith.cmpf oeq
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
#i = affine_map<(i) -> (i)>
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
    %log = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%sum : tensor<2xf32>) outs(%er : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %y = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted, %log : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.addf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %y : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

// The log of the row sums also leaves the stage: the max keeps its
// gradient.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: arith.cmpf oeq
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
#i = affine_map<(i) -> (i)>
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
    %log = linalg.generic {indexing_maps = [#i, #i], iterator_types = ["parallel"]}
        ins(%sum : tensor<2xf32>) outs(%er : tensor<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<2xf32>
    %y = linalg.generic {indexing_maps = [#xy, #x, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted, %log : tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<2x3xf32>
    pp.yield %y, %log : tensor<2x3xf32>, tensor<2xf32>
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

// PyTorch's decomposition keeps the reduced dimension: the max is expanded
// to [3, 1] and the sums reduce into [3, 1]. The max is still the row's.
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-NOT: arith.cmpf oeq
// CHECK: return
#xy = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j) -> (i)>
#k = affine_map<(i, j) -> (i, 0)>
func.func @train_step(%x: tensor<3x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<3x3xf32> {
  %res = pp.stage 0 (%x, %w) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32> {
  ^bb0(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %low = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<3x3xf32>
    %er = tensor.empty() : tensor<3xf32>
    %ek = tensor.empty() : tensor<3x1xf32>
    %s = linalg.mul ins(%a, %b : tensor<3x3xf32>, tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
    %lowr = linalg.fill ins(%low : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
    %m = linalg.generic {indexing_maps = [#xy, #x], iterator_types = ["parallel", "reduction"]}
        ins(%s : tensor<3x3xf32>) outs(%lowr : tensor<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.maximumf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3xf32>
    %mk = tensor.expand_shape %m [[0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
    %shifted = linalg.generic {indexing_maps = [#xy, #k, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%s, %mk : tensor<3x3xf32>, tensor<3x1xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %max: f32, %out: f32):
        %v = arith.subf %in, %max : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %exps = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted : tensor<3x3xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.exp %in : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    %zr = linalg.fill ins(%zero : f32) outs(%ek : tensor<3x1xf32>) -> tensor<3x1xf32>
    %sum = linalg.generic {indexing_maps = [#xy, #k], iterator_types = ["parallel", "reduction"]}
        ins(%exps : tensor<3x3xf32>) outs(%zr : tensor<3x1xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = arith.addf %in, %out : f32
        linalg.yield %v : f32
    } -> tensor<3x1xf32>
    %log = linalg.generic {indexing_maps = [#xy, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%sum : tensor<3x1xf32>) outs(%ek : tensor<3x1xf32>) {
      ^bb0(%in: f32, %out: f32):
        %v = math.log %in : f32
        linalg.yield %v : f32
    } -> tensor<3x1xf32>
    %y = linalg.generic {indexing_maps = [#xy, #k, #xy], iterator_types = ["parallel", "parallel"]}
        ins(%shifted, %log : tensor<3x3xf32>, tensor<3x1xf32>) outs(%e : tensor<3x3xf32>) {
      ^bb0(%in: f32, %total: f32, %out: f32):
        %v = arith.subf %in, %total : f32
        linalg.yield %v : f32
    } -> tensor<3x3xf32>
    pp.yield %y : tensor<3x3xf32>
  }
  return %res : tensor<3x3xf32>
}
