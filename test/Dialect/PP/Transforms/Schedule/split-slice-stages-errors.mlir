// RUN: pp-opt %s --pp-split-slice-stages -split-input-file -verify-diagnostics

// A stage cut between what slice 0 computes and slice 1 reads: slice 1 of
// stage 1 would need slice 0's activation, which only slice 0's transfer
// carries.
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = pp.stage 0 (%x) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %p0 = tensor.extract_slice %a[0] [2] [1] {pp.slice = 0 : i64} : tensor<4xf32> to tensor<2xf32>
    %p1 = tensor.extract_slice %a[2] [2] [1] {pp.slice = 1 : i64} : tensor<4xf32> to tensor<2xf32>
    pp.yield %p0, %p1 : tensor<2xf32>, tensor<2xf32>
  }
  %1 = pp.stage 1 (%0#0, %0#1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32> {
  ^bb0(%a0: tensor<2xf32>, %a1: tensor<2xf32>):
    // expected-error @+1 {{'tensor.concat' op computes sequence slice 1 of stage 1 from slice 0 of the stage before; only a slice's own activations cross stages (cut the stages elsewhere)}}
    %c = tensor.concat dim(0) %a0, %a1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    pp.yield %c : tensor<4xf32>
  }
  return %1 : tensor<4xf32>
}

// -----

// A stage result no slice computes.
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  // expected-error @+1 {{'pp.stage' op result #1 is computed by none of the 2 sequence slices; a sliced stage passes on only what its slices compute}}
  %0:2 = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<2xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %p0 = tensor.extract_slice %a[0] [2] [1] {pp.slice = 0 : i64} : tensor<4xf32> to tensor<2xf32>
    %p1 = tensor.extract_slice %a[2] [2] [1] {pp.slice = 1 : i64} : tensor<4xf32> to tensor<2xf32>
    pp.yield %p0, %b : tensor<2xf32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}
