//===- Passes.td - pp import passes ------------------------*- tablegen -*-===//
//
// The passes that prepare a model's training step before it is cut into stages.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_IMPORT_PASSES_TD
#define PP_DIALECT_PP_TRANSFORMS_IMPORT_PASSES_TD

include "mlir/Pass/PassBase.td"

def PPSplitMicrobatches : Pass<"pp-split-microbatches", "ModuleOp"> {
  let summary = "Rewrite a training step to run on one micro-batch";
  let description = [{
    Divides the batch dimension (dimension 0 of every data argument, i.e.
    every argument without `pp.param`) by `num-microbatches` and propagates
    the new shape through the model's linalg ops and their `tensor.empty`
    and `linalg.fill` destinations. Constants keep their values, so a loss
    written as a batch sum times a constant (a mean over the whole batch)
    becomes a per-micro-batch term whose sum over micro-batches is the
    whole-batch loss.

    The pass splits only what it can prove exact. A reduction over the
    batch dimension must be a sum from zero, and what reads it must be
    linear in it (constant factors and divisors, sums of such sums,
    reshapes) up to the loss, the step's first result; a ratio of two such
    sums may be the loss too (F.cross_entropy's mean over the targets it
    counts, each micro-batch's own). Anything else that mixes rows of the
    batch is an error at the model's line, with a note at the reduction:
    a max over the batch, a sum with a starting value, a nonlinear function
    of a sum, and a statistic of the batch read back by its rows (a batch
    norm's mean and variance in training mode), which a micro-batch would
    compute with the whole batch's counts; such a step must be traced at
    the micro-batch shape.

    Values shaped like the batch but computed without batch data are
    re-created at the micro-batch shape where batch data meets them: splat
    constants (also reshaped), fills, weights broadcast to the batch (also
    when concatenated with batch data along another dimension, a ViT's
    class token), and what linalg ops, reshapes and whole slices compute
    from those (an RNN's first step from its zero state). The batch may be
    merged inside an outer dimension (`[sequence * batch]` rows) and split
    back where it was merged; padding must leave the batch dimension alone.
    A step already marked `pp.microbatches` (traced at the micro-batch
    shape by `pp.torch.export`) is left as it is if the counts agree.

    ```mlir
    // before, num-microbatches=4
    func.func @train_step(%x: tensor<8x16xf32>, %w: tensor<16x4xf32> {pp.param})
    // after
    func.func @train_step(%x: tensor<2x16xf32>, %w: tensor<16x4xf32> {pp.param})
    ```
  }];
  let options = [
    Option<"numMicrobatches", "num-microbatches", "int64_t", "1",
           "Number of micro-batches the batch is split into">,
    Option<"function", "function", "std::string", "\"train_step\"",
           "Name of the training-step function">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PPSplitSequence : Pass<"pp-split-sequence", "ModuleOp"> {
  let summary = "Compute a training step in slices of its sequence";
  let description = [{
    Cuts the sequence dimension (`seq-dim`, default 1, of every data
    argument, i.e. every argument without `pp.param`) into `slices` = k
    slices and computes every `linalg.generic` that reads the sequence
    once per slice, as Seq1F1B runs a micro-batch (docs/Seq1F1B.md).
    `split=uniform` (default) gives slices of equal length (the first ones
    one shorter when k does not divide it); `split=balanced` slices of
    equal estimated work (iterations times body ops of the sliced ops,
    per token and per query-key pair), so later slices, whose queries
    attend to more keys, are shorter (Seq1F1B's default).

    - token-wise ops (embeddings, layer norm, the MLP, the loss's terms)
      run on the slice's positions; whole-sequence operands such as
      learned positions are read at the slice's offset, and
      `linalg.index` of a position loop is offset by the slice's start;
    - causal attention, recognised by its mask `index(key) <= index(query)`
      (in the op or its users), reads the keys and values of slices 0..j
      concatenated (`tensor.concat`) in slice j; every op over a key loop
      runs over that prefix;
    - a sum over the sequence from zero (the loss) becomes one part per
      slice, added in slice order where it is used or returned.

    The function computes the same values; its gradients (pp-derive-backward)
    are the unsliced ones, the keys' and values' gradients of slice j
    accumulated over the slices that attend to it. Any other op reading
    the sequence is an error at that op.

    ```mlir
    // before, slices=2: one attention over 16 positions
    %s = linalg.generic ... ins(%q, %k : tensor<4x2x16x8xf32>, ...)
    // after: slice 1's queries over the keys of both slices
    %k01 = tensor.concat dim(2) %k0, %k1 : (...) -> tensor<4x2x16x8xf32>
    %s1 = linalg.generic ... ins(%q1, %k01 : tensor<4x2x8x8xf32>, ...)
    ```
  }];
  let options = [
    Option<"numSlices", "slices", "int64_t", "1",
           "Number of slices each sequence is cut into">,
    Option<"split", "split", "std::string", "\"uniform\"",
           "Slice lengths: uniform, or balanced (equal estimated work, "
           "later slices shorter)">,
    Option<"seqDim", "seq-dim", "unsigned", "1",
           "The sequence dimension of the data arguments">,
    Option<"function", "function", "std::string", "\"train_step\"",
           "Name of the training-step function">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PPLowerRandomSeeds : Pass<"pp-lower-random-seeds", "ModuleOp"> {
  let summary = "Give each random op of a step its own pp.random_seed";
  let description = [{
    torch-mlir draws random numbers (dropout's mask) from a counter-based
    generator over the element index, seeded from a mutable
    `ml_program.global` that every random op loads, advances and stores
    back. In a pipeline that state would advance once per call of a stage
    function, so a backward that recomputes the mask, another schedule or
    another micro-batch count would draw another one.

    This pass replaces each advanced seed by `pp.random_seed <id>`, `id`
    counting the random ops in order, and erases the global: the seed then
    depends only on the run's seed, the step, the replica, the micro-batch
    and the op. Any other use of mutable global state is an error.

    ```mlir
    // before
    %g = ml_program.global_load @global_seed : tensor<i64>
    %s = tensor.extract %g[] : tensor<i64>
    %m = arith.muli %s, %c6364136223846793005 : i64
    %next = arith.addi %m, %c1442695040888963407 : i64
    %t = tensor.insert %next into %g[] : tensor<i64>
    ml_program.global_store @global_seed = %t : tensor<i64>
    ... uses of %next
    // after
    %next = pp.random_seed 0
    ... uses of %next
    ```
  }];
  let dependentDialects = ["::mlir::pp::PPDialect"];
}

def PPDemoteF64 : Pass<"pp-demote-f64", "func::FuncOp"> {
  let summary = "Compute a model's f64 intermediates in f32";
  let description = [{
    Gives every f64 value of the function f32 type instead: scalars in
    linalg bodies, tensors of f64 elements, f64 constants (rounded to the
    nearest f32) and the function's own f64 arguments and results. The
    `arith.extf` and `arith.truncf` between f32 and f64 that are left
    converting f32 to f32 are removed.

    PyTorch's decompositions, as torch-mlir imports them, compute the
    statistics of `F.layer_norm` and `F.cross_entropy` in f64 and round the
    result to f32. pp stores, sends and differentiates f32 tensors only, so
    pp-compile runs this pass first: such a model trains in f32 throughout,
    with results that differ from PyTorch's by f32 rounding (docs/PyTorch.md).
    A `dense_resource` f64 constant (an f64 buffer of a PyTorch export) is
    rounded from its blob as a literal is; one whose data the module does
    not hold is an error.

    ```mlir
    // before
    %m = linalg.generic ... ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf64>) {
    ^bb0(%in: f32, %out: f64):
      %w = arith.extf %in : f32 to f64
      %s = arith.mulf %w, %cst : f64      // %cst = arith.constant 0.125 : f64
      linalg.yield %s : f64
    } -> tensor<4x8xf64>
    // after
    %m = linalg.generic ... ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.mulf %in, %cst : f32     // %cst = arith.constant 0.125 : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32>
    ```
  }];
}

def PPDropUnusedResults : Pass<"pp-drop-unused-results", "func::FuncOp"> {
  let summary = "Erase the results of linalg ops that nothing uses";
  let description = [{
    Removes each result of a linalg op that has no use, with its `outs`
    operand and the body computations that only fed it (upstream's
    `populateEraseUnusedOperandsAndResultsPatterns`). PyTorch's `max` over
    a dimension, as torch-mlir imports the one inside `F.softmax` and
    `F.log_softmax`, also returns the index of the maximum: pp cannot
    differentiate an integer result, and the softmax never reads it, so
    pp-compile runs this pass first.

    ```mlir
    // before
    %m:2 = linalg.generic {...} ins(%x : tensor<16x4xf32>)
        outs(%max, %index : tensor<16xf32>, tensor<16xi64>) {
    ^bb0(%in: f32, %out: f32, %out_i: i64):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %v = arith.maximumf %in, %out : f32
      %gt = arith.cmpf ogt, %in, %out : f32
      %i = arith.select %gt, %ji, %out_i : i64
      linalg.yield %v, %i : f32, i64
    } -> (tensor<16xf32>, tensor<16xi64>)      // %m#1 unused
    // after
    %m = linalg.generic {...} ins(%x : tensor<16x4xf32>)
        outs(%max : tensor<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %out : f32
      linalg.yield %v : f32
    } -> tensor<16xf32>
    ```
  }];
}

def PPFoldTransposes : Pass<"pp-fold-transposes", "func::FuncOp"> {
  let summary = "Contractions read transposed operands through their maps";
  let description = [{
    torch-mlir imports `nn.Linear`'s `x W^T` as a `linalg.transpose` of the
    weight and a `linalg.matmul`. Every contraction that reads a transpose
    (or a generic that only copies its input through a permutation) reads
    the transpose's input instead, the permutation composed into its
    indexing map; a transpose nothing else reads is then dead. The
    contraction's body is unchanged, so pp-derive-backward's linalg rule
    gives the weight's gradient in the weight's own layout, and
    pp-select-gemm passes the transposition to the GEMM as a flag: no
    transposed copy of the weight on every forward, none saved for the
    backward, and no transposed copy of its gradient.

    ```mlir
    // before
    %t = linalg.transpose ins(%w : tensor<768x256xf32>)
        outs(%e : tensor<256x768xf32>) permutation = [1, 0]
    %y = linalg.matmul ins(%x, %t : tensor<2048x256xf32>, tensor<256x768xf32>)
        outs(%z : tensor<2048x768xf32>) -> tensor<2048x768xf32>
    // after
    %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                          affine_map<(m, n, k) -> (n, k)>,
                                          affine_map<(m, n, k) -> (m, n)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<2048x256xf32>, tensor<768x256xf32>)
        outs(%z : tensor<2048x768xf32>) {...}
    ```
  }];
}

def PPLowerGathers : Pass<"pp-lower-gathers", "func::FuncOp"> {
  let summary = "Rewrite gathers in linalg bodies as one-hot sum reductions";
  let description = [{
    torch-mlir imports `F.embedding` (`nn.Embedding`) and the target pick
    of `F.cross_entropy` over class indices as a `linalg.generic` whose
    body reads a tensor defined outside it with `tensor.extract`, at an
    index computed from an integer input (a token id or a class index),
    guarded by two `cf.assert` bounds checks. Such a table is no operand,
    so neither pp-split-microbatches nor pp-derive-backward can see it.

    This pass makes the table an operand: each index computed in the body
    gets a new reduction loop over the table's dimension, and the body
    keeps the table's element where the index equals that loop, summing
    over it (a one-hot selection). Indices that are loops of the op
    (`linalg.index`) become the table's indexing map. The gradient of the
    table is then pp-derive-backward's ordinary rule: a sum over the batch
    of the result's gradient where the id matches, the scatter-add of a
    gather. The bounds checks are dropped: an id outside the table matches
    no row and gathers 0 (docs/PyTorch.md). So the pass marks each
    function argument the ids come from (through integer casts and
    reshapes) with `pp.id_bound`, the rows of the smallest table they
    index, which the compiled program declares to the runtime
    (`pprt_set_id_bound`) and the runtime checks the training data
    against. Ids that reach every gather through F.cross_entropy's
    `ignore_index` mask (elementwise `select(t != K, t, c)` with c in the
    table) may also be K: `pp.id_ignored` (`pprt_set_id_ignored`). The work grows with the size of the gathered dimension (the
    vocabulary).

    ```mlir
    // before
    %e = linalg.generic {indexing_maps = [(b, t, d) -> (b, t), (b, t, d) -> (b, t, d)],
                         iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%ids : tensor<4x6xi64>) outs(%empty : tensor<4x6x8xf32>) {
    ^bb0(%id: i64, %out: f32):
      %i = arith.index_cast %id : i64 to index
      %d = linalg.index 2 : index
      cf.assert %ok, "index must be smaller than dim size"
      %v = tensor.extract %table[%i, %d] : tensor<10x8xf32>
      linalg.yield %v : f32
    } -> tensor<4x6x8xf32>
    // after
    %e = linalg.generic {indexing_maps = [(b, t, d, v) -> (b, t), (b, t, d, v) -> (v, d),
                                          (b, t, d, v) -> (b, t, d)],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%ids, %table : tensor<4x6xi64>, tensor<10x8xf32>) outs(%zeros : tensor<4x6x8xf32>) {
    ^bb0(%id: i64, %w: f32, %out: f32):
      %i = arith.index_cast %id : i64 to index
      %v = linalg.index 3 : index
      %hit = arith.cmpi eq, %i, %v : index
      %picked = arith.select %hit, %w, %cst_0 : f32
      %sum = arith.addf %out, %picked : f32
      linalg.yield %sum : f32
    } -> tensor<4x6x8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

#endif // PP_DIALECT_PP_TRANSFORMS_IMPORT_PASSES_TD
