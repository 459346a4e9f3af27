// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-split-microbatches=num-microbatches=2

// nn.BatchNorm's statistics: the mean over the batch (a sum times the
// whole batch's 1/count) subtracted from each row. A micro-batch would
// subtract a quarter of its own mean: refused at the model's line.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#chan = affine_map<(d0, d1) -> (0, d1)>
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %ec = tensor.empty() : tensor<1x3xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<1x3xf32>) -> tensor<1x3xf32>
  // expected-note @+1 {{the reduction over the batch dimension}}
  %sum = linalg.generic {indexing_maps = [#rows, #chan], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x3xf32>) outs(%zc : tensor<1x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x3xf32>
  %mean = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<1x3xf32>) outs(%ec : tensor<1x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %quarter : f32
    linalg.yield %m : f32
  } -> tensor<1x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  // expected-error @+1 {{'linalg.generic' op combines rows of the batch with a sum over the batch dimension (a statistic of the batch, such as a batch norm's mean)}}
  %c = linalg.generic {indexing_maps = [#rows, #chan, #rows], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<4x3xf32>, tensor<1x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}

// -----

// A max over the batch is not the sum of the micro-batches' maxima.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#chan = affine_map<(d0, d1) -> (d1)>
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> tensor<3xf32> {
  %low = arith.constant 0xFF800000 : f32
  %ec = tensor.empty() : tensor<3xf32>
  %zc = linalg.fill ins(%low : f32) outs(%ec : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'linalg.generic' op reduces over the batch dimension with other than a sum from zero}}
  %max = linalg.generic {indexing_maps = [#rows, #chan], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<4x3xf32>) outs(%zc : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %max : tensor<3xf32>
}

// -----

// A sum starting from one counts the one once per micro-batch.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %es = tensor.empty() : tensor<f32>
  %os = linalg.fill ins(%one : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{'linalg.generic' op reduces over the batch dimension with other than a sum from zero}}
  %sum = linalg.generic {indexing_maps = [#rows, #all], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x3xf32>) outs(%os : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

// -----

// The square of a sum over the batch is not the sum of its squares over
// micro-batches.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#scalar = affine_map<() -> ()>
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-note @+1 {{the reduction over the batch dimension}}
  %sum = linalg.generic {indexing_maps = [#rows, #all], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x3xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  // expected-error @+1 {{'linalg.generic' op is not linear in a sum over the batch dimension}}
  %sq = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%sum : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %sq : tensor<f32>
}

// -----

// A constant added to a mean loss would be added once per micro-batch.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#scalar = affine_map<() -> ()>
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-note @+1 {{the reduction over the batch dimension}}
  %sum = linalg.generic {indexing_maps = [#rows, #all], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x3xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  // expected-error @+1 {{'linalg.generic' op is not linear in a sum over the batch dimension}}
  %plus = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%sum : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %a, %one : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %plus : tensor<f32>
}

// -----

// A sum over the batch returned beside the loss.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  // expected-note @+1 {{the reduction over the batch dimension}}
  %sum = linalg.generic {indexing_maps = [#rows, #all], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x3xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  // expected-error @+1 {{'func.return' op returns a value computed over the batch dimension as result #1, which is not the loss}}
  return %sum, %sum : tensor<f32>, tensor<f32>
}
