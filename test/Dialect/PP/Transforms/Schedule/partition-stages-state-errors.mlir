// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-partition-stages

// The state is read in stage 0 but updated after the cut, in stage 1.
#vec = affine_map<(j) -> (j)>
func.func @train_step(%x: tensor<3xf32>, %w: tensor<3xf32> {pp.param},
                      %running: tensor<3xf32> {pp.state})
    -> (tensor<3xf32>, tensor<3xf32> {pp.state = 2 : i64}) {
  %e = tensor.empty() : tensor<3xf32>
  // expected-error @+1 {{reads state argument #2 in stage 0, but stage 1 updates it; a state must be read and updated in one stage}}
  %a = linalg.add ins(%x, %running : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %cut = pp.boundary %a : tensor<3xf32>
  %b = linalg.mul ins(%cut, %w : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // expected-note @+1 {{updated here}}
  %new = linalg.add ins(%running, %b : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  return %b, %new : tensor<3xf32>, tensor<3xf32>
}

// -----

// A state returned as it came computes nothing.
func.func @train_step(%x: tensor<3xf32>, %w: tensor<3xf32> {pp.param},
                      %running: tensor<3xf32> {pp.state})
    -> (tensor<3xf32>, tensor<3xf32> {pp.state = 2 : i64}) {
  %e = tensor.empty() : tensor<3xf32>
  %a = linalg.mul ins(%x, %w : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %cut = pp.boundary %a : tensor<3xf32>
  %b = linalg.add ins(%cut, %x : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{result #1 updates state argument #2 but no op of the step computes it}}
  return %b, %running : tensor<3xf32>, tensor<3xf32>
}
