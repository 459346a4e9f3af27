// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-derive-backward

// expected-error @+1 {{the training step has no pp.stage ops; run pp-partition-stages first}}
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Data alone (a target, no weight) has no gradient to take.
// expected-error @+1 {{the training step has no weights: no argument carries 'pp.param', so there is nothing to train}}
func.func @train_step(%x: tensor<4xf32>, %y: tensor<4xf32> {pp.target}) -> tensor<f32> {
  %r = pp.stage 0 (%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %d = linalg.sub ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %s = tensor.empty() : tensor<f32>
    %z = linalg.fill ins(%zero : f32) outs(%s : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%d : tensor<4xf32>) outs(%z : tensor<f32>) dimensions = [0]
      (%p: f32, %q: f32) {
        %t = arith.addf %p, %q : f32
        linalg.yield %t : f32
      }
    pp.yield %l : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// Weights left in the module as constants (what torch-mlir makes of a
// module's parameters unless they are arguments): the note points at one.
// expected-error @+1 {{the training step has no weights: no argument carries 'pp.param', so there is nothing to train}}
func.func @train_step(%x: tensor<2x2xf32>) -> tensor<f32> {
  %r = pp.stage 0 (%x) : (tensor<2x2xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<2x2xf32>):
    %zero = arith.constant 0.0 : f32
    // expected-note @+1 {{weights held as constants, such as this one, are not trained; pass them as 'pp.param' arguments (pp.torch.export does)}}
    %w = arith.constant dense_resource<torch_tensor_2_2_torch.float32> : tensor<2x2xf32>
    %e = tensor.empty() : tensor<2x2xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
    %m = linalg.matmul ins(%a, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z : tensor<2x2xf32>) -> tensor<2x2xf32>
    %s = tensor.empty() : tensor<f32>
    %zs = linalg.fill ins(%zero : f32) outs(%s : tensor<f32>) -> tensor<f32>
    %l = linalg.reduce ins(%m : tensor<2x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
      (%p: f32, %q: f32) {
        %t = arith.addf %p, %q : f32
        linalg.yield %t : f32
      }
    pp.yield %l : tensor<f32>
  }
  return %r : tensor<f32>
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_2_2_torch.float32: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

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
    // expected-error @+1 {{pp-derive-backward cannot differentiate 'arith.mulf' in stage 0 (see docs/Autodiff.md for the supported ops)}}
    %m = arith.mulf %s, %s : tensor<4xf32>
    %t = tensor.extract_slice %m[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
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
    // expected-error @+1 {{'linalg.generic' op in stage 0 cannot be differentiated: its body uses an operation pp-derive-backward has no rule for}}
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        // expected-error @+1 {{no derivative rule for 'math.tan'}}
        %v = math.tan %q : f32
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
  // expected-error @+1 {{'pp.stage' op input #1 must be a training-step argument or a result of stage -1}}
  %r = pp.stage 0 (%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    pp.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %a = pp.stage 0 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    pp.yield %i : tensor<4xf32>
  }
  %b = pp.stage 1 (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    pp.yield %i : tensor<4xf32>
  }
  // expected-error @+1 {{'pp.stage' op input #0 must be a training-step argument or a result of stage 1}}
  %c = pp.stage 2 (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>, %j: tensor<4xf32>):
    pp.yield %j : tensor<4xf32>
  }
  return %c : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %s: f32 {pp.param}) -> tensor<4xf32> {
  // expected-error @+1 {{'pp.stage' op input #1 has type 'f32'; stages exchange static tensors of f32, i1, i32 or i64 only}}
  %a = pp.stage 0 (%x, %s) : (tensor<4xf32>, f32) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>, %j: f32):
    pp.yield %i : tensor<4xf32>
  }
  return %a : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  // expected-error @+1 {{'pp.stage' op has stage id 3, expected 0: stages must be numbered 0, 1, ... in program order}}
  %a = pp.stage 3 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    pp.yield %i : tensor<4xf32>
  }
  return %a : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3xf32> {pp.param}) -> tensor<f32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<3xf32>):
    %e = tensor.empty() : tensor<4x3xf32>
    %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<4x3xf32>) dimensions = [0]
    %p = linalg.mul ins(%a, %bb : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %one = arith.constant 1.0 : f32
    %es = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%one : f32) outs(%es : tensor<f32>) -> tensor<f32>
    // expected-error @+1 {{'linalg.reduce' op in stage 0 cannot be differentiated: result #0 must reduce by a sum or a max or min (yield `out + f(ins)` or `max(out, f(ins))`)}}
    %m = linalg.reduce ins(%p : tensor<4x3xf32>) outs(%init : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %v = arith.mulf %in, %acc : f32
        linalg.yield %v : f32
      }
    pp.yield %m : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// A max reduction into a value that itself needs a gradient.
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<4xf32>):
    // expected-error @+1 {{'linalg.reduce' op in stage 0 cannot be differentiated: it takes a max or min into an init that needs a gradient}}
    %m = linalg.reduce ins(%a : tensor<4x3xf32>) outs(%b : tensor<4xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %v = arith.maximumf %in, %acc : f32
        linalg.yield %v : f32
      }
    pp.yield %m : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// The diagonal of a weight: an operand map that repeats a loop.
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4x4xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4x4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    // expected-error @+1 {{'linalg.generic' op in stage 0 cannot be differentiated: operand #1 is not indexed by a projected permutation or sliding windows}}
    %d = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i, i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
        ins(%a, %b : tensor<4xf32>, tensor<4x4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %m = arith.mulf %p, %q : f32
        linalg.yield %m : f32
    } -> tensor<4xf32>
    pp.yield %d : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A window read backwards (`i - k`): not a sliding window the rule
