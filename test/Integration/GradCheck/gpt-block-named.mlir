// Finite-difference check of one GPT block written with named linalg ops
// and tensor reshapes: a token embedding as a one-hot contraction, layer
// norm, two-head causal self-attention (heads split off with expand_shape
// and transpose, linalg.batch_matmul, an added -1e9 mask, linalg.softmax),
// a residual, layer norm, an erf-GELU MLP, a residual and a cross-entropy
// head. Also split into two micro-batches, and compiled into two stages.
// RUN: pp-compile %s -o %t
// RUN: %t --check-gradients | FileCheck %s
// RUN: pp-compile %s --microbatches 2 -o %t.2
// RUN: %t.2 --check-gradients | FileCheck %s
// RUN: pp-compile %s --stages 2 --microbatches 2 --emit=schedule -o - | FileCheck %s --check-prefix=STAGES
// CHECK-NOT: FAILED
// CHECK: gradient check passed
// STAGES-DAG: func.func @train_step_s0_backward(
// STAGES-DAG: func.func @train_step_s1_backward(
#btc = affine_map<(b, t, c) -> (b, t, c)>
#bt = affine_map<(b, t, c) -> (b, t)>
#c = affine_map<(b, t, c) -> (c)>
#tc = affine_map<(b, t, c) -> (t, c)>
#nc = affine_map<(n, c) -> (n, c)>
#n = affine_map<(n, c) -> (n)>
#cc = affine_map<(n, c) -> (c)>
func.func @train_step(%tok: tensor<2x4x28xf32>, %tgt: tensor<2x4x28xf32> {pp.target},
                      %wte: tensor<28x8xf32> {pp.param}, %wpe: tensor<4x8xf32> {pp.param},
                      %ln1_g: tensor<8xf32> {pp.param}, %ln1_b: tensor<8xf32> {pp.param},
                      %wqkv: tensor<8x24xf32> {pp.param}, %wo: tensor<8x8xf32> {pp.param},
                      %ln2_g: tensor<8xf32> {pp.param}, %ln2_b: tensor<8xf32> {pp.param},
                      %w1: tensor<8x16xf32> {pp.param}, %c1: tensor<16xf32> {pp.param},
                      %w2: tensor<16x8xf32> {pp.param}, %wh: tensor<8x28xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %inv_c = arith.constant 0.125 : f32
  %eps = arith.constant 1.0e-05 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %mask = arith.constant dense<[[0.0, -1.0e+09, -1.0e+09, -1.0e+09], [0.0, 0.0, -1.0e+09, -1.0e+09], [0.0, 0.0, 0.0, -1.0e+09], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  // token embedding: one-hot [B*T, V] x table [V, C], plus positions
  %tok_r = tensor.collapse_shape %tok [[0, 1], [2]] : tensor<2x4x28xf32> into tensor<8x28xf32>
  %emb_r_z_e = tensor.empty() : tensor<8x8xf32>
  %emb_r_z = linalg.fill ins(%zero : f32) outs(%emb_r_z_e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %emb_r = linalg.matmul ins(%tok_r, %wte : tensor<8x28xf32>, tensor<28x8xf32>) outs(%emb_r_z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %emb = tensor.expand_shape %emb_r [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %x0_e = tensor.empty() : tensor<2x4x8xf32>
  %x0 = linalg.generic {indexing_maps = [#btc, #tc, #btc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb, %wpe : tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%x0_e : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %s = arith.addf %a, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  // layer norm ln1: (x - mean) * rsqrt(var + 1e-5) * g + b
  %ln1_z2_e = tensor.empty() : tensor<2x4xf32>
  %ln1_z2 = linalg.fill ins(%zero : f32) outs(%ln1_z2_e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %ln1_sum = linalg.reduce ins(%x0 : tensor<2x4x8xf32>) outs(%ln1_z2 : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ln1_e3 = tensor.empty() : tensor<2x4x8xf32>
  %ln1_xc = linalg.generic {indexing_maps = [#btc, #bt, #btc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x0, %ln1_sum : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%ln1_e3 : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %m = arith.mulf %s, %inv_c : f32
      %d = arith.subf %a, %m : f32
      linalg.yield %d : f32
  } -> tensor<2x4x8xf32>
  %ln1_sq = linalg.square ins(%ln1_xc : tensor<2x4x8xf32>) outs(%ln1_e3 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ln1_var = linalg.reduce ins(%ln1_sq : tensor<2x4x8xf32>) outs(%ln1_z2 : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ln1 = linalg.generic {indexing_maps = [#btc, #bt, #c, #c, #btc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ln1_xc, %ln1_var, %ln1_g, %ln1_b : tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>) outs(%ln1_e3 : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %v: f32, %gg: f32, %bb: f32, %o: f32):
      %m = arith.mulf %v, %inv_c : f32
      %p = arith.addf %m, %eps : f32
      %r = math.rsqrt %p : f32
      %y = arith.mulf %a, %r : f32
      %yg = arith.mulf %y, %gg : f32
      %yb = arith.addf %yg, %bb : f32
      linalg.yield %yb : f32
  } -> tensor<2x4x8xf32>
  // attention: q, k, v sliced from one projection, two heads
  %y1_r = tensor.collapse_shape %ln1 [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %qkv_r_z_e = tensor.empty() : tensor<8x24xf32>
  %qkv_r_z = linalg.fill ins(%zero : f32) outs(%qkv_r_z_e : tensor<8x24xf32>) -> tensor<8x24xf32>
  %qkv_r = linalg.matmul ins(%y1_r, %wqkv : tensor<8x8xf32>, tensor<8x24xf32>) outs(%qkv_r_z : tensor<8x24xf32>) -> tensor<8x24xf32>
  %qkv = tensor.expand_shape %qkv_r [[0, 1], [2]] output_shape [2, 4, 24] : tensor<8x24xf32> into tensor<2x4x24xf32>
  %q_s = tensor.extract_slice %qkv[0, 0, 0] [2, 4, 8] [1, 1, 1] : tensor<2x4x24xf32> to tensor<2x4x8xf32>
  %k_s = tensor.extract_slice %qkv[0, 0, 8] [2, 4, 8] [1, 1, 1] : tensor<2x4x24xf32> to tensor<2x4x8xf32>
  %v_s = tensor.extract_slice %qkv[0, 0, 16] [2, 4, 8] [1, 1, 1] : tensor<2x4x24xf32> to tensor<2x4x8xf32>
  %qh_4 = tensor.expand_shape %q_s [[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
  %qh_te = tensor.empty() : tensor<2x2x4x4xf32>
  %qh_t = linalg.transpose ins(%qh_4 : tensor<2x4x2x4xf32>) outs(%qh_te : tensor<2x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %qh = tensor.collapse_shape %qh_t [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %kh_4 = tensor.expand_shape %k_s [[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
  %kh_te = tensor.empty() : tensor<2x2x4x4xf32>
  %kh_t = linalg.transpose ins(%kh_4 : tensor<2x4x2x4xf32>) outs(%kh_te : tensor<2x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %kh = tensor.collapse_shape %kh_t [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %vh_4 = tensor.expand_shape %v_s [[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
  %vh_te = tensor.empty() : tensor<2x2x4x4xf32>
  %vh_t = linalg.transpose ins(%vh_4 : tensor<2x4x2x4xf32>) outs(%vh_te : tensor<2x2x4x4xf32>) permutation = [0, 2, 1, 3]
  %vh = tensor.collapse_shape %vh_t [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
  %kt_e = tensor.empty() : tensor<4x4x4xf32>
  %kt = linalg.transpose ins(%kh : tensor<4x4x4xf32>) outs(%kt_e : tensor<4x4x4xf32>) permutation = [0, 2, 1]
  %sc_z_e = tensor.empty() : tensor<4x4x4xf32>
  %sc_z = linalg.fill ins(%zero : f32) outs(%sc_z_e : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %sc = linalg.batch_matmul ins(%qh, %kt : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%sc_z : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %scm_e = tensor.empty() : tensor<4x4x4xf32>
  %scm = linalg.generic {indexing_maps = [affine_map<(n, q, s) -> (n, q, s)>, affine_map<(n, q, s) -> (q, s)>, affine_map<(n, q, s) -> (n, q, s)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sc, %mask : tensor<4x4x4xf32>, tensor<4x4xf32>) outs(%scm_e : tensor<4x4x4xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %scale = arith.constant 0.5 : f32
      %s = arith.mulf %a, %scale : f32
      %r = arith.addf %s, %m : f32
      linalg.yield %r : f32
  } -> tensor<4x4x4xf32>
  %att_e = tensor.empty() : tensor<4x4x4xf32>
  %att = linalg.softmax dimension(2) ins(%scm : tensor<4x4x4xf32>) outs(%att_e : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %ao_z_e = tensor.empty() : tensor<4x4x4xf32>
  %ao_z = linalg.fill ins(%zero : f32) outs(%ao_z_e : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %ao = linalg.batch_matmul ins(%att, %vh : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%ao_z : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %ao4 = tensor.expand_shape %ao [[0, 1], [2], [3]] output_shape [2, 2, 4, 4] : tensor<4x4x4xf32> into tensor<2x2x4x4xf32>
  %aot_e = tensor.empty() : tensor<2x4x2x4xf32>
  %aot = linalg.transpose ins(%ao4 : tensor<2x2x4x4xf32>) outs(%aot_e : tensor<2x4x2x4xf32>) permutation = [0, 2, 1, 3]
  %merged = tensor.collapse_shape %aot [[0, 1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<8x8xf32>
  %proj_r_z_e = tensor.empty() : tensor<8x8xf32>
  %proj_r_z = linalg.fill ins(%zero : f32) outs(%proj_r_z_e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %proj_r = linalg.matmul ins(%merged, %wo : tensor<8x8xf32>, tensor<8x8xf32>) outs(%proj_r_z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %proj = tensor.expand_shape %proj_r [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %x1_e = tensor.empty() : tensor<2x4x8xf32>
  %x1 = linalg.add ins(%x0, %proj : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%x1_e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // layer norm ln2: (x - mean) * rsqrt(var + 1e-5) * g + b
  %ln2_z2_e = tensor.empty() : tensor<2x4xf32>
  %ln2_z2 = linalg.fill ins(%zero : f32) outs(%ln2_z2_e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %ln2_sum = linalg.reduce ins(%x1 : tensor<2x4x8xf32>) outs(%ln2_z2 : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ln2_e3 = tensor.empty() : tensor<2x4x8xf32>
  %ln2_xc = linalg.generic {indexing_maps = [#btc, #bt, #btc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x1, %ln2_sum : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%ln2_e3 : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %m = arith.mulf %s, %inv_c : f32
      %d = arith.subf %a, %m : f32
      linalg.yield %d : f32
  } -> tensor<2x4x8xf32>
  %ln2_sq = linalg.square ins(%ln2_xc : tensor<2x4x8xf32>) outs(%ln2_e3 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ln2_var = linalg.reduce ins(%ln2_sq : tensor<2x4x8xf32>) outs(%ln2_z2 : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ln2 = linalg.generic {indexing_maps = [#btc, #bt, #c, #c, #btc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ln2_xc, %ln2_var, %ln2_g, %ln2_b : tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>) outs(%ln2_e3 : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %v: f32, %gg: f32, %bb: f32, %o: f32):
      %m = arith.mulf %v, %inv_c : f32
      %p = arith.addf %m, %eps : f32
      %r = math.rsqrt %p : f32
      %y = arith.mulf %a, %r : f32
      %yg = arith.mulf %y, %gg : f32
      %yb = arith.addf %yg, %bb : f32
      linalg.yield %yb : f32
  } -> tensor<2x4x8xf32>
  // MLP: erf GELU, 0.5 * h * (1 + erf(h / sqrt(2)))
  %y2_r = tensor.collapse_shape %ln2 [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %h_r_z_e = tensor.empty() : tensor<8x16xf32>
  %h_r_z = linalg.fill ins(%zero : f32) outs(%h_r_z_e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h_r = linalg.matmul ins(%y2_r, %w1 : tensor<8x8xf32>, tensor<8x16xf32>) outs(%h_r_z : tensor<8x16xf32>) -> tensor<8x16xf32>
  %c1b_e = tensor.empty() : tensor<8x16xf32>
  %c1b = linalg.broadcast ins(%c1 : tensor<16xf32>) outs(%c1b_e : tensor<8x16xf32>) dimensions = [0]
  %hb_e = tensor.empty() : tensor<8x16xf32>
  %hb = linalg.add ins(%h_r, %c1b : tensor<8x16xf32>, tensor<8x16xf32>) outs(%hb_e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %gelu_e = tensor.empty() : tensor<8x16xf32>
  %gelu = linalg.generic {indexing_maps = [#nc, #nc], iterator_types = ["parallel", "parallel"]}
      ins(%hb : tensor<8x16xf32>) outs(%gelu_e : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %rsqrt2 = arith.constant 0.707106769 : f32
      %s = arith.mulf %a, %rsqrt2 : f32
      %er = math.erf %s : f32
      %p = arith.addf %er, %one : f32
      %h = arith.mulf %a, %half : f32
      %g = arith.mulf %h, %p : f32
      linalg.yield %g : f32
  } -> tensor<8x16xf32>
  %mlp_r_z_e = tensor.empty() : tensor<8x8xf32>
  %mlp_r_z = linalg.fill ins(%zero : f32) outs(%mlp_r_z_e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mlp_r = linalg.matmul ins(%gelu, %w2 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%mlp_r_z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mlp = tensor.expand_shape %mlp_r [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %x2_e = tensor.empty() : tensor<2x4x8xf32>
  %x2 = linalg.add ins(%x1, %mlp : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%x2_e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // head and cross-entropy: -sum(t * log_softmax(logits)) / (B * T)
  %x2_r = tensor.collapse_shape %x2 [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %logits_z_e = tensor.empty() : tensor<8x28xf32>
  %logits_z = linalg.fill ins(%zero : f32) outs(%logits_z_e : tensor<8x28xf32>) -> tensor<8x28xf32>
  %logits = linalg.matmul ins(%x2_r, %wh : tensor<8x8xf32>, tensor<8x28xf32>) outs(%logits_z : tensor<8x28xf32>) -> tensor<8x28xf32>
  %tgt_r = tensor.collapse_shape %tgt [[0, 1], [2]] : tensor<2x4x28xf32> into tensor<8x28xf32>
  %n_e = tensor.empty() : tensor<8xf32>
  %n_lo = linalg.fill ins(%lowest : f32) outs(%n_e : tensor<8xf32>) -> tensor<8xf32>
  %n_z = linalg.fill ins(%zero : f32) outs(%n_e : tensor<8xf32>) -> tensor<8xf32>
  %lmax = linalg.reduce ins(%logits : tensor<8x28xf32>) outs(%n_lo : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %lsum = linalg.generic {indexing_maps = [#nc, #n, #n], iterator_types = ["parallel", "reduction"]}
      ins(%logits, %lmax : tensor<8x28xf32>, tensor<8xf32>) outs(%n_z : tensor<8xf32>) {
    ^bb0(%a: f32, %m: f32, %acc: f32):
      %d = arith.subf %a, %m : f32
      %x = math.exp %d : f32
      %r = arith.addf %acc, %x : f32
      linalg.yield %r : f32
  } -> tensor<8xf32>
  %l_e = tensor.empty() : tensor<f32>
  %l_z = linalg.fill ins(%zero : f32) outs(%l_e : tensor<f32>) -> tensor<f32>
  %ce = linalg.generic {indexing_maps = [#nc, #nc, #n, #n, affine_map<(n, c) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%tgt_r, %logits, %lmax, %lsum : tensor<8x28xf32>, tensor<8x28xf32>, tensor<8xf32>, tensor<8xf32>) outs(%l_z : tensor<f32>) {
    ^bb0(%ti: f32, %l: f32, %m: f32, %s: f32, %acc: f32):
      %ls = math.log %s : f32
      %c = arith.subf %l, %m : f32
      %lp = arith.subf %c, %ls : f32
      %p = arith.mulf %ti, %lp : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  %scale = arith.constant dense<-0.125> : tensor<f32>
  %loss = linalg.mul ins(%ce, %scale : tensor<f32>, tensor<f32>) outs(%l_e : tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
