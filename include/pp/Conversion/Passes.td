//===- Passes.td - pp conversion passes --------------------*- tablegen -*-===//
//
// Conversions out of the pp dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PP_CONVERSION_PASSES_TD
#define PP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertPPToRuntime : Pass<"convert-pp-to-runtime", "ModuleOp"> {
  let summary = "Lower a verified schedule to per-rank calls into libpprt";
  let description = [{
    Turns the `pp.schedule` into two C-callable functions that the runtime
    (`runtime/`, C ABI `pprt_*`) drives: `pp_define_program`, which declares
    every buffer named by a `pp.slot` of the stage functions, and
    `pp_run_step`, which runs the ordered actions of one rank for one step.
    A compute action becomes a call of its stage function on memrefs that
    view runtime buffers; transfers, collectives and the optimizer step
    become `pprt_*` calls. The stage functions must already be bufferized
    with results as out-parameters (`one-shot-bufferize` with
    `bufferize-function-boundaries`, then `buffer-results-to-out-params`).
    The training-step function and the schedule are erased.

    Every `pprt_*` function is declared once, with its `pprt.h` signature.
    `pprt_set_program` receives the runtime ABI version the pass was built
    against (`PPRT_ABI_VERSION`), which the runtime checks at start-up, and
    `pprt_define_buffer` each buffer's element type (f32, f16, bf16, i32 or
    i64, from its memref) as a `pprt_dtype`.

    For the runtime's `--profile` (docs/Profiling.md), every stage-function
    call is bracketed by `pprt_action_begin(ctx, phase, stage, mb)` and
    `pprt_action_end(ctx)`, and `pp_define_program` declares with
    `pprt_define_saved(ctx, id, stage, until)` each per-micro-batch buffer a
    stage's forward leaves for its backward (saved values, stage inputs,
    data) and the backward phase (W if it reads it) that releases it.

    ```mlir
    // pp.compute forward stage 0 mb 1 becomes
    %c1 = arith.constant 1 : i32
    %p = func.call @pprt_buffer(%ctx, %c3, %c1) : (!llvm.ptr, i32, i32) -> !llvm.ptr
    ...
    func.call @pprt_action_begin(%ctx, %c0, %c0, %c1) : (!llvm.ptr, i32, i32, i32) -> ()
    func.call @train_step_s0_forward(%x, %w, %out) : (memref<2x16xf32>, ...) -> ()
    func.call @pprt_action_end(%ctx) : (!llvm.ptr) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // PP_CONVERSION_PASSES_TD