// spreads the gradient for.
func.func @train_step(%x: tensor<4xf32>, %w: tensor<6xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<6xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<6xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %k = tensor.empty() : tensor<3xf32>
    // expected-error @+1 {{'linalg.generic' op in stage 0 cannot be differentiated: operand #1 is not indexed by a projected permutation or sliding windows}}
    %d = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i - k + 2)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%a, %b, %k : tensor<4xf32>, tensor<6xf32>, tensor<3xf32>) outs(%z : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %u: f32, %o: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    pp.yield %d : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Another operand reads the window's position through another window
// (`i + k + 1`): the rule cannot move it onto the weight's positions.
func.func @train_step(%x: tensor<7xf32>, %w: tensor<6xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<7xf32>, tensor<6xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<7xf32>, %b: tensor<6xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %k = tensor.empty() : tensor<3xf32>
    // expected-error @+1 {{'linalg.generic' op in stage 0 cannot be differentiated: an operand reads the position of a sliding window otherwise than through the window}}
    %d = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k + 1)>, affine_map<(i, k) -> (i + k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%a, %b, %k : tensor<7xf32>, tensor<6xf32>, tensor<3xf32>) outs(%z : tensor<4xf32>) {
      ^bb0(%p: f32, %q: f32, %u: f32, %o: f32):
        %m = arith.mulf %p, %q : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    pp.yield %d : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A windowed read whose body also reads the loop indices: in the gradient
// the window's position loop runs over other values.
func.func @train_step(%w: tensor<6xf32> {pp.param}) -> tensor<4xf32> {
  %r = pp.stage 0 (%w) : (tensor<6xf32>) -> tensor<4xf32> {
  ^bb0(%b: tensor<6xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %k = tensor.empty() : tensor<3xf32>
    // expected-error @+1 {{'linalg.generic' op in stage 0 cannot be differentiated: its body reads loop indices while operand #0 is read through sliding windows}}
    %d = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
        ins(%b, %k : tensor<6xf32>, tensor<3xf32>) outs(%z : tensor<4xf32>) {
      ^bb0(%q: f32, %u: f32, %o: f32):
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i64
        %f = arith.sitofp %ii : i64 to f32
        %m = arith.mulf %q, %f : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    pp.yield %d : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A slice at a position known only at run time.
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<2xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %c0 = arith.constant 0 : index
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %f = tensor.extract %a[%c0] : tensor<4xf32>
    %i = arith.fptoui %f : f32 to i32
    %o = arith.index_cast %i : i32 to index
    // expected-error @+1 {{'tensor.extract_slice' op in stage 0 cannot be differentiated: offsets, sizes and strides must be static}}
    %t = tensor.extract_slice %s[%o] [2] [1] : tensor<4xf32> to tensor<2xf32>
    pp.yield %t : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

// -----

// A scalar taken out of a tensor that depends on a weight.
func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<f32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %c0 = arith.constant 0 : index
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %f = tensor.extract %s[%c0] : tensor<4xf32>
    %es = tensor.empty() : tensor<f32>
    // expected-error @+1 {{'linalg.fill' op in stage 0 cannot be differentiated: operand #0 is a scalar that depends on a weight}}
    %l = linalg.fill ins(%f : f32) outs(%es : tensor<f32>) -> tensor<f32>
    pp.yield %l : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<f32> {
  %r = pp.stage 0 (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %c0 = arith.constant 0 : index
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %f = tensor.extract %s[%c0] : tensor<4xf32>
    // expected-error @+1 {{pp-derive-backward cannot differentiate 'tensor.from_elements' in stage 0}}
    %l = tensor.from_elements %f : tensor<f32>
    pp.yield %l : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// A mask or ids may cross to the next stage, but not values of a dynamic
// shape or of an element type the runtime does not move (i8, f16).
func.func @train_step(%ids: tensor<4xi64>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  // expected-error @+1 {{'pp.stage' op result #0 has type 'tensor<4xi8>'; stages exchange static tensors of f32, i1, i32 or i64 only}}
  %a = pp.stage 0 (%ids) : (tensor<4xi64>) -> tensor<4xi8> {
  ^bb0(%i: tensor<4xi64>):
    %t = arith.trunci %i : tensor<4xi64> to tensor<4xi8>
    pp.yield %t : tensor<4xi8>
  }
  %b = pp.stage 1 (%a, %w) : (tensor<4xi8>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xi8>, %v: tensor<4xf32>):
    pp.yield %v : tensor<4xf32>
  }
  return %b : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  // expected-error @+1 {{'pp.stage' op result #0 has type 'tensor<4xf16>'; stages exchange static tensors of f32, i1, i32 or i64 only}}
  %a = pp.stage 0 (%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%i: tensor<4xf32>):
    %t = arith.truncf %i : tensor<4xf32> to tensor<4xf16>
    pp.yield %t : tensor<4xf16>
  }
  %b = pp.stage 1 (%a, %w) : (tensor<4xf16>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf16>, %v: tensor<4xf32>):
    pp.yield %v : tensor<4xf32>
  }
  return %b : tensor<4xf32>
}

// -----

func.func @train_step(%x: tensor<4xf32>, %w: tensor<4xf32> {pp.param}) -> tensor<4xf32> {
  // expected-error @+1 {{'pp.stage' op result #0 has type 'tensor<?xi1>'; stages exchange static tensors of f32, i1, i32 or i64 only}}
  %a = pp.stage 0 (%x) : (tensor<4xf32>) -> tensor<?xi1> {
  ^bb0(%i: tensor<4xf32>):
    %c = arith.cmpf one, %i, %i : tensor<4xf32>
    %t = tensor.cast %c : tensor<4xi1> to tensor<?xi1>
    pp.yield %t : tensor<?xi1>
  }
  %b = pp.stage 1 (%a, %w) : (tensor<?xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<?xi1>, %v: tensor<4xf32>):
    pp.yield %v : tensor<4xf32>
  }
  return %b : tensor<4xf32>
}
