// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-partition-stages=num-stages=3

func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  // expected-error @+1 {{the model has 3 stage markers, which make at least 4 stages, but 3 stages were requested}}
  %c = pp.boundary %a : tensor<4x3xf32>
  %c2 = pp.boundary %c : tensor<4x3xf32>
  %c3 = pp.boundary %c2 : tensor<4x3xf32>
  %b = linalg.add ins(%c3, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %b : tensor<4x3xf32>
}

// -----

// Two markers with no op between them would leave a stage empty.
func.func @train_step(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %c = pp.boundary %a : tensor<4x3xf32>
  // expected-error @+1 {{stage marker leaves a stage without ops}}
  %c2 = pp.boundary %c : tensor<4x3xf32>
  %b = linalg.add ins(%c2, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
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

// The planner never cuts between two users of a weight: here every cut would.
// expected-error @+1 {{no partition into 3 stages cuts at every stage marker and keeps the users of each weight in one stage}}
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<4x3xf32> {pp.param}) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = linalg.mul ins(%a, %a : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %c = linalg.mul ins(%b, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}

// -----

// Markers are cuts the plan must make, even between two users of a weight.
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<4x3xf32> {pp.param}) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = pp.boundary %a : tensor<4x3xf32>
  %b = linalg.mul ins(%m, %m : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m2 = pp.boundary %b : tensor<4x3xf32>
  // expected-error @+1 {{weight argument #1 is used by stages 0 and 2; sharing a weight between stages is not supported}}
  %c = linalg.mul ins(%m2, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}
