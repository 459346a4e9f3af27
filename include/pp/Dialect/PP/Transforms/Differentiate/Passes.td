//===- Passes.td - pp differentiation passes ---------------*- tablegen -*-===//
//
// The passes that derive the backward computation of pipeline stages.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_PASSES_TD
#define PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PPDeriveBackward : Pass<"pp-derive-backward", "ModuleOp"> {
  let summary = "Differentiate each stage into forward, B, W and fused backward";
  let description = [{
    Reverse-mode differentiation of every `pp.stage` of the training step.
    Each stage is outlined into four functions tagged with `pp.stage` and
    `pp.phase`: `forward` (returns the stage outputs and the activations
    the backward needs), `backward_input` (gradients of the stage inputs,
    and what the weight gradient needs from it), `backward_weight`
    (gradients of the parameters) and the fused `backward`. Every argument
    and result carries a `pp.slot` naming the runtime buffer it lives in.
    The backward of a `recompute` stage recomputes its forward: the
    forward returns only the stage outputs, `backward` and
    `backward_input` re-create the forward values they read from the stage
    inputs, B stashes what W reads, and all four carry `pp.recompute`
    (docs/Recompute.md).
    Linalg ops are differentiated by one rule over their indexing maps and
    scalar payload, so matmuls (any operand transposition), elementwise
    ops, broadcasts, transposes and sum reductions share it; max and min
    reductions route the gradient to the iterations attaining the extremum
    (shared between ties), `linalg.softmax` is decomposed first, and tensor
    reshapes, slices, `concat` and `pad` move gradients back. Any other op
    that needs a gradient is an error naming it and its stage
    (docs/Autodiff.md lists what is supported).

    ```mlir
    func.func @train_step_s0_forward(%x: tensor<2x16xf32> {pp.slot = #pp.slot<data 0>}, ...)
        -> (tensor<2x32xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, ...)
        attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64}
    func.func @train_step_s0_backward_weight(...)
        attributes {pp.phase = #pp<phase backward_weight>, pp.stage = 0 : i64}
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", "\"train_step\"",
           "Name of the training-step function">,
  ];
  let dependentDialects = ["::mlir::pp::PPDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // PP_DIALECT_PP_TRANSFORMS_DIFFERENTIATE_PASSES_TD
