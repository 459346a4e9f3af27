//===- Passes.td - passes over the code of pipeline stages -*- tablegen -*-===//
//
// The rewrites the lowering pipelines (pp-lower-to-cpu, pp-lower-to-cuda)
// add to upstream passes to turn stage functions into fast code: tiling,
// vectorization, GEMM layout and static scratch. None of them reads a `pp`
// op.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_PASSES_TD
#define PP_STAGECODE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PPCopyRepeatedResults
    : Pass<"pp-copy-repeated-results", "func::FuncOp"> {
  let summary = "Give every repeated tensor result of a function its own copy";
  let description = [{
    A stage function may return one tensor twice: an activation it sends on
    and also saves for its own backward, or two input gradients that CSE
    merged. `buffer-results-to-out-params` needs a distinct buffer per
    result, so every repeat of a ranked tensor in a `func.return` after its
    first becomes a `linalg.copy` into a fresh `tensor.empty`.

    ```mlir
    // before
    return %h, %s, %h : tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>
    // after
    %e = tensor.empty() : tensor<4x3xf32>
    %c = linalg.copy ins(%h : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    return %h, %s, %c : tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PPInlineScalarResources
    : Pass<"pp-inline-scalar-resources", "func::FuncOp"> {
  let summary = "Write scalar resource constants as dense literals";
  let description = [{
    PyTorch exports hold buffers and constants as `dense_resource` blobs,
    and some exporters hold scalars so too (a
    `register_buffer("scale", torch.tensor(0.5))`; torch-mlir's FX importer
    writes one-element tensors as `dense` splats instead).
    A rank-0 constant bufferizes to a rank-0 `memref.global`, whose lowering
    to LLVM reads the value as a splat, which a resource is not (it
    aborts). This pass replaces each rank-0 `dense_resource` constant by the
    `dense` literal of its blob; larger resources stay blobs, which the
    lowering emits as they are.

    ```mlir
    // before
    %t = arith.constant dense_resource<scale> : tensor<f32>
    {-# dialect_resources: { builtin: { scale: "0x040000000000003F" } } #-}
    // after
    %t = arith.constant dense<5.000000e-01> : tensor<f32>
    ```

    A resource whose data the module does not hold, or whose data is not
    one element of its type, is an error at the constant.
  }];
}

def PPCollapseOneHot : Pass<"pp-collapse-one-hot", "func::FuncOp"> {
  let summary = "Compute one-hot sums as gathers and scatter-adds";
  let description = [{
    The front end reads a gather (an embedding lookup, `torch.gather`, the
    target pick of a cross-entropy) as a sum over the gathered dimension of
    a term that is zero except where the loop equals a computed index
    (`pp-lower-gathers`), so that every pp pass sees the table as an
    operand; the derivatives of those sums have the same form. Computed as
    written they cost a factor of the table's size (the vocabulary). This
    pass finds a `linalg.generic` whose single result is `out + term` with
    `term` provably zero unless `index == linalg.index v` (a `select` on
    that equality, or a product, negation or quotient of such a term) and
    evaluates it at that one iteration of loop `v`:

    - if the result does not depend on `v` (a gather): a generic without
      loop `v` that reads the operands indexed by `v` with `tensor.extract`
      at the computed index;
    - if it does (a scatter-add: the gradient of a table): a loop nest over
      the other loops that adds each term into its row of the result
      (`tensor.extract`, `tensor.insert` on the loop-carried tensor).

    The index is clamped into the loop's range, and the equality is kept,
    so an index outside the table still contributes zero, as in the sum.
    The work becomes that of the gathered elements, independent of the
    table's size. Runs before other stage-code rewrites, which could merge
    the sums into other ops.

    ```mlir
    // before: out[b, d] = sum_v (ids[b] == v ? w[v, d] : 0)
    %r = linalg.generic {indexing_maps = [(b, d, v) -> (b), (b, d, v) -> (v, d), (b, d, v) -> (b, d)],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%ids, %w : tensor<4xi64>, tensor<10x8xf32>) outs(%zero : tensor<4x8xf32>) {
    ^bb0(%id: i64, %e: f32, %acc: f32):
      %i = arith.index_cast %id : i64 to index
      %v = linalg.index 2 : index
      %hit = arith.cmpi eq, %i, %v : index
      %pick = arith.select %hit, %e, %c0 : f32
      %sum = arith.addf %acc, %pick : f32
      linalg.yield %sum : f32
    }
    // after: out[b, d] = w[clamp(ids[b]), d] where ids[b] is in range
    %r = linalg.generic {indexing_maps = [(b, d) -> (b), (b, d) -> (b, d)],
                         iterator_types = ["parallel", "parallel"]}
        ins(%ids : tensor<4xi64>) outs(%zero : tensor<4x8xf32>) {
    ^bb0(%id: i64, %acc: f32):
      %i = arith.index_cast %id : i64 to index
      %row = ... clamp %i into [0, 9] ...
      %d = linalg.index 1 : index
      %e = tensor.extract %w[%row, %d] : tensor<10x8xf32>
      %hit = arith.cmpi eq, %i, %row : index
      ...
    }
    ```

    `pp-lower-to-cpu` runs it unless `gathers=false`; `pp-lower-to-cuda`
    does not (a scatter-add loop nest would run on the host).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PPCloneSharedFills : Pass<"pp-clone-shared-fills", "func::FuncOp"> {
  let summary = "Give every consumer of a shared fill or empty tensor its own";
  let description = [{
    CSE leaves one `linalg.fill` of zero as the init of many reductions and
    GEMMs. One-Shot Bufferize can write only one of them into the fill's
    buffer; every other consumer gets a copy of the filled buffer, which
    costs a read and a write of the whole tensor, and hides the fill from
    `convert-gemm-to-runtime` (which folds a zero fill right before a GEMM
    into beta = 0). This pass clones a fill with several uses right before
    each of its users, so each consumer writes its own buffer in place.

    ```mlir
    // before
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %a = linalg.matmul ins(%x, %w : ...) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
    %b = linalg.matmul ins(%y, %w : ...) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
    // after
    %e0 = tensor.empty() : tensor<4x3xf32>
    %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %a = linalg.matmul ins(%x, %w : ...) outs(%z0 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %e1 = tensor.empty() : tensor<4x3xf32>
    %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %b = linalg.matmul ins(%y, %w : ...) outs(%z1 : tensor<4x3xf32>) -> tensor<4x3xf32>
    ```

    A fill is written once per consumer instead of copied, at half the
    memory traffic.

    A `tensor.empty` with several uses (CSE merges all those of one type in
    a function) gets one clone per use as well. One-Shot Bufferize puts
    every value written in place into a shared empty tensor's buffer in one
    alias set, and checks each further in-place write against all its reads
    and writes: through the empty tensors of the activations' types that
    set spans a whole stage function, and the analysis grew with the square
    of the model's depth (8.3 s for the stage functions of a 32-block GPT,
    0.5 s with one empty tensor per use: the alias sets stay within a
    layer's ops). `pp-static-scratch` shares the buffers again
    where lifetimes allow.

    The pass runs last before bufferization: CSE would merge the clones
    again.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PPFactorContractions : Pass<"pp-factor-contractions", "func::FuncOp"> {
  let summary = "Split contractions of products into GEMMs and elementwise ops";
  let description = [{
    A contraction whose body accumulates a product of more than two factors
    (`%out + %a * %b * %c / %d`: a scaled attention score, a softmax
    normalisation left inside `probs x v`, their derivatives) is neither a
    GEMM for `pp-select-gemm` nor a register tile for
    `pp-vectorize-contractions`; as scalar loops it costs as much as the
    model's GEMMs together. This pass rewrites it into one plain
    contraction `%out + %a' * %b'` and elementwise ops around it, planned on
    the loop dimensions (`planFactoring`):

    - a factor that reads only dimensions of the output, of `%a` or of `%b`
      (a scalar reads none) multiplies or divides whichever of the three is
      smallest, elementwise: before the contraction, or after it in an
      epilogue `%out + sum * factors` (the sum then goes into zeros);
    - with three or more factors that span contracted dimensions, two of
      them whose shared dimensions no other factor reads are contracted
      first into a smaller term (like an einsum path), choosing the pair
      with the smallest result.

    Only rewrites where the largest op left is a GEMM (each operand has an
    output dimension the other lacks, and they share a contracted one);
    contractions `pp-select-gemm` already takes are left alone. The sums
    are reassociated, so results agree with the original within fp32
    rounding.

    ```mlir
    // before: out[i, j] += a[i, k] * b[k, j] / s[i]
    %r = linalg.generic {indexing_maps = [#ik, #kj, #i, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b, %s : tensor<64x32xf32>, tensor<32x48xf32>, tensor<64xf32>) outs(%out : tensor<64x48xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %q = arith.divf %p, %z : f32
      %t = arith.addf %o, %q : f32
      linalg.yield %t : f32
    } -> tensor<64x48xf32>
    // after: a plain contraction into zeros, then out + sum / s[i]
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PPFuseElementwise : Pass<"pp-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse elementwise linalg ops on tensors into their consumers";
  let description = [{
    Fuses every all-parallel `linalg.generic` on tensors into its only user
    when that is a generic reading the result through a permutation of its
    loops (an elementwise op or a reduction over the same iteration space),
    with upstream linalg's elementwise fusion patterns; named elementwise
    ops (`linalg.add`, `linalg.div`, ...) are generalized first.

    A producer with other users (a value saved for the backward, a function
    result: layer norm's normalized input, softmax's shifted scores) is
    fused only when it is all-parallel and its consumer is an all-parallel
    generic over as many loops that reads it through a permutation and
    comes before every other user in the block. The fused op takes the
    consumer's place and yields the producer's result too, which the other
    users read: each element computed once, and one pass over memory less.
    Where another user comes first (a row sum of the producer before the
    op that divides by it), or the consumer reduces, it is left alone.

    Producers read through any other map (a broadcast, an input of a
    contraction) are not fused: the fused op would recompute each of their
    elements along the consumer's other loops, and contractions would no
    longer be contractions for `pp-select-gemm`. Worse, upstream fusion keeps
    the init of a producer that reads it (`%out + %x`, as the derivatives of
    `pp-derive-backward` are) as an output of the fused op, and along such
    loops every revisit accumulates into it again: the wrong gradients of
    plain `linalg-fuse-elementwise-ops` on stage code.

    One exception: a mask, a generic of one comparison into an `i1` tensor
    that reads no init (a causal mask's `%c == 0`), is fused into the
    all-parallel generic that broadcasts it (the masked fill, over batch and
    heads), which then compares its own elements. Kept apart, the mask is
    read from `i1` memory, which `pp-vectorize-elementwise` leaves scalar,
    and the masked fill with it.

    An all-parallel generic that reads its init, a `linalg.fill`, through a
    permutation reads the fill value instead, so that fusing it leaves no
    extra output. One that only adds its one input to zeros (a derivative of
    one term whose gradient comes through a reshape, which fusion does not
    cross) is replaced by that input: a pass over memory less, the same
    values but for a -0 that the sum made +0.

    ```mlir
    // before
    %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.subf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<4x5xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%d : tensor<4x5xf32>) outs(%zeros : tensor<4xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %m = arith.mulf %x, %x : f32
      %r = arith.addf %m, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    // after: one op, no 4x5 temporary
    %sum = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%a, %b : tensor<4x5xf32>, tensor<4x5xf32>) outs(%zeros : tensor<4xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %s = arith.subf %x, %y : f32
      %m = arith.mulf %s, %s : f32
      %r = arith.addf %m, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PPExpandStridedCopies
    : Pass<"pp-expand-strided-copies", "func::FuncOp"> {
  let summary = "Turn copies between strided buffers into linalg.copy";
  let description = [{
    A `memref.copy` whose source or target has a non-identity layout (a
    copy into or out of a slice) lowers to a call of `memrefCopy` from
    MLIR's C runner utilities, which pp programs do not link. This pass
    rewrites such copies to `linalg.copy`, which lowers to loops (or
    vectors); copies between dense buffers stay `memref.copy` and become
    `memcpy`.

    ```mlir
    // before
    memref.copy %src, %dst : memref<4xf32> to memref<4xf32, strided<[3], offset: ?>>
    // after
    linalg.copy ins(%src : memref<4xf32>) outs(%dst : memref<4xf32, strided<[3], offset: ?>>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PPFoldPaddedSums : Pass<"pp-fold-padded-sums", "func::FuncOp"> {
  let summary = "Sum disjoint slices padded with zeros by inserting them into one tensor";
  let description = [{
    The gradient of a tensor split into pieces (`qkv.split(dim, 2)`) is the
    sum of each piece's gradient padded with zeros to the whole: a
    `linalg.fill` of zeros per piece, a `tensor.insert_slice` into it, and
    an elementwise sum of all of them, which reads and writes every element
    of every padded copy. Where the slices are static, unit-stride and
    disjoint, that sum is the slices inserted one after another into a
    single tensor: an empty one where they cover it, else the zeros.

    It rewrites a `linalg.generic` with identity maps and parallel loops
    whose body adds each input once (with `arith.addf`) and whose inputs are
    such insertions into fills of zero of the result's type. Run it after
    `pp-fuse-elementwise`, which gathers the sum's adds into one op.

    ```mlir
    // before
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
    %a = tensor.insert_slice %ga into %z[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
    %b = tensor.insert_slice %gb into %z[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
    %g = linalg.generic {...} ins(%a, %b : ...) outs(%e : tensor<4x6xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<4x6xf32>
    // after
    %w = tensor.empty() : tensor<4x6xf32>
    %a = tensor.insert_slice %ga into %w[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
    %g = tensor.insert_slice %gb into %a[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def PPFoldGemmAdds : Pass<"pp-fold-gemm-adds", "func::FuncOp"> {
  let summary = "Accumulate library GEMMs into the tensors added to their results";
  let description = [{
    A linear layer is a GEMM into zeros and then a pass that adds the bias
    to every element of the product; a residual connection adds one more
    pass. The runtime GEMM call computes `C = A B + beta C`, with beta = 1
    where C is not a fill of zeros (`convert-gemm-to-runtime`), so an
    addend can start out as C instead: one pass writes the broadcast bias
    (or the bias plus the residual) into C and the GEMM adds the product to
    it.

    It rewrites an all-parallel `linalg.generic` whose body is one
    `arith.addf` of its two inputs when one input is the result of a
    contraction marked `pp.gemm = "library"` (by `pp-select-gemm`, so run
    it after that pass) without batch loops, read through the identity,
    directly or through one `tensor.expand_shape` or `tensor.collapse_shape`,
    and used nowhere else; the other input, X, must be defined before the
    GEMM and, behind a reshape, read through the identity too. The GEMM's C
    becomes a new generic that yields X's elements (read through the add's
    map, so a bias is broadcast) where C was a zero fill, or C's element
    plus X's otherwise, with the generic that made C fused in; the add
    goes. The sum is rounded in another order: `(b + r) + A B` instead of
    `r + (A B + b)`.

    ```mlir
    // before
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %p = linalg.matmul {pp.gemm = "library"} ins(%x, %w : ...) outs(%z : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.generic {...(i, j) -> (i, j), (i, j) -> (j), ...} ins(%p, %b : ...) outs(%e2 : ...) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    // after
    %c = linalg.generic {...(i, j) -> (j), (i, j) -> (i, j)...} ins(%b : tensor<16xf32>) outs(%e3 : tensor<8x16xf32>) {
    ^bb0(%c: f32, %o: f32):
      linalg.yield %c : f32
    } -> tensor<8x16xf32>
    %y = linalg.matmul {pp.gemm = "library"} ins(%x, %w : ...) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PPFoldResultCopies : Pass<"pp-fold-result-copies", "func::FuncOp"> {
  let summary = "Compute results that are reshapes of temporaries in their out-params";
  let description = [{
    `buffer-results-to-out-params` with `hoist-static-allocs` computes a
    result in its out-param only where the function returns the allocation
    itself; a result that reshapes one (a saved `[B*T, C]` activation
    computed as `[B, T, C]`) is a `memref.copy` into the out-param at the
    end of the function, every call. This pass computes such a result in
    its out-param instead: the allocation becomes the out-param seen through
    the inverse reshapes, and the copy goes.

    It folds a `memref.copy` into a function argument when the copy reads
    `memref.collapse_shape`s and `memref.expand_shape`s of a static
    `memref.alloc` of the same block, only copies into arguments follow it,
    and the argument has no other use and a `pp.slot` no other argument of
    the function has (so its buffer is none the function reads: writing it
    early clobbers nothing). Run it after `buffer-results-to-out-params`,
    before `pp-static-scratch`.

    ```mlir
    // before
    func.func @f(%x: memref<2x3x4xf32>, %out: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) {
      %t = memref.alloc() : memref<2x3x4xf32>
      linalg.exp ins(%x : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
      %c = memref.collapse_shape %t [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
      memref.copy %c, %out : memref<6x4xf32> to memref<6x4xf32>
      return
    }
    // after
    func.func @f(%x: memref<2x3x4xf32>, %out: memref<6x4xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}) {
      %t = memref.expand_shape %out [[0, 1], [2]] output_shape [2, 3, 4] : memref<6x4xf32> into memref<2x3x4xf32>
      linalg.exp ins(%x : memref<2x3x4xf32>) outs(%t : memref<2x3x4xf32>)
      %c = memref.collapse_shape %t [[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PPStaticScratch : Pass<"pp-static-scratch", "ModuleOp"> {
  let summary = "Place a function's fixed-size temporaries in static buffers";
  let description = [{
    Every `memref.alloc` of a static shape and identity layout in the entry
    block of a function that returns no memref becomes a `memref.get_global`
    of a private, uninitialised `memref.global`, and its `memref.dealloc` ops
    go away, so a stage call does no heap allocation and touches no new
    pages after the first step. Temporaries of the same type share a global
    when one's last use (through any view, or in a nested region) comes
    before the other's allocation, the most recently freed first (it is
    warm in cache); a buffer that reaches a call, a terminator or an op
    returning a buffer or a tensor keeps its global to itself. Run it after
    bufferization and `buffer-results-to-out-params`, before
    `buffer-deallocation-pipeline` (which then leaves the globals alone).

    The buffers persist between calls, so this is valid only for functions
    that do not run concurrently with themselves or recurse: pp's stage
    functions are called one at a time by their rank's process. Temporaries
    at most `max-stack-bytes` large go to the stack (`memref.alloca`)
    instead, where they stay in cache and cost nothing to reserve.

    ```mlir
    // before
    func.func @f_s0_forward(...) {
      %t = memref.alloc() {alignment = 64 : i64} : memref<16x64xf32>
      ...
      memref.dealloc %t : memref<16x64xf32>
    }
    // after
    memref.global "private" @__pp_scratch_f_s0_forward_0 : memref<16x64xf32> = uninitialized {alignment = 64 : i64}
    func.func @f_s0_forward(...) {
      %t = memref.get_global @__pp_scratch_f_s0_forward_0 : memref<16x64xf32>
      ...
    }
    ```
  }];
  let options = [
    Option<"maxStackBytes", "max-stack-bytes", "int64_t", "4096",
           "Temporaries of at most this many bytes go to the stack instead">,
    Option<"alignment", "alignment", "int64_t", "64",
           "Alignment of each static buffer in bytes">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PPApproximateMath : Pass<"pp-approximate-math"> {
  let summary = "Replace tanh, exp, expm1, erf and divisions by constants by "
                "cheaper arithmetic";
  let description = [{
    Rewrites the f32 transcendental functions stage code uses (`math.tanh`,
    `math.exp`, `math.expm1`, `math.erf`, and what `ops` names) with
    polynomial and rational approximations, on scalars and vectors alike:
    they lower to arithmetic the vectorizers handle instead of libm calls.
    tanh, exp and expm1 are upstream MLIR's, within a few ulp of libm. erf
    is one rational polynomial in `x * x` on `x` clamped to +-3.8325
    (Eigen's and XLA's, within 3.7e-7 of libm's erf): a clamp, 10 FMAs and
    one division, where upstream's picks each of its coefficients from
    three intervals' with about 20 selects before the same division.
    `divf` (in the defaults) makes `arith.divf %x, %c` with a constant
    divisor a multiplication by `1 / %c` where that is a normal f32, within
    about one ulp of the quotient (bitwise the same where `%c` is a power of
    two): GELU's `x / sqrt(2)`, which PyTorch computes as `x * (1 /
    sqrt(2))`.

    ```mlir
    // before
    %y = math.tanh %x : f32
    // after: a clamp, a rational polynomial in %x * %x and a select
    %c = arith.constant 7.90531110e+00 : f32
    ...
    %y = arith.select %tiny, %x, %ratio : f32
    ```
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Ops to approximate (default: tanh, exp, expm1, erf, divf)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def PPDropUnusedStageFunctions
    : Pass<"pp-drop-unused-stage-functions", "ModuleOp"> {
  let summary = "Erase the stage functions the schedule never calls";
  let description = [{
    `pp-derive-backward` outlines every phase of every stage (forward,
    fused backward, input and weight gradient), and a schedule calls only
    some of them: with fused backwards, the split B and W functions are
    dead. Once `convert-pp-to-runtime` has turned the schedule into calls,
    this pass erases every function tagged `pp.stage` that nothing
    references, which saves LLVM from optimising and emitting it (about
    half of the GPT example's code).

    ```mlir
    // before: nothing calls @f_s0_backward_weight
    func.func @f_s0_backward_weight(...) attributes {pp.stage = 0 : i64} {...}
    func.func @pp_run_step_rank0(%p: !llvm.ptr) {
      call @f_s0_backward(...)
    }
    // after: @f_s0_backward_weight is gone
    ```
  }];
}

def PPParallelizeLoopNests : Pass<"pp-parallelize-loop-nests"> {
  let summary = "The outermost parallel loop of each large nest as scf.parallel";
  let description = [{
    pp-vectorize-elementwise and pp-vectorize-contractions mark the loops
    they tile along a parallel iterator of the linalg op, outermost first
    (`parallel_iterator`). This pass turns the outermost marked `scf.for` of each
    nest into an `scf.parallel` when the nest does at least `min-work`
    element operations (its vector ops' lanes times the trip counts around
    them), so that convert-scf-to-openmp gives it to the threads of an
    `omp.parallel` while nests too small to repay a fork and join stay
    serial. Every mark is then dropped.

    ```mlir
    // before (min-work=1024): 64 x 64 lanes
    scf.for %i = %c0 to %c64 step %c1 {
      %v = vector.load %a[%i, %c0] : memref<64x64xf32>, vector<64xf32>
      vector.store %v, %b[%i, %c0] : memref<64x64xf32>, vector<64xf32>
    } {parallel_iterator}
    // after
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %v = vector.load %a[%i, %c0] : memref<64x64xf32>, vector<64xf32>
      vector.store %v, %b[%i, %c0] : memref<64x64xf32>, vector<64xf32>
    }
    ```
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"262144",
           "Element operations a nest needs to run in parallel">
  ];
  let dependentDialects = ["scf::SCFDialect"];
}

def PPOutlineLoopNests : Pass<"pp-outline-loop-nests", "ModuleOp"> {
  let summary = "Move each loop nest of stage code into a shared function";
  let description = [{
    Every op with regions at the top level of a stage function (tagged
    `pp.stage`): a linalg op, an `scf.for` nest of vector code, moves into
    a private function of its own that the stage function calls; nests
    that are the same op on the same types (the same layer norm in every
    block of a transformer) share one function. Constants the nest reads
    are copied into it; every other value it reads (buffers, scalars) is an
    argument, so nests differing only in their buffers are one function.

    A stage function is then a list of calls, and LLVM optimises each
    distinct nest once, in a function of the nest's size: compile time
    grows with the number of distinct nests plus the calls, linearly in
    the model's depth, instead of with the size of the one function that
    held every nest (LLVM's schedulers and loop passes are super-linear in
    a function's or block's size). The functions get internal linkage and
    `noinline`, so that LLVM neither merges them back into their callers
    nor keeps arguments it can drop (dead argument elimination).

    A buffer argument that no call passes overlapping another argument the
    nest writes (fresh allocations, different globals, a private global
    against a stage argument, stage arguments in different `pp.slot`s; two
    arguments the nest only reads may be the same) is marked `llvm.noalias`, which the nest had known inside its
    caller; such functions, when every buffer has a static layout, use the
    bare-pointer calling convention (`llvm.bareptr`), which keeps the
    attribute on the one pointer per buffer through convert-func-to-llvm.
    Run it before `convert-pp-to-runtime`, which replaces the stage
    functions' arguments, and their slots, by a table of buffers. The
    stage functions something refers to (the schedule's actions) are
    outlined first, so that a nest shared with a phase the schedule never
    runs is named after one it runs.

    ```mlir
    // before
    func.func @f_s0_forward(%x: memref<4x8xf32>, %y: memref<4x8xf32>,
                            %z: memref<4x8xf32>) attributes {pp.stage = 0 : i64} {
      linalg.generic {...} ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {...}
      linalg.generic {...} ins(%y : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {...}
      return
    }
    // after: both nests are the same op, so one function
    func.func @f_s0_forward(...) attributes {pp.stage = 0 : i64} {
      call @f_s0_forward_nest0(%x, %y) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
      call @f_s0_forward_nest0(%y, %z) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
      return
    }
    func.func private @f_s0_forward_nest0(%a: memref<4x8xf32>, %b: memref<4x8xf32>)
        attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]} {
      linalg.generic {...} ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>) {...}
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def PPStripAttributes : Pass<"pp-strip-attributes"> {
  let summary = "Remove pp's discardable attributes before translation";
  let description = [{
    Removes every discardable attribute whose name starts with `pp.` (the
    slot, stage and micro-batch tags of the stage functions and the runtime
    calls) from every op. They have no meaning in LLVM IR, and the LLVM IR
    translation would reject the ones it does not know.

    ```mlir
    // before
    llvm.func @f_s0_forward(%arg0: !llvm.ptr) attributes {pp.stage = 0 : i64}
    // after
    llvm.func @f_s0_forward(%arg0: !llvm.ptr)
    ```
  }];
}

def PPSelectGemm : Pass<"pp-select-gemm", "ModuleOp"> {
  let summary = "Choose which contractions become runtime GEMM calls";
  let description = [{
    Marks every f32 contraction on tensors (a `linalg.generic` computing
    `C += A * B`, or a named op of the matmul family, transposed and batch
    forms included) that one strided row-major GEMM of the runtime ABI can
    compute with the discardable attribute `pp.gemm = "library"`;
    `convert-gemm-to-runtime` turns marked ops into `pprt_gemm` calls after
    bufferization. Unused inputs are allowed. A contraction qualifies when
    `linalg::inferContractionDims` classifies every loop and its reduction
    dimensions collapse into one strided dimension of both inputs; groups of
    M, N and batch dimensions that do not collapse (for example the head
    dimension of attention's `[b, h, t, e]` outputs) become loops around the
    call.

    `gemm=generated` marks nothing, `gemm=library` marks every contraction
    that qualifies, and `gemm=auto` marks those the measured rule of
    bench/gemm_choice.md prefers: a call of at least `min-library-flops`
    floating-point operations, run at most `max-library-calls` times, and,
    with `vectorize-contractions` (the default; pp-lower-to-cpu sets it from
    its own option), a contraction that `pp-vectorize-contractions` would
    turn into FMA tiles (`isVectorizableContraction`, the predicate that
    pass uses itself) only from `min-vectorized-library-flops` per call:
    its tiles match the library on small calls (the small GPT's step is the
    same either way) and lose on large ones (the bench GPT's step is 1.5x
    the library's); the rest (for example an output whose innermost
    dimension is 1) would be scalar loops. With `batch-by-product`, a
    batched call of unscaled products counts the operations of one product
    against `min-vectorized-library-flops`, so that attention's heads
    (`Q K^T`, the scores times V and their gradients, 2 MFLOP each in the
    PyTorch GPT) become FMA tiles: they run one after another on operands
    that fit the caches, where the tiles matched or beat OpenBLAS's
    per-head calls (bench/RESULTS.md, attention_speed.py); a scaled product
    keeps the library, which takes the scale as its alpha where the tiles
    pay a multiply per FMA. It is off by default: the PyTorch GPT's step
    was not faster with it (bench/RESULTS.md, model_speed.py).

    ```mlir
    %c = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>)
                       outs(%z : tensor<64x16xf32>) -> tensor<64x16xf32>
    // becomes, with gemm=library,
    %c = linalg.matmul {pp.gemm = "library"} ins(...) outs(...)
    ```
  }];
  let options = [
    Option<"gemm", "gemm", "::mlir::pp::GemmChoice",
           "::mlir::pp::GemmChoice::Auto",
           "Which contractions become library calls",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::GemmChoice::Generated, "generated",
                        "none: MLIR generates every contraction"),
             clEnumValN(::mlir::pp::GemmChoice::Library, "library",
                        "every contraction that maps onto pprt_gemm"),
             clEnumValN(::mlir::pp::GemmChoice::Auto, "auto",
                        "those the measured rule prefers"))}]>,
    Option<"minLibraryFlops", "min-library-flops", "int64_t", "0",
           "With gemm=auto: the fewest floating-point operations per call "
           "that go to the library">,
    Option<"minVectorizedLibraryFlops", "min-vectorized-library-flops",
           "int64_t", "4000000",
           "With gemm=auto and vectorize-contractions: the fewest "
           "floating-point operations per call of a contraction the "
           "vectorizer takes that go to the library">,
    Option<"maxLibraryCalls", "max-library-calls", "int64_t", "64",
           "With gemm=auto: the most calls (iterations of the loops around "
           "the call) per op that go to the library">,
    Option<"printPlans", "print-plans", "bool", "false",
           "Emit a remark with the GEMM plan and the choice of every "
           "contraction">,
    Option<"vectorizeContractions", "vectorize-contractions", "bool", "true",
           "With gemm=auto: pp-vectorize-contractions runs later, so the "
           "contractions it vectorizes stay generated code">,
    Option<"batchByProduct", "batch-by-product", "bool", "false",
           "With gemm=auto and vectorize-contractions: a batched call of "
           "unscaled products is as large as one product (default false: as "
           "the whole batch)">,
  ];
}

def PPVectorizeContractions : Pass<"pp-vectorize-contractions"> {
  let summary = "Tile contractions on buffers into register tiles of FMAs";
  let description = [{
    Rewrites every contraction on buffers (a `linalg.generic` or named
    matmul-family op with m, n and k dimensions, any transposition, batch
    dimensions, several m or k dimensions, a body that adds into its init)
    into loops over register tiles whose body is vector FMAs, with upstream
    transforms only:

    1. named ops are generalized and inputs the body never reads dropped;
    2. loops are interchanged so the output's dimensions come first, in its
       layout order, and reductions last (`linalg::interchangeGenericOp`);
    3. an input that would be read along the vectorized loop with a stride
       (the `B` of `A B^T`, the `K` of `Q K^T`) is transposed once into a
       buffer allocated for the whole function (`memref.alloc` at its start,
       `memref.dealloc` at its end; run `pp-static-scratch` afterwards to
       avoid the heap) so every vector load is contiguous;
    4. the innermost output loop is tiled by `tile-vectors` vectors of
       `vector-bits` bits (`wide-tile-vectors`, when set, where the output's
       rows hold that many and the vectors are 512 bits or wider: AVX-512's
       32 registers hold the 16 accumulators of a 4 x 4 tile; off by
       default, not measured faster in a step yet, bench/RESULTS.md,
       attention_speed.py), the next one by `tile-rows`
       rows and every reduction by 1 (`scf::tileUsingSCF`), and each tile is
       vectorized
       (`linalg::vectorize`) into a `vector.contract` (tiles with unit batch
       or outer m dimensions into a multiply-add, which becomes one
       `vector.fma`);
    5. the accumulator's reads and writes are hoisted out of the reduction
       loops (`linalg::hoistRedundantVectorTransfers`), and the contraction
       is lowered to outer products and 1-D `vector.fma`s, with transfers
       unrolled to 1-D loads and stores.

    The vector patterns of steps 4 and 5 run function by function, in sets
    that each converge on their own (unit dimensions; folding into
    `vector.contract`; subviews folded into transfers; lowering), each with
    a bound of 64 rewrites per op of the function: patterns that undid one
    another would end in an error naming the function instead of running
    forever. The cost is linear in the size of the functions that hold
    contractions.

    Ops carrying `pp.gemm = "library"` are left to the GEMM library call;
    so are contractions whose output's innermost dimension is 1 (one-lane
    vectors would be scalar code; `pp-select-gemm{gemm=auto}` uses the same
    predicate, `isVectorizableContraction`), ops on tensors and other
    reductions. Run it after bufferization; `convert-vector-to-llvm` (or
    `convert-to-llvm`) lowers what it produces. `pp-lower-to-cpu` runs it
    (option `vectorize-contractions`, default true) with its `vector-bits`,
    which `pp-compile` takes from the target CPU's features.

    ```mlir
    linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>)
                  outs(%c : memref<64x64xf32>)
    // becomes, with vector-bits=512 tile-rows=4 tile-vectors=2:
    scf.for %i = %c0 to %c64 step %c4 {
      scf.for %j = %c0 to %c64 step %c32 {
        %c0v = vector.load %c[%i, %j] : memref<64x64xf32>, vector<32xf32>
        ...                                        // rows i+1 .. i+3
        %acc = scf.for %k = %c0 to %c32 step %c1 iter_args(%t = %init)
            -> (vector<4x32xf32>) {
          %row = vector.load %b[%k, %j] : memref<32x64xf32>, vector<32xf32>
          %a0 = vector.broadcast %a_i_k : f32 to vector<32xf32>
          %r0 = vector.fma %a0, %row, %t0 : vector<32xf32>
          ...                                      // rows i+1 .. i+3
        }
        vector.store %acc0, %c[%i, %j] : memref<64x64xf32>, vector<32xf32>
        ...
      }
    }
    ```
  }];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Width of the target's vector registers in bits (512 for "
           "AVX-512, 256 for AVX2, 128 for SSE and NEON)">,
    Option<"tileRows", "tile-rows", "int64_t", "4",
           "Rows of the register tile">,
    Option<"tileVectors", "tile-vectors", "int64_t", "2",
           "Vectors per row of the register tile">,
    Option<"wideTileVectors", "wide-tile-vectors", "int64_t", "0",
           "With vector-bits of 512 or more: vectors per row of the register "
           "tile where the output's rows hold that many (default 0: "
           "tile-vectors everywhere)">,
    Option<"packStrided", "pack-strided", "bool", "true",
           "Transpose inputs read with a stride along the vectorized loop "
           "into a buffer of the function first">,
  ];
}

def PPVectorizeElementwise : Pass<"pp-vectorize-elementwise"> {
  let summary = "Vectorize elementwise ops and reductions on buffers";
  let description = [{
    Rewrites every static linalg op on buffers that is not a contraction
    reusing an input (elementwise generics, fills, copies, broadcasts, row
    and column reductions such as softmax's max and sum, layer norm's
    statistics and weight gradients, bias gradients and the loss) into
    loops over vector tiles, with upstream
    transforms only:

    1. the vector loop is the loop along the innermost dimension of the
       op's largest operand, so that its loads and stores are contiguous;
       it is tiled by the largest power of two of at most `max-vectors`
       vectors of `vector-bits` bits that divides its extent (LLVM
       scalarizes other widths; an op whose extent is odd is left alone),
       and every other loop by 1 (`scf::tileUsingSCF`), reductions
       innermost and a reduction along the vector loop last; an
       all-parallel op that reads an input transposed (its innermost
       dimension is not the output's) is tiled by one vector along both
       loops instead, where both extents are whole vectors, so that each
       tile loads and stores whole vectors and transposes them in
       registers (`vector.transpose`, shuffles: AVX-512's 16 x 16 lowering
       at 512 bits);
    2. each tile is vectorized (`linalg::vectorize`) and its unit
       dimensions cast away;
    3. accumulator reads and writes are hoisted out of the reduction loops
       (`linalg::hoistRedundantVectorTransfers`), so a column sum's
       accumulator vector lives in a register and a row sum's scalar too;
       a column sum whose row of sums fits 16 KiB but is wider than one
       tile runs its reductions outside the vector loop instead, reading
       whole rows in sequence and adding into the row of sums in the L1
       cache (a strip at a time read a few cache lines of every row);
    4. reductions become `vector.reduction`, transposes shuffles and
       transfers 1-D loads and stores.

    Ops carrying `pp.gemm = "library"` and contractions are left alone (they
    are `pp-vectorize-contractions`' or the library's), as are ops on
    tensors and with dynamic shapes or strided operands. Run it after
    bufferization; `convert-vector-to-llvm` lowers what it produces.

    ```mlir
    // a row sum
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<8x64xf32>) outs(%s : memref<8xf32>) {...}
    // becomes, with vector-bits=512 max-vectors=4:
    scf.for %i = %c0 to %c8 step %c1 {
      %acc = vector.load %s[%i] : memref<8xf32>, vector<1xf32>
      %v = vector.load %x[%i, %c0] : memref<8x64xf32>, vector<64xf32>
      %a = vector.extract %acc[0] : f32 from vector<1xf32>
      %r = vector.reduction <add>, %v, %a : vector<64xf32> into f32
      %w = vector.insert %r, %cst [0] : f32 into vector<1xf32>
      vector.store %w, %s[%i] : memref<8xf32>, vector<1xf32>
    }
    ```
  }];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Width of the target's vector registers in bits (512 for "
           "AVX-512, 256 for AVX2, 128 for SSE and NEON)">,
    Option<"maxVectors", "max-vectors", "int64_t", "4",
           "Most registers one tile spans along the vector loop">,
    Option<"reassociate", "reassociate", "bool", "true",
           "Let LLVM reduce each tile's lanes as a tree (fastmath reassoc on "
           "the float vector.reductions) instead of one lane after the "
           "other; sums then round in a different order">,
  ];
}

def PPMapParallelLoops : Pass<"pp-map-parallel-loops", "func::FuncOp"> {
  let summary = "Tile parallel loops into GPU blocks and threads";
  let description = [{
    Prepares stage code's `scf.parallel` loops (from
    `convert-linalg-to-parallel-loops`) for `convert-parallel-loops-to-gpu`:
    every outermost parallel loop is tiled (`scf::tileParallelLoop`, with
    constant inner bounds and a guard) so that its innermost dimension,
    the contiguous one, runs on `threadIdx.x` and the next one on
    `threadIdx.y`, up to `block-size` threads per block, and the tile loop
    is mapped to the grid (`blockIdx.x` along the innermost dimension).
    Dimensions the hardware cannot index (a fourth one, or a y or z extent
    that is not a constant of at most 65535) run sequentially in each
    thread, as do nested parallel loops. Upstream `gpu-map-parallel-loops`
    maps the outermost dimension to `x` and leaves one thread per block
    when a loop is not nested, which uncoalesces every load.

    ```mlir
    // before
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {...}
    // after (block-size=256): 1x128 threads per block, a 1x64 grid
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c128) {
      scf.parallel (%ti, %tj) = (%c0, %c0) to (%c1, %c128) step (%c1, %c1) {
        ...
      } {mapping = [#gpu.loop_dim_map<processor = thread_y, ...>,
                    #gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_y, ...>,
                  #gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block (a power of two of at most 1024)">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def PPDeviceMemory : Pass<"pp-device-memory", "ModuleOp"> {
  let summary = "Give GPU stage code's temporaries and copies to the GPU runtime";
  let description = [{
    Kernels can reach only memory the GPU can address: the runtime's
    buffers (managed memory under `--backend cuda`) and what the GPU
    runtime allocates. This pass rewrites, in every function:

    - `memref.alloc` into `gpu.alloc host_shared` (managed memory that
      host code, such as `pprt_gemm`'s operands and scalar reads, can also
      reach), and `memref.dealloc` into a `gpu.dealloc` ordered on the
      stream;
    - `memref.copy` between dense buffers into a `gpu.memcpy` on the
      stream, so the copy runs on the device instead of migrating pages to
      the host.

    Stack buffers (`memref.alloca`) and globals (`memref.get_global`) are
    host memory a kernel cannot read: run this pass after bufferization
    without `pp-static-scratch`; it reports the ones that remain.

    ```mlir
    // before
    %t = memref.alloc() : memref<16x64xf32>
    memref.dealloc %t : memref<16x64xf32>
    // after
    %t = gpu.alloc host_shared () : memref<16x64xf32>
    %0 = gpu.wait async
    %1 = gpu.dealloc async [%0] %t : memref<16x64xf32>
    gpu.wait [%1]
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // PP_STAGECODE_PASSES_TD
