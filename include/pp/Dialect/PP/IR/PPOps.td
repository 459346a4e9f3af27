//===- PPOps.td - pp dialect operations --------------------*- tablegen -*-===//
//
// Stages, stage markers, schedules and the actions a schedule orders.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPOPS_TD
#define PP_DIALECT_PP_IR_PPOPS_TD

include "pp/Dialect/PP/IR/PPDialect.td"
include "pp/Dialect/PP/IR/PPAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

def PP_BoundaryOp : PP_Op<"boundary", [SameOperandsAndResultType]> {
  let summary = "user marker: a pipeline stage ends here";
  let description = [{
    An identity on its operand that tells `pp-partition-stages` to start a
    new stage after the value it marks. Markers are hard constraints: with N
    markers the model is cut into N + 1 stages.

    ```mlir
    %h = linalg.max ins(%a, %zero : ...) outs(%init : ...) -> tensor<8x32xf32>
    %cut = pp.boundary %h : tensor<8x32xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def PP_RandomSeedOp : PP_Op<"random_seed", [Pure]> {
  let summary = "the seed of one random op, per step, replica and micro-batch";
  let description = [{
    The seed a random op (dropout's mask) draws from: a hash of the run's
    `--seed`, the step, the data-parallel replica, the micro-batch the
    stage function computes and `id`, which tells the model's random ops
    apart. A forward and the backward that recomputes the op read the same
    seed, under every schedule. `pp-lower-random-seeds` puts it where
    torch-mlir advances a global seed; the runtime computes it
    (`pprt_random_seed`).

    ```mlir
    %seed = pp.random_seed 0
    ```
  }];
  let arguments = (ins I64Attr:$id);
  let results = (outs I64:$seed);
  let assemblyFormat = "$id attr-dict";
}

def PP_StageOp : PP_Op<"stage", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "one pipeline stage of a model";
  let description = [{
    A region isolated from above that computes one pipeline stage. Operands
    are the values the stage reads (activations of the previous stage, data
    and parameters); the region's arguments bind them in order, and
    `pp.yield` returns the values later stages or the loss need. The
    location of the op is the location of the first model op it holds, so
    diagnostics point at the user's model.

    With `recompute`, the stage's backward recomputes its forward from the
    stage inputs instead of reading activations the forward saved: the
    forward keeps only the inputs, and the backward costs one forward more
    (docs/Recompute.md). A recomputed stage must be free of ops that write
    memory, which would run twice.

    ```mlir
    %h = pp.stage 0 (%x, %w, %b) : (tensor<8x16xf32>, tensor<16x32xf32>,
                                     tensor<32xf32>) -> tensor<8x32xf32> {
    ^bb0(%x0: tensor<8x16xf32>, %w0: tensor<16x32xf32>, %b0: tensor<32xf32>):
      ...
      pp.yield %r : tensor<8x32xf32>
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage,
                       UnitAttr:$recompute,
                       Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $stage (`recompute` $recompute^)? ` ` `(` $inputs `)` attr-dict `:`
    functional-type($inputs, $outputs)
    $body
  }];
  let hasVerifier = 1;
}

def PP_YieldOp : PP_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"StageOp">]> {
  let summary = "returns the outputs of a stage";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// Schedule-level ops
//===----------------------------------------------------------------------===//

// The activation memory a rank may hold: one cap for every rank, or one per
// rank for devices of different memory.
def PP_MemoryCapAttr : AnyAttrOf<[F64Attr, DenseF64ArrayAttr],
    "memory cap of every rank (an f64) or of each rank (an f64 array)">;

def PP_ZeroAttr : AnyAttrOf<[I64Attr, DenseI64ArrayAttr],
    "ZeRO stage of every stage (an i64) or of each stage (an i64 array)">;

def PP_ZeroGatherUnitsAttr : AnyAttrOf<[PP_ZeroGatherAttr,
    TypedArrayAttrBase<PP_ZeroGatherAttr, "ZeRO-3 unit of each stage">],
    "ZeRO-3 unit of gathering of every stage or of each stage (an array)">;

def PP_ScheduleOp : PP_Op<"schedule", [Symbol, NoTerminator,
    SingleBlock, NoRegionArguments]> {
  let summary = "a materialised pipeline schedule";
  let description = [{
    Who runs what, in which order, on which rank. The body holds one
    `pp.rank` op per rank (ranks 0 .. n-1 in order); each holds the ordered
    actions of that rank. `stage_rank[s]` is the rank that owns stage `s`;
    `name` is the generator that produced it (`gpipe`, `1f1b`, ...) and
    `pipeline` names the model function whose stages are scheduled. The
    optional `cost` (a `#pp.cost`) says what the schedule was built for
    (unit costs when absent) and `memory_cap` bounds the activation memory
    each rank may hold, in the units of `cost`'s `activation`: one f64 for
    every rank, or an `array<f64: ...>` with one per rank for devices of
    different memory (`memory_cap = array<f64: 4.0, 2.0>`). The schedule
    describes one pipeline; `num_replicas` (when present) says it runs as
    that many data-parallel replicas, each stage's weight gradients summed
    over them by a `pp.all_reduce`. With `zero = 1` (ZeRO-1, the optimizer
    state sharded over the replicas) a `pp.reduce_scatter` takes the
    all-reduce's place and a `pp.all_gather` follows each optimizer step
    (docs/DataParallel.md); with `zero = 3` (ZeRO-3, the weights sharded
    too) the reduce-scatter stays and the `pp.all_gather` of each stage
    comes before the stage's first compute action on its rank instead;
    `zero = 0` or no `zero` is plain data parallelism. Under `zero = 3`,
    `zero_gather = #pp<zero_gather param>` says the program gathers each
    weight around each compute's reads of it rather than a stage's weights
    once per step (`#pp<zero_gather stage>`, the default when absent): the
    schedule's actions are the same, its memory and time are not. Both hold
    one value for every stage or an array with one per stage, so that each
    stage runs its own level (`zero = array<i64: 0, 3>, zero_gather =
    [#pp<zero_gather stage>, #pp<zero_gather param>]`); only a ZeRO-3 stage
    gathers per param.

    `semantics` says how the program's transfers synchronise
    (`#pp<semantics async>`: a send never blocks; `#pp<semantics
    rendezvous>`: a send also waits for its receive). pp-schedule records
    the semantics it timed its candidates under, pp-insert-transfers
    orders the transfers for it, and pp-verify-schedule and pp-simulate
    check and time the program under it, so that a schedule is timed one
    way from its choice to its simulation. A schedule without it runs with
    async transfers.

    `weight_versions = 2` (PipeDream-2BW, docs/PipeDream2BW.md) makes every
    stage keep two versions of its weights: the computes of step t, forward
    and backward of every micro-batch, read version t - 1, and the stage's
    `pp.optimizer_step` applies step t's gradients to version t, so
    W(t + 1) = W(t) - lr * grad(W(t - 1)). The forwards of step t + 1 then
    need nothing from step t's update, which is what lets a pipeline run the
    steps back to back without a flush; the schedule holds one step's order.
    It needs at least as many micro-batches as stages (so that no more than
    two versions are ever live), and every compute of a stage comes before
    the stage's optimizer step. Without it (or with 1) there is one version.

    `slices = k` (Seq1F1B, docs/Seq1F1B.md) makes the schedule run sequence
    slices: every micro-batch is cut into k slices along its sequence, the
    actions' `mb` u is slice u mod k of micro-batch u / k, and `microbatches`
    counts slices (k times the micro-batches). A stage runs the forwards of
    a micro-batch's slices in order (causal attention in slice j reads the
    keys and values of the slices before it) and their backwards in reverse
    (slice j's backward yields those keys' and values' gradients), which
    pp-verify-schedule checks. `cost` is then the cost of one slice.

    ```mlir
    pp.schedule @train_step_schedule "1f1b" for @train_step microbatches 2
        stage_rank [0, 1] {
      pp.rank 0 {
        pp.compute forward stage 0 mb 0
        pp.send activation stage 0 mb 0 to 1
        ...
      }
      pp.rank 1 { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$name,
                       FlatSymbolRefAttr:$pipeline,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_microbatches,
                       DenseI64ArrayAttr:$stage_rank,
                       OptionalAttr<PP_CostAttr>:$cost,
                       OptionalAttr<PP_MemoryCapAttr>:$memory_cap,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:
                           $num_replicas,
                       OptionalAttr<ConfinedAttr<I64Attr,
                           [IntMinValue<1>, IntMaxValue<2>]>>:$weight_versions,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:
                           $slices,
                       OptionalAttr<PP_ZeroAttr>:$zero,
                       OptionalAttr<PP_ZeroGatherUnitsAttr>:$zero_gather,
                       OptionalAttr<PP_TransferSemanticsAttr>:$semantics);
  let regions = (region SizedRegion<1>:$body);
  let builders = [
    // A schedule of one pipeline, without data-parallel replicas.
    OpBuilder<(ins "::mlir::StringAttr":$sym_name, "::mlir::StringAttr":$name,
                   "::mlir::FlatSymbolRefAttr":$pipeline,
                   "::mlir::IntegerAttr":$num_microbatches,
                   "::mlir::DenseI64ArrayAttr":$stage_rank,
                   "::mlir::pp::CostAttr":$cost,
                   "::mlir::Attribute":$memory_cap), [{
      build($_builder, $_state, sym_name, name, pipeline, num_microbatches,
            stage_rank, cost, memory_cap, /*num_replicas=*/nullptr,
            /*weight_versions=*/nullptr, /*slices=*/nullptr,
            /*zero=*/nullptr, /*zero_gather=*/nullptr,
            /*semantics=*/nullptr);
    }]>,
  ];
  let assemblyFormat = [{
    $sym_name $name `for` $pipeline `microbatches` $num_microbatches
    `stage_rank` $stage_rank attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumStages() { return getStageRank().size(); }
    int64_t getNumRanks();
    /// The costs the schedule was built for, unit costs if it has none.
    CostAttr getCostOrUnit();
    /// The activation memory `rank` may hold, none without a cap.
    std::optional<double> getRankMemoryCap(int64_t rank);
    /// How many versions of its weights each stage keeps: 1, or 2 for
    /// PipeDream-2BW's delayed update.
    int64_t getNumWeightVersions() { return getWeightVersions().value_or(1); }
    /// Sequence slices per micro-batch: 1 unless `slices` says more.
    int64_t getNumSlices() { return getSlices().value_or(1); }
    /// The ZeRO stage of `stage`: 0 (plain data parallelism), 1 or 3.
    int64_t getZeroStage(int64_t stage);
    /// The ZeRO stage of each stage.
    SmallVector<int64_t> getZeroStages();
    /// Whether some stage runs ZeRO stage `level`.
    bool hasZeroStage(int64_t level);
    /// ZeRO-3's unit of gathering for `stage`: its weights unless
    /// `zero_gather` says each param.
    ZeroGather getZeroGatherUnit(int64_t stage);
    /// Whether some stage gathers its weights per param.
    bool hasParamGathers();
    /// The transfer semantics its program runs with: `semantics`, or
    /// `fallback` when the schedule does not say.
    TransferSemantics getSemanticsOr(TransferSemantics fallback) {
      return getSemantics().value_or(fallback);
    }
    /// Records `semantics`: none for async, the default.
    void setSemanticsOrDefault(TransferSemantics semantics);
  }];
}

def PP_RankOp : PP_Op<"rank", [NoTerminator, SingleBlock, NoRegionArguments,
    HasParent<"ScheduleOp">]> {
  let summary = "the ordered actions of one rank";
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$rank);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$rank attr-dict-with-keyword $body";
}

class PP_ActionOp<string mnemonic, list<Trait> traits = []>
    : PP_Op<mnemonic, !listconcat(traits, [HasParent<"RankOp">])> {
  let hasVerifier = 1;
}

def PP_ComputeOp : PP_ActionOp<"compute",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run one phase of a stage on one micro-batch";
  let description = [{
    PyTorch's `F`, `I`, `W` and `B` actions: the forward, the input-gradient
    backward (B), the weight-gradient backward (W) or the fused backward of
    stage `stage` on micro-batch `mb`.

    ```mlir
    pp.compute backward_input stage 2 mb 5
    ```

    On a model, the action names the stage function it runs, a `func.func`
    tagged with the same `pp.stage` and `pp.phase` (as `pp-derive-backward`
    outlines them); `pp-schedule` sets it and `convert-pp-to-runtime` calls
    it. A schedule without its model (generated on an empty module, or
    imported) has none.

    ```mlir
    pp.compute forward stage 2 mb 5 @train_step_s2_forward
    ```

    `overlap` marks a backward that runs concurrently with the forward right
    before it, PyTorch's `(F;B)OVERLAP_F_B` (DualPipe's overlapped pair, on
    two streams): the simulator starts both when the rank is free, and the
    rank is busy until the later one ends. The runtime runs the pair in
    order, forward first. The backward must not need its partner's result.

    ```mlir
    pp.compute forward stage 0 mb 3
    pp.compute backward stage 3 mb 1 overlap
    ```

    In a schedule with `weight_versions = 2` that runs its steps without a
    flush (PipeDream-2BW, docs/PipeDream2BW.md), `first_step` marks an
    action that runs only in the first step of a run (the warm-up), and
    `next_step` a forward of the next step's micro-batch `mb`, run in every
    step but the last, in place of the warm-up that the next step's call
    skips; it reads that step's data and the weight version it uses. The
    transfers of such an action carry the same marker.

    ```mlir
    pp.compute forward stage 0 mb 0 first_step
    ...
    pp.compute forward stage 0 mb 0 next_step
    ```
  }];
  let arguments = (ins PP_PhaseAttr:$phase,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$stage,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$mb,
                       UnitAttr:$overlap,
                       OptionalAttr<FlatSymbolRefAttr>:$function,
                       UnitAttr:$first_step,
                       UnitAttr:$next_step);
  let assemblyFormat =
      "`` $phase `stage` $stage `mb` $mb ($function^)? (`overlap` $overlap^)? "
      "(`first_step` $first_step^)? (`next_step` $next_step^)? attr-dict";
  let extraClassDeclaration = [{
    /// The forward this backward overlaps with, or null.
    ComputeOp getOverlapPartner();
  }];
}

def PP_SendOp : PP_ActionOp<"send"> {
  let summary = "post a non-blocking send to another rank";
  let description = [{
    `activation`: the output of forward(stage, mb), sent to the rank of
    stage + 1 (PyTorch `SEND_F`). `gradient`: the input gradient computed by
    the backward of (stage, mb), sent to the rank of stage - 1 (`SEND_B`).

    ```mlir
    pp.send activation stage 0 mb 3 to 1
    ```

    `grouped` posts the transfer together with the one right before it, a
    `pp.send` or `pp.recv` (NCCL's group calls, PyTorch's
    `batch_isend_irecv`): a run of grouped transfers is one exchange group,
    all its transfers start when the rank reaches the group, and the rank
    goes on once all of them are done. Megatron's `send_forward_recv_backward`
    is a group of two:

    ```mlir
    pp.send activation stage 0 mb 3 to 1
    pp.recv gradient stage 0 mb 1 from 1 grouped
    ```
  }];
  let arguments = (ins PP_TransferKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$stage,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$mb,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$peer,
                       UnitAttr:$grouped,
                       UnitAttr:$first_step,
                       UnitAttr:$next_step);
  let assemblyFormat =
      "`` $kind `stage` $stage `mb` $mb `to` $peer (`grouped` $grouped^)? "
      "(`first_step` $first_step^)? (`next_step` $next_step^)? attr-dict";
}

def PP_RecvOp : PP_ActionOp<"recv"> {
  let summary = "block until a matching send arrives";
  let description = [{
    `activation`: the input of forward(stage, mb) from the rank of
    stage - 1 (PyTorch `RECV_F`). `gradient`: the output gradient that the
    backward of (stage, mb) needs, from the rank of stage + 1 (`RECV_B`).

    ```mlir
    pp.recv activation stage 1 mb 3 from 0
    ```

    `grouped`: posted in one exchange group with the transfer right before
    it (see `pp.send`).
  }];
  let arguments = (ins PP_TransferKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$stage,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$mb,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$peer,
                       UnitAttr:$grouped,
                       UnitAttr:$first_step,
                       UnitAttr:$next_step);
  let assemblyFormat =
      "`` $kind `stage` $stage `mb` $mb `from` $peer (`grouped` $grouped^)? "
      "(`first_step` $first_step^)? (`next_step` $next_step^)? attr-dict";
}

def PP_AllReduceOp : PP_ActionOp<"all_reduce"> {
  let summary = "sum a stage's weight gradients across data-parallel replicas";
  let description = [{
    Starts summing the accumulated weight gradients of `stage` over the
    schedule's data-parallel replicas (the same rank in every replica) and
    lets the rank go on; the stage's `pp.optimizer_step` waits for the sum.
    It comes after every weight-gradient action (W or fused backward) of its
    stage, so that it overlaps with the rest of the rank's backward.

    ```mlir
    pp.compute backward stage 1 mb 7
    pp.send gradient stage 1 mb 7 to 0
    pp.all_reduce stage 1
    ...
    pp.optimizer_step stage 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage);
  let assemblyFormat = "`stage` $stage attr-dict";
}

def PP_ReduceScatterOp : PP_ActionOp<"reduce_scatter"> {
  let summary = "ZeRO-1/3: sum a stage's weight gradients, each its block";
  let description = [{
    The `pp.all_reduce` of a schedule with `zero = 1` or 3, in its place (after
    the stage's last weight-gradient action): starts summing the stage's
    accumulated weight gradients over the data-parallel replicas, each
    replica receiving the sum of its block only (1/d of every gradient
    buffer, in flat blocks), and lets the rank go on. The stage's
    `pp.optimizer_step` waits for it and updates the replica's block of
    the weights; PyTorch's `REDUCE_GRAD` under FSDP.

    ```mlir
    pp.compute backward stage 1 mb 7
    pp.reduce_scatter stage 1
    ...
    pp.optimizer_step stage 1
    pp.all_gather stage 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage);
  let assemblyFormat = "`stage` $stage attr-dict";
}

def PP_AllGatherOp : PP_ActionOp<"all_gather"> {
  let summary = "ZeRO-1/3: gather a stage's weight blocks from the replicas";
  let description = [{
    In a schedule with `zero = 1`, right after the stage's
    `pp.optimizer_step`: every replica sends the block of the weights it
    updated to the others, so that all of them hold the whole, identical
    weights again before the next step's forward. With `zero = 3`, before
    the stage's first compute action of the step: the replicas, which keep
    only their blocks between steps, gather the whole weights, which the
    stage's optimizer step releases again. PyTorch's `UNSHARD`.

    ```mlir
    pp.optimizer_step stage 0
    pp.all_gather stage 0
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage);
  let assemblyFormat = "`stage` $stage attr-dict";
}

def PP_OptimizerStepOp : PP_ActionOp<"optimizer_step"> {
  let summary = "apply the accumulated gradients to a stage's weights";
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$stage);
  let assemblyFormat = "`stage` $stage attr-dict";
}

#endif // PP_DIALECT_PP_IR_PPOPS_TD
