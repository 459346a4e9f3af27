// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-derive-backward

// A result after the loss must be a state's new value.
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> (tensor<f32>, tensor<4xf32>) {
  %r:2 = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %el = tensor.empty() : tensor<f32>
    %l = linalg.reduce ins(%s : tensor<4xf32>) outs(%el : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %t = arith.addf %in, %acc : f32
        linalg.yield %t : f32
      }
    pp.yield %l, %s : tensor<f32>, tensor<4xf32>
  }
  // expected-error @+1 {{result #1 of the training step is neither the loss nor marked 'pp.state'}}
  return %r#0, %r#1 : tensor<f32>, tensor<4xf32>
}

// -----

// A state's new value must not be read elsewhere.
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}, %m: tensor<4xf32> {pp.state})
    -> (tensor<f32>, tensor<4xf32> {pp.state = 2 : i64}, tensor<4xf32> {pp.state = 2 : i64}) {
  %r:2 = pp.stage 0 (%x, %w, %m) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %n = linalg.add ins(%a, %c : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %el = tensor.empty() : tensor<f32>
    %l = linalg.reduce ins(%s : tensor<4xf32>) outs(%el : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %t = arith.addf %in, %acc : f32
        linalg.yield %t : f32
      }
    pp.yield %l, %n : tensor<f32>, tensor<4xf32>
  }
  // expected-error @+1 {{result #1 updates state argument #2 with a stage result that is also used elsewhere}}
  return %r#0, %r#1, %r#1 : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}
