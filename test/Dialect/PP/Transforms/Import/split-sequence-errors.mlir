// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-split-sequence=slices=2

// Attention without a causal mask: slice 0 would need slice 1's keys.
#q = affine_map<(b, t, u, d) -> (b, t, d)>
#k = affine_map<(b, t, u, d) -> (b, u, d)>
#s = affine_map<(b, t, u, d) -> (b, t, u)>
func.func @train_step(%x: tensor<2x4x3xf32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x4xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  // expected-error @+1 {{mixes two positions of the sequence without a causal mask (index(key) <= index(query)) here or in its users}}
  %sc = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %x : tensor<2x4x3xf32>, tensor<2x4x3xf32>) outs(%i : tensor<2x4x4xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %m = arith.mulf %a, %c : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  return %sc : tensor<2x4x4xf32>
}

// -----

// A named op over the sequence.
func.func @train_step(%x: tensor<4x4xf32>, %w: tensor<4x2xf32> {pp.param}) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  // expected-error @+1 {{'linalg.matmul' op reads the sequence, and pp-split-sequence computes only linalg.generic ops in sequence slices}}
  %h = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x2xf32>) outs(%i : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %h : tensor<4x2xf32>
}

// -----

// A maximum over the sequence is not a sum of the slices' parts.
#in = affine_map<(b, t) -> (b, t)>
#out = affine_map<(b, t) -> (b)>
func.func @train_step(%x: tensor<2x4xf32>) -> tensor<2xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2xf32>
  %i = linalg.fill ins(%ninf : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  // expected-error @+1 {{reduces over the sequence other than by a sum from zero}}
  %m = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x4xf32>) outs(%i : tensor<2xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %o, %a : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  return %m : tensor<2xf32>
}

// -----

// A shifted read of the sequence (t + 1) has no slice-local form.
#shift = affine_map<(b, t) -> (b, t + 1)>
#id = affine_map<(b, t) -> (b, t)>
func.func @train_step(%x: tensor<2x4xf32>, %w: tensor<2x5xf32> {pp.param}) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  // expected-error @+1 {{reads operand #1 at d1 + 1; sequence slices need a plain loop there}}
  %y = linalg.generic {indexing_maps = [#id, #shift, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<2x4xf32>, tensor<2x5xf32>) outs(%e : tensor<2x4xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %r = arith.addf %a, %c : f32
      linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{a sequence of length 1 cannot be cut into 2 slices}}
func.func @train_step(%x: tensor<2x1xf32>) -> tensor<2x1xf32> {
  return %x : tensor<2x1xf32>
}

// -----

// expected-error @+1 {{data argument #1 ('tensor<2xf32>') has no static sequence dimension 1 of length 4}}
func.func @train_step(%x: tensor<2x4xf32>, %y: tensor<2xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
