// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-derive-backward

// expected-error @+1 {{the training step has no pp.stage ops; run pp-partition-stages first}}
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    pp.yield %s : tensor<4xf32>
  }
  // expected-error @+1 {{the training step must return exactly the loss, computed by its last stage}}
  return %x : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<2xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    // expected-error @+1 {{pp-derive-backward cannot differentiate 'tensor.extract_slice' in stage 0}}
    %t = tensor.extract_slice %s[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
    pp.yield %t : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

// -----

#id = affine_map<(i) -> (i)>
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    // expected-error @+1 {{cannot be differentiated: its body uses an operation pp-derive-backward has no rule for}}
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        // expected-error @+1 {{no derivative rule for 'math.sin'}}
        %v = math.sin %q : f32
        %m = arith.mulf %p, %v : f32
        linalg.yield %m : f32
    } -> tensor<4xf32>
    pp.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{'pp.stage' op input #1 must be a training-step argument or a result of an earlier stage}}
  %r = pp.stage 0 (%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    pp.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
