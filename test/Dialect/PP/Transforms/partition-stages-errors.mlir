// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-partition-stages=num-stages=3

func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @+1 {{the model has 1 stage markers, which make 2 stages, but 3 stages were requested}}
  %c = pp.boundary %a : tensor<4x3xf32>
  %b = linalg.add ins(%c, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %b : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{cannot cut 1 ops into 3 stages}}
func.func @train_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %a : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{the training step has no ops to partition}}
func.func @train_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}

// -----

func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<4x3xf32> {pp.param}) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = linalg.mul ins(%a, %a : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @+1 {{weight argument #1 is used by stages 0 and 2; sharing a weight between stages is not supported}}
  %c = linalg.mul ins(%b, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}
