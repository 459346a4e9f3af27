//===- Passes.td - pp tensor-parallel passes ---------------*- tablegen -*-===//
//
// The passes that split weights over a tensor-parallel group: the plan on
// the training step, and the partitioning of the derived stage functions.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_PASSES_TD
#define PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PPPlanTensorParallel : Pass<"pp-plan-tensor-parallel", "ModuleOp"> {
  let summary = "Choose how each weight of a training step splits over a "
                "tensor-parallel group";
  let description = [{
    Sets `pp.split` (upstream `shard` `split_axes` on the one grid axis of
    the tensor-parallel group) on the weights of the training step that
    carry none, in the style `style` names. `megatron` groups the step's
    products of an activation by a weight (rank >= 2): a product is
    column-parallel (its weight split on an output dimension, e.g.
    `[[], [0]]`) when that split, carried through parallel loops only,
    reaches one other weight product that sums over it, the row-parallel
    one (its weight split on the summed dimension, e.g. `[[0]]`). The
    columns reaching one row split alike, and 1-D weights read along the
    split (biases) split with them. So an MLP computes its hidden layer
    locally, and attention its heads (Q, K and V split by heads, the output
    projection by its heads input): one all-reduce per group in the
    forward. A weight the user annotated keeps its `pp.split`, and a group
    with one is left alone. With `tensor-parallel` > 1, a planned split
    dimension it does not divide (heads not a multiple of T) is an error
    at the product.

    A split is refused, with an error at the `linalg.index` and a note at
    the weight, when an op reading the split dimension of the product
    (through its iteration space) also reads its own iteration index
    there: upstream partitioning leaves such indices local (a causal mask
    would be silently wrong).

    With `vocabulary`, the token embedding table (a weight summed over
    one dimension against data arguments only: one-hot tokens, or ids
    compared with the loop index) splits on that vocabulary dimension, and
    every other weight product with an output dimension of the
    vocabulary's size (the head) splits on it, as Megatron-LM's
    vocabulary-parallel embedding and cross-entropy; a step without an
    embedding table is an error.

    ```mlir
    // before
    func.func @train_step(%x: tensor<8x16xf32>, %w0: tensor<16x32xf32> {pp.param},
                          %w1: tensor<32x4xf32> {pp.param}) -> tensor<f32>
    // after pp-plan-tensor-parallel{style=megatron}
    func.func @train_step(%x: tensor<8x16xf32>,
        %w0: tensor<16x32xf32> {pp.param, pp.split = [[], [0]]},
        %w1: tensor<32x4xf32> {pp.param, pp.split = [[0]]}) -> tensor<f32>
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", "\"train_step\"",
           "Training-step function">,
    Option<"style", "style", "std::string", "\"megatron\"",
           "Plan style: megatron (column then row for each pair of matrix "
           "products)">,
    Option<"tensorParallel", "tensor-parallel", "int64_t", "0",
           "Processes per tensor-parallel group; above 1, every planned "
           "split dimension must be a multiple of it">,
    Option<"vocabulary", "vocabulary", "bool", "false",
           "Also split the token embedding table and the head on the "
           "vocabulary (Megatron's vocabulary-parallel embedding and "
           "cross-entropy)">,
  ];
}

def PPPlanParallelism : Pass<"pp-plan-parallelism", "ModuleOp"> {
  let summary = "Choose tensor parallelism, pipeline stages and replicas "
                "for a number of devices";
  let description = [{
    Splits `devices` devices into tensor-parallel groups of T, pipelines of
    P stages (one per rank) and R data-parallel replicas, T x P x R =
    `devices`, for the training step `function` (its input as
    pp-partition-stages reads it). For every layout it checks that T
    divides every dimension Megatron's plan (pp-plan-tensor-parallel, and
    the user's `pp.split`) splits, plans the P stages with the partition
    planner on the cost model's device, times one step of `schedule` with
    the one timing model: ops that read a split weight do 1/T of their
    work, each row-parallel product all-reduces its result in the forward
    and as much in the backward (a ring over the group), and each stage's
    gradients are all-reduced over the replicas after its last backward
    (reduce-scatter and all-gather under ZeRO-1; under ZeRO-3 the
    reduce-scatter, and the stage's weights gathered before its first
    compute), on the device's `link_bandwidth` and `link_latency`; and
    counts the fullest device's weights, gradients and `optimizer` state
    (split weights 1/T, Adam's moments 1/R under ZeRO-1; under ZeRO-3 also
    the replica's 1/R block of the weights besides the whole weights it
    gathers for the step) and its in-flight activations against
    `memory-per-device` (the device's capacity by default). In a layout of
    several replicas each stage takes the first ZeRO level of `zero`
    (ascending: the less sharded, the less to communicate) under which it
    fits, or the one `fixed-zero` gives it; the stages are cut to balance
    their time with those levels, and the program of mixed levels is timed
    once. Layouts whose T, P or R differs from a nonzero `tensor-parallel`,
    `num-stages` or `num-replicas` are rejected as fixed. Every replica
    trains one batch per step, so the layout with the least step time per
    replica wins; among equally fast ones the least sharded (the least sum
    of the stages' levels), then the least memory.

    Sets `pp.parallelism = {tensor_parallel = T, stages = P, replicas = R,
    zero = array<i64: Z0, Z1, ...>, zero_gather_param = G}` on the
    training step, reports the choice as a remark (with each stage's ZeRO
    level), and with `print-table` prints every layout with its stages'
    levels, step time, memory and why it lost: T does not divide a split
    dimension, the memory does not fit (naming a stage that fits under no
    level), or slower. Nothing that fits is an error at the
    training step naming the least memory a layout needs.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", "0",
           "Devices to plan for: T x P x R of them">,
    Option<"memoryPerDevice", "memory-per-device", "double", "0.0",
           "Bytes each device may hold (0: the device's capacity)">,
    Option<"numMicrobatches", "num-microbatches", "int64_t", "0",
           "Micro-batches per step; 0 takes the count pp-split-microbatches "
           "used (1 if it did not run)">,
    Option<"schedule", "schedule", "::mlir::pp::sched::ScheduleChoice",
           "::mlir::pp::sched::ScheduleChoice::get(\"1f1b\")",
           "Schedule of the pipelines">,
    Option<"slices", "slices", "int64_t", "1",
           "Sequence slices per micro-batch the schedule runs (Seq1F1B)">,
    ListOption<"device", "device", "std::string",
               "Built-in device of every rank: cpu, h200 (default cpu)">,
    Option<"deviceFile", "device-file", "std::string", "\"\"",
           "JSON file describing the device (docs/CostModel.md)">,
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "Optimizer whose state counts: sgd (none) or adam (two moments "
           "per weight)">,
    ListOption<"zero", "zero", "int64_t",
               "ZeRO levels each stage chooses from: 0, 1 (optimizer "
               "state sharded), 3 (weights sharded too), or several, comma "
               "separated (default 0)">,
    ListOption<"fixedZero", "fixed-zero", "int64_t",
               "ZeRO level of every stage, or one per stage (then only "
               "layouts of as many stages), fixed instead of chosen from "
               "`zero`">,
    Option<"paramGathers", "param-gathers", "bool", "false",
           "Under ZeRO-3, plan the weights gathered per param too "
           "(zero-gather=param): each compute gathers the params it reads, "
           "and a device holds whole only those read at once">,
    Option<"tensorParallel", "tensor-parallel", "int64_t", "0",
           "Plan only layouts with this T (0: any)">,
    Option<"numStages", "num-stages", "int64_t", "0",
           "Plan only layouts with this P (0: any)">,
    Option<"numReplicas", "num-replicas", "int64_t", "0",
           "Plan only layouts with this R (0: any)">,
    Option<"printTable", "print-table", "bool", "false",
           "Print every layout considered to stdout">,
    Option<"function", "function", "std::string", "\"train_step\"",
           "Name of the training-step function">,
  ];
  let dependentDialects = ["::mlir::pp::PPDialect"];
}

def PPShardStages : Pass<"pp-shard-stages", "ModuleOp"> {
  let summary = "Partition the derived stage functions over a "
                "tensor-parallel group";
  let description = [{
    Rewrites every derived stage function into the code one member of a
    tensor-parallel group of `tensor-parallel` processes runs, with
    upstream `sharding-propagation` and `shard-partition` on a
    module-level `shard.grid @pp_tp(shape = T)`. Weights (and their
    gradients) split as their `pp.split` says; data, targets, activations,
    their gradients and the loss are replicated. Stage by stage, the
    forward is partitioned first, and the splits propagation chose for the
    values it saves become `pp.split` on those results: the slot sharding
    contract the backward functions must read them under (likewise for
    what backward_input stashes for backward_weight). Sequence slices'
    forwards run in slice order and their backwards in reverse, so the
    function producing a carried key, value or gradient decides its split
    before a later slice (or an earlier slice's backward) reads it; saved
    and stashed values are numbered per slice.

    Before propagation each `tensor.empty` and `linalg.fill` gets one copy
    per use and the function is canonicalized, so that a fill shared by
    split and replicated users is not gathered, and no unused
    `tensor.empty` is left (upstream partitioning crashes on one). Before
    partitioning the constants a linalg body reads from above are copied
    into it (upstream partitioning of a split reduction loses them), and
    after it every `linalg.index` of a loop that the op's operands split
    gets the start of the process's block added (upstream leaves it
    local: a vocabulary-split lookup comparing ids with it would be
    silently wrong). A replicated argument may be read split: each
    process slices its block locally.

    Located errors: an op with no sharding rule (no `ShardingInterface`)
    that handles tensors; a function that would read or produce a
    boundary value split otherwise than its contract, or read one before
    its producer is partitioned; a split dimension
    that `tensor-parallel` does not divide.
    `tensor_parallel = T` is set on the `pp.schedule`. With
    `tensor-parallel=1` the pass does nothing.

    ```mlir
    // a row-parallel product in a forward, T = 2: before
    func.func @s1_forward(%h: tensor<8x32xf32> {pp.slot = ...},
        %w: tensor<32x4xf32> {pp.slot = #pp.slot<param 8>, pp.split = [[0]]}) ...
    // after: the local half of %w, and one all-reduce of the product
    func.func @s1_forward(%h: tensor<8x32xf32> {pp.slot = ...},
        %w: tensor<16x4xf32> {pp.slot = #pp.slot<param 8>, pp.split = [[0]]}) ...
      %p = linalg.matmul ins(%hl, %w : ...)
      %s = shard.all_reduce %p on @pp_tp grid_axes = [0] : ...
    ```
  }];
  let options = [
    Option<"tensorParallel", "tensor-parallel", "int64_t", "1",
           "Processes per tensor-parallel group">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_PASSES_TD
