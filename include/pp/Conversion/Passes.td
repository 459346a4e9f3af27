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
    A compute action becomes a call of its stage function's action function
    (the stage function it names, or without a name the function tagged
    with its `pp.stage` and `pp.phase`): `<stage function>_action(ctx, mb)`,
    one per stage function, fills a table of the data pointers of the
    stage function's buffers for micro-batch `mb` (`pprt_buffer` in a loop
    over a private constant global of buffer ids, in argument order), calls
    the stage function with the table, sums its weight gradients
    (`pprt_accumulate`) and records its loss. The stage function then takes
    the table (`!llvm.ptr`) instead of its memref arguments: each op of its
    body that uses an argument reads the argument's entry right before it
    and views it as the argument's memref. So the code of a step grows with
    its actions, not with actions x buffers, and no call has one argument
    per buffer (thousands in a deep model, which LLVM's code generation
    handles in worse than linear time). A stage function that another
    function also calls keeps its arguments, and its action function passes
    one memref per buffer. Transfers, collectives and the optimizer step
    become `pprt_*` calls; a transfer followed by `grouped` ones (an
    exchange group) is bracketed by `pprt_group_begin` and
    `pprt_group_end`, so the runtime posts the group's sends before its
    receives wait. The stage functions must already be bufferized
    with results as out-parameters (`one-shot-bufferize` with
    `bufferize-function-boundaries`, then `buffer-results-to-out-params`).
    The training-step function and the schedule are erased.

    Every `pprt_*` function is declared once, with its `pprt.h` signature.
    `pprt_set_program` receives the runtime ABI version the pass was built
    against (`PPRT_ABI_VERSION`), which the runtime checks at start-up, and
    `pprt_define_buffer` each buffer's element type (f32, f16, bf16, i32 or
    i64, from its memref) as a `pprt_dtype`.

    A buffer's shape goes to `pprt_define_buffer` as its rank and a pointer
    to its dims: one private constant global per shape (`@pp_dims_4_3`,
    null for rank 0). The runtime holds ranks 0 to 6 (`PPRT_MAX_DIMS`); an
    argument of higher rank is an error at its stage function.

    For the runtime's `--profile` (docs/Profiling.md), every action-function
    call is bracketed by `pprt_action_begin(ctx, phase, stage, mb)` and
    `pprt_action_end(ctx)`, and `pp_define_program` declares with
    `pprt_define_saved(ctx, id, stage, until)` each per-micro-batch buffer a
    stage's forward leaves for its backward (saved values, stage inputs,
    data) and the backward phase (W if it reads it) that releases it.

    ```mlir
    // pp.compute forward stage 0 mb 1 becomes
    %c1 = arith.constant 1 : i32
    func.call @pprt_action_begin(%ctx, %c0, %c0, %c1) : (!llvm.ptr, i32, i32, i32) -> ()
    func.call @train_step_s0_forward_action(%ctx, %c1) : (!llvm.ptr, i32) -> ()
    func.call @pprt_action_end(%ctx) : (!llvm.ptr) -> ()

    // with, once per stage function,
    llvm.mlir.global private constant @train_step_s0_forward_action_buffers(dense<[0, 1, 2]> : tensor<3xi32>) : !llvm.array<3 x i32>
    func.func private @train_step_s0_forward_action(%ctx: !llvm.ptr, %mb: i32) {
      %table = llvm.alloca %c3 x !llvm.ptr : (i32) -> !llvm.ptr
      scf.for %i = %c0 to %c3 step %c1 : i32 {
        ... // table[i] = pprt_buffer(ctx, ids[i], mb)
      }
      func.call @train_step_s0_forward(%table) : (!llvm.ptr) -> ()
      return
    }
    func.func @train_step_s0_forward(%table: !llvm.ptr) {
      %e = llvm.getelementptr %table[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %p = llvm.load %e : !llvm.ptr -> !llvm.ptr
      %w = builtin.unrealized_conversion_cast %descriptor : ... to memref<16x16xf32>
      ... // the op that reads %w
    }
    ```

    With `zero-gather=param` (a schedule whose ZeRO-3 stages, some or all,
    gather per param instead of per stage: `zero_gather`) the stage
    functions of those stages gather each weight themselves: a stage function that reads params takes the runtime
    context before its table, which holds its other buffers only, and calls
    `pprt_param_acquire(ctx, id)` (the whole weights, gathered from the
    replicas' blocks) right before the first op of its body that uses the
    param or a value derived from it (a view, a pointer taken from it), and
    `pprt_param_release(ctx, id)` right after the last such op; in a body of
    several blocks, at its entry and before each return. The schedule's
    `pp.all_gather` actions then emit nothing. A stage function that
    another function also calls acquires its params in its action
    function, around the call.

    ```mlir
    func.func @train_step_s0_forward(%ctx: !llvm.ptr, %table: !llvm.ptr) {
      %p = func.call @pprt_param_acquire(%ctx, %c0) : (!llvm.ptr, i32) -> !llvm.ptr
      ... // the ops that read the param through views of %p
      func.call @pprt_param_release(%ctx, %c0) : (!llvm.ptr, i32) -> ()
      ... // the ops that read none
    }
    ```
  }];
  let options = [
    Option<"zeroGather", "zero-gather", "::mlir::pp::ZeroGather",
           "::mlir::pp::ZeroGather::Stage",
           "ZeRO-3's unit of gathering the weights",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::ZeroGather::Stage, "stage",
                        "the schedule's pp.all_gather gathers a stage's "
                        "weights for the step"),
             clEnumValN(::mlir::pp::ZeroGather::Param, "param",
                        "each stage function gathers each weight it reads "
                        "around its reads"))}]>,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def ConvertGemmToRuntime : Pass<"convert-gemm-to-runtime", "ModuleOp"> {
  let summary = "Lower contractions marked pp.gemm = \"library\" to pprt_gemm";
  let description = [{
    Rewrites every bufferized linalg op that `pp-select-gemm` marked with
    `pp.gemm = "library"` into calls of the runtime's batched GEMM entry
    `pprt_gemm` (runtime/include/pprt/pprt.h), declared once. Pointers are
    the memrefs' aligned pointers plus their offsets
    (`memref.extract_aligned_pointer_as_index`,
    `memref.extract_strided_metadata`); row strides, batch strides and
    transposes come from the memref layouts, and dimensions that do not
    collapse into one strided GEMM dimension become `scf.for` loops around
    the call. The op's semantics are kept exactly: beta is 1 (accumulate into
    the init) unless the init is a zero `linalg.fill` right before the op,
    which is then dropped for beta = 0 (in the first iteration of reduction
    loops). A marked op whose layout cannot map (dynamic strides, no unit
    stride) stays as it is, with a remark, and is generated by the usual
    lowering. Run it after one-shot bufferization and before
    `convert-linalg-to-loops`.

    With `precision=bf16` each call reads A and B as bf16: both are first
    rounded (`arith.truncf`, a `linalg.generic` into a row-major
    `memref.alloc` freed after the call) and C stays f32, so products and
    sums are fp32 (cuBLAS `GemmEx` with fp32 compute on GPUs). The weights,
    gradients and everything outside the GEMMs stay fp32.

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<64x16xf32>)
    linalg.matmul {pp.gemm = "library"}
        ins(%a, %b : memref<64x32xf32>, memref<16x32xf32, strided<[1, 16]>>)
        outs(%c : memref<64x16xf32>)
    // becomes (constants elided): trans_b = 1, lda 32, ldb 16, ldc 16
    func.call @pprt_gemm(%f32, %f32, %c0_i32, %c1_i32, %c1, %c64, %c16, %c32,
        %one, %pa, %c32, %c0, %pb, %c16, %c0, %zero, %pc, %c16, %c0) : (...) -> ()
    ```
  }];
  let options = [
    Option<"precision", "precision", "::mlir::pp::GemmPrecision",
           "::mlir::pp::GemmPrecision::FP32",
           "Element type the GEMMs read A and B in",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::GemmPrecision::FP32, "fp32",
                        "f32 inputs"),
             clEnumValN(::mlir::pp::GemmPrecision::BF16, "bf16",
                        "inputs rounded to bf16, fp32 accumulation"))}]>,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def ConvertShardToRuntime : Pass<"convert-shard-to-runtime", "ModuleOp"> {
  let summary = "Lower tensor-parallel collectives to pprt_tp_* calls";
  let description = [{
    Rewrites the ops `shard-partition` leaves in stage functions that
    `pp-shard-stages` partitioned over the tensor-parallel grid `@pp_tp`
    into calls of libpprt's context-free tensor-parallel entry points
    (runtime/include/pprt/pprt.h), on tensors, so that One-Shot Bufferize
    sees only ops it can bufferize:

    - `shard.all_reduce` (sum) copies its operand into a fresh buffer,
      which `pprt_tp_all_reduce(dtype, buf, count)` sums in place over the
      group;
    - `shard.all_gather` along dimension d calls `pprt_tp_all_gather` into
      a buffer of T blocks, then moves block i to offset i * local of d
      (`linalg.transpose` where d > 0, `tensor.collapse_shape`);
    - `shard.all_slice` along d becomes a `tensor.extract_slice` at offset
      `pprt_tp_index() * local`;
    - `shard.process_multi_index` and `shard.process_linear_index` become
      `pprt_tp_index()`.

    The grid is erased. Any other shard op, a reduction other than a sum,
    or an element type the runtime does not take is an error at the op.
    Going through pprt rather than `convert-shard-to-mpi` keeps every
    transport (MPI, NCCL, the staged, guarded and trace decorators) and the
    runtime's timeouts.

    ```mlir
    %s = shard.all_reduce %p on @pp_tp grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
    // becomes
    %src = bufferization.to_buffer %p read_only : tensor<8x4xf32> to memref<8x4xf32>
    %buf = memref.alloc() : memref<8x4xf32>
    memref.copy %src, %buf : memref<8x4xf32> to memref<8x4xf32>
    ...
    func.call @pprt_tp_all_reduce(%c0_i32, %ptr, %c32_i64) : (i32, !llvm.ptr, i64) -> ()
    %s = bufferization.to_tensor %buf restrict writable : memref<8x4xf32> to tensor<8x4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // PP_CONVERSION_PASSES_TD
