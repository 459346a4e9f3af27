//===- Passes.td - pp schedule passes ----------------------*- tablegen -*-===//
//
// The passes that cut a training step into stages and materialise, check and
// simulate its pipeline schedule.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULE_PASSES_TD
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PPPartitionStages : Pass<"pp-partition-stages", "ModuleOp"> {
  let summary = "Plan and cut a training step into pipeline stages";
  let description = [{
    Moves the ops of the training-step function into `num-stages`
    consecutive `pp.stage` ops. Values used by a later stage are threaded
    through the stages in between, so data only flows from stage s to
    stage s + 1 (or comes from function arguments).

    The cuts are planned: the cost model (docs/CostModel.md) estimates each
    op's FLOPs and bytes, turns them into forward (F), input-gradient (B)
    and weight-gradient (W) time on each rank's device, and a dynamic
    program picks the contiguous partition whose busiest rank is the least
    busy per micro-batch (F + B + W of its stages, plus twice the transfer
    time of each boundary it shares with another rank), among those whose
    memory fits every rank: `param-copies` times the stage's weight bytes
    plus its activation bytes times the micro-batches the `schedule` keeps
    in flight on that rank (p - r on rank r for `1f1b`, m for `gpipe`).
    With `num-ranks` below the number of stages, the schedule's placement
    decides which stages share a rank (stage s on rank s mod p for
    `interleaved-1f1b`, stages r and 2p - 1 - r for `zbv`) and a rank's
    load is the sum of its stages (a bounded search, with a remark when
    optimality is not proven). User markers (`pp.boundary`) are cuts the
    plan must make; `num-stages` may ask for more stages than the markers
    make. A cut never separates two users of one weight.

    Devices are built-in (`device=cpu`, `device=h200`, one name for every
    rank or one per rank) or read from a JSON `device-file`. When no
    partition fits the memory caps the error names the smallest caps that
    one would fit. `print-table` prints the plan: per stage its ops, FLOPs,
    F/B/W, weight and activation bytes, in-flight micro-batches and bytes
    sent on; per rank its time, memory and cap, and the bottleneck.
    `print-costs` prints the per-op costs the plan was made from as JSON.

    `recompute` decides which stages' backwards recompute their forward
    (docs/Recompute.md), marking their `pp.stage` ops `recompute`: `none`
    (the default), `all`, or `auto`, where the plan picks per stage whether
    it keeps its activations or only its inputs, so that every rank fits
    its cap at the least bottleneck, and then the least time recomputation
    adds. A recomputing stage holds its input bytes per micro-batch in
    flight, plus one micro-batch's activations while its backward runs, and
    its B grows by its F.

    `cost-file` makes the plan profile-guided: a `pp-profile-v1` file
    (docs/CostProfile.md, `pp-compile --emit=profile`) measured on the
    partition these options plan without it. The pass re-derives that
    partition, scales each op's F, B and W by measured / analytic time of
    its stage, and plans again with the calibrated costs, which the table
    shows. The profile must measure as many stages as the plan has.

    ```mlir
    // input
    %a = linalg.matmul ins(%x, %w0 : ...) outs(%f0 : ...) -> tensor<8x32xf32>
    %b = linalg.matmul ins(%a, %w1 : ...) outs(%f1 : ...) -> tensor<8x4xf32>
    // output with num-stages=2
    %s0 = pp.stage 0 (%x, %w0) : (...) -> tensor<8x32xf32> { ... }
    %s1 = pp.stage 1 (%s0, %w1) : (...) -> tensor<8x4xf32> { ... }
    ```

    With `print-table` (two stages on the default `cpu` device):

    ```
    stage rank ops       flops      F(s)       B(s)       W(s)       params(B)  acts(B)    in-flight send(B)
    0     0    0-0       3.277e+04  9.728e-07  9.728e-07  9.728e-07  1.638e+04  1024       1         1024
    1     1    1-3       3.738e+04  1.171e-06  1.171e-06  1.171e-06  1.869e+04  2176       1         0
    rank  device   time(s)      memory(B)    cap(B)
    0     cpu      5.1232e-06   33792        8.58993e+09
    1     cpu      5.7184e-06   39552        8.58993e+09  bottleneck
    bottleneck: rank 1, 5.7184e-06 s per micro-batch (F + B + W and transfers; weights x2)
    ```

    With `cost-file`, on six equal matmuls that the model cuts 3 | 3 and a
    profile of that plan measuring stage 0 at three times the model's F, B
    and W: ops 0-2 now cost 3x, and the re-plan moves op 2 to stage 1.

    ```
    stage rank ops       flops      F(s)       B(s)       W(s)       params(B)  acts(B)    in-flight send(B)
    0     0    0-1       6.554e+04  5.837e-06  5.837e-06  5.837e-06  3.277e+04  2048       1         1024
    1     1    2-5       1.311e+05  5.837e-06  5.837e-06  5.837e-06  6.554e+04  4096       1         0
    ```
  }];
  let options = [
    Option<"numStages", "num-stages", "int64_t", "0",
           "Number of stages; 0 means one more than the number of markers">,
    Option<"numRanks", "num-ranks", "int64_t", "0",
           "Number of ranks the stages are placed on; 0 means one per stage">,
    Option<"schedule", "schedule", "::mlir::pp::sched::ScheduleChoice",
           "::mlir::pp::sched::ScheduleChoice::get(\"1f1b\")",
           "Schedule whose placement and in-flight micro-batches the plan "
           "assumes">,
    Option<"numMicrobatches", "num-microbatches", "int64_t", "0",
           "Micro-batches per step; 0 takes the count pp-split-microbatches "
           "used (1 if it did not run)">,
    ListOption<"device", "device", "std::string",
               "Built-in device of every rank, or one per rank: cpu, h200 "
               "(default cpu)">,
    Option<"deviceFile", "device-file", "std::string", "\"\"",
           "JSON file describing the device of every rank or of each rank">,
    ListOption<"memoryCap", "memory-cap", "double",
               "Bytes each rank may hold, one value for every rank or one "
               "per rank; 0 (the default) takes the device's memory "
               "capacity">,
    Option<"costFile", "cost-file", "std::string", "\"\"",
           "pp-profile-v1 JSON measured on the partition these options plan "
           "without it: calibrates the per-op costs and plans again">,
    Option<"parameterCopies", "param-copies", "double", "2.0",
           "Copies of each weight a rank holds: weights and gradients (2), "
           "plus optimizer state (4 with Adam)">,
    Option<"recompute", "recompute", "::mlir::pp::RecomputePolicy",
           "::mlir::pp::RecomputePolicy::None",
           "Which stages' backwards recompute their forward",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::RecomputePolicy::None, "none",
                        "every forward saves what its backward reads"),
             clEnumValN(::mlir::pp::RecomputePolicy::All, "all",
                        "every stage keeps only its inputs"),
             clEnumValN(::mlir::pp::RecomputePolicy::Auto, "auto",
                        "the stages the plan needs to fit the memory "
                        "caps"))}]>,
    Option<"printTable", "print-table", "bool", "false",
           "Print the planned stages and ranks to stdout">,
    Option<"printCosts", "print-costs", "bool", "false",
           "Print the per-op costs the plan is made from as JSON to stdout">,
    Option<"recordCosts", "record-costs", "bool", "false",
           "Leave the planned stages' F, B, W (seconds), activation and "
           "stash (bytes) and transfer time on the module "
           "(`pp.planned_cost`), with each rank's activation budget under "
           "memory-cap (`pp.planned_activation_cap`), for pp-schedule">,
    Option<"function", "function", "std::string", "\"train_step\"",
           "Name of the training-step function">,
  ];
  let dependentDialects = ["::mlir::pp::PPDialect"];
}

def PPSplitSliceStages : Pass<"pp-split-slice-stages", "ModuleOp"> {
  let summary = "Cut each pipeline stage of a sequence-sliced step into one "
                "stage per slice";
  let description = [{
    Runs after `pp-partition-stages` on a step that `pp-split-sequence`
    computed in k sequence slices (its data pieces carry `pp.slice`). Each
    `pp.stage s` becomes k `pp.stage s {pp.slice = j}` in slice order: an
    op belongs to the latest slice it reads, and ops of no slice (weights,
    constants) are cloned into every slice that needs them. A value a slice
    reads from an earlier slice of the same stage (the keys and values
    causal attention caches, a running loss sum) becomes a result of the
    earlier slice's stage and an input of the later one, so that
    `pp-derive-backward` derives one forward and one backward per slice
    and carries the values and their gradients between them
    (`#pp.slot<carry ...>`, `#pp.slot<carry_grad ...>`). A slice may read
    another stage's values of its own slice only. Without slice marks the
    pass does nothing.

    ```mlir
    %0:2 = pp.stage 0 (%x, %w) {pp.slice = 0 : i64} ...  // slice 0: h0, kv0
    %1 = pp.stage 0 (%x, %w, %0#1) {pp.slice = 1 : i64} ... // reads kv0
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", "\"train_step\"",
           "Training-step function">,
  ];
  let dependentDialects = ["::mlir::pp::PPDialect"];
}

def PPSchedule : Pass<"pp-schedule", "ModuleOp"> {
  let summary = "Materialise a pipeline schedule";
  let description = [{
    Emits a `pp.schedule` with one `pp.rank` per rank holding the ordered
    compute actions of that rank, for p ranks and m micro-batches. Where
    the module has the derived stage functions, each action names the one
    it runs (`pp.compute forward stage 0 mb 0 @train_step_s0_forward`).

    Schedules with one stage per rank (stage s on rank s):

    - `gpipe`: all forwards, then all backwards.
    - `1f1b` (PipeDream-Flush): p - r - 1 warm-up forwards on rank r, then
      one forward, one backward.
    - `zb-h1` (Zero Bubble H1): 1F1B's memory, backwards always split, the
      weight gradients (W) deferred into the cool-down.
    - `zb-h2` (Zero Bubble H2): up to 2p - 1 micro-batches in flight, so
      that no rank idles between its first and last action once m >= 2p - 1.
    - `pipedream-2bw` (PipeDream-2BW): 1F1B's order for one step, on a
      schedule with `weight_versions = 2`: every stage keeps two weight
      versions and the update is delayed one step, W(t + 1) = W(t) -
      lr * grad(W(t - 1)), so the steps run back to back without a
      flush: the warm-up forwards are `first_step`, and the cool-down's
      backwards each follow a `next_step` forward of the next step. Needs
      m >= p; the remark gives the steady state's time per step and
      bubble. See docs/PipeDream2BW.md.

    Schedules with v = num-stages / num-ranks stages per rank, stage s on
    rank s mod p:

    - `interleaved-1f1b` (Megatron-LM): depth first in groups of p
      micro-batches, 2(p - r - 1) + (v - 1)p warm-up forwards on rank r;
      needs v >= 2 and m a multiple of p.
    - `looped-bfs` (breadth first): every micro-batch through one local
      stage before the next, then the backwards in reverse.
    - `interleaved-zb` (PyTorch ScheduleInterleavedZeroBubble, in its exact
      order): interleaved 1F1B's depth-first rounds, of m / max(1, m / p)
      micro-batches, with backwards split, (v - 1)m / rounds + p - 1 - r
      warm-up forwards on rank r and its W's deferred r steps behind its
      B's; needs m a multiple of its rounds, as PyTorch does. With m >= p
      only the p - 1 units of start-up idle. See docs/InterleavedZB.md.

    V-shaped schedules, with exactly two stages per rank, stages r and
    2p - 1 - r on rank r, and backwards split (`dualpipev` splits only
    those whose W it defers). Memory is counted in
    one micro-batch's activations of one chunk (half a stage), time in unit
    costs:

    - `zbv` (Zero Bubble V, PyTorch ScheduleZBVZeroBubble): no bubble but
      the p - 1 units of start-up once m >= 2p - 1, at 1F1B's peak of 2p
      chunks.
    - `v-half`, `v-min` (Pipeline Parallelism with Controllable Memory):
      at most p + 2 and 2(p + 4) / 3 chunks per rank, about a half and a
      third of 1F1B's; each is the faster under unit costs of the paper's
      building block repeated every 6 slots and a greedy schedule under that
      limit (backwards first, forwards while they fit, W's in the gaps).
    - `dualpipev` (DeepSeek's DualPipeV, DualPipe cut in half): chunk-0
      warm-up forwards, chunk-0/chunk-1 forward pairs, B1 W1 F1 steps, a
      steady state that runs each chunk's forward next to the other
      chunk's whole backward (F then BW, for a runtime to overlap them),
      then a cool-down whose deferred W's fill the bubbles. Needs m >= 2p;
      `zbv`'s p - 1 units of start-up at 2p + 1 chunks.

    Wave-shaped, with 2W stages per rank for W waves (`num-stages` =
    2W `num-ranks`): stage s of chunk c = s / p on rank s mod p where c is
    even (down the ranks), p - 1 - s mod p where c is odd (back up); W = 1
    is the V placement. See docs/Hanayo.md.

    - `hanayo` (Hanayo, SC 2023): 1F1B over the waves. The ranks run in
      lock step under unit costs; an idle rank runs a ready forward, oldest
      micro-batch first, while it holds fewer than (2W + 1)p - 1 chunk
      activations (interleaved 1F1B's peak with 2W chunks) or what its
      memory cap leaves room for, else its oldest ready backward; a
      micro-batch enters a rank only with room for all its chunks there.
      Any m >= 1; backwards fused unless `split-backward`.

    Sequence-sliced, with `slices` = k >= 2 (docs/Seq1F1B.md):

    - `seq1f1b` (Seq1F1B, the core of SlimPipe): every micro-batch cut into
      k slices along its sequence and 1F1B run over the m k slices:
      min(p - s - 2 + k, m k) warm-up slice forwards on stage s, a
      micro-batch's slices forward in order and backward in reverse. The
      schedule gets `slices = k`, indexes slice j of micro-batch i as
      `mb` i k + j and counts m k slices in `microbatches`; its `#pp.cost`
      is the cost of one slice, every time and memory of the costs above
      (which describe a whole micro-batch) divided by k (uniform slices,
      transfers of a k-th of the data). With fused backwards and no
      transfer time it takes (m k + p - 1)(F + B + W) / k and rank r holds
      at most p - r + k - 1 slices. Other schedules given `slices` are
      checked like it and fail where they break the slice order; `auto`,
      `greedy` and `exact`, which order whole micro-batches, refuse it.

    With `split-backward`, each backward is a `backward_input` (B)
    immediately followed by its `backward_weight` (W); the zero-bubble
    schedules split and place W themselves.
    The number of stages is read from the `pp.stage` functions of
    `function`. Each generated action carries a name location such as
    `"rank 1: forward stage 3 mb 2"`, fused with the location of the stage
    function it runs where the module has one, so that a diagnostic names
    the action (and points into the model); each rank is named `"rank r"`.

    Costs come from a `pp-profile-v1` file (`cost-file`, see
    docs/CostProfile.md), from the cost options, or both: each option given
    replaces that field of the file for every stage (`memory-cap=0` removes
    the file's cap). The schedule carries them as its `#pp.cost` and
    `memory_cap`. `memory-cap` (like the file's `memory_cap`) is one value
    for every rank or one per rank, for devices of different memory:
    `memory-cap=4,2,4,4` gives rank 1 half the memory of the others.
    Every schedule keeps within its ranks' caps: `1f1b` runs as many
    warm-up forwards on each rank as its cap holds (and no more than the
    rank before it, so that no two ranks wait for each other), `hanayo`,
    `greedy`, `auto` and `exact` schedule under the caps, and the other
    generators, whose order is fixed, are an error naming the rank, what it
    would hold and its cap.

    A stage whose backward recomputes its forward (`recompute`, or derived
    from a `recompute` pp.stage: its functions carry `pp.recompute`) costs
    one F more in B and holds `input-memory` (its inputs; by default its
    activation memory) per micro-batch instead of its activation memory:
    the costs above describe the stage without recomputation, and the
    schedule's `#pp.cost` carries them with it (docs/Recompute.md).

    `greedy` is a list schedule on any placement auto searches (the
    fastest of them): backwards split, each rank takes the action that can
    start first (input gradients, then forwards of later stages on ties),
    starts a micro-batch only while its memory cap leaves room for it on
    all of its stages (without a cap, as many micro-batches as there are
    stages), and runs weight gradients in time it would otherwise idle.

    `auto` searches: it evaluates every schedule above that fits the
    problem (as generated and with split backwards where that changes its
    order; `hanayo`'s waves included), with one stage per rank the eight
    variants of the Zero Bubble paper's heuristic schedule (warm-up
    forwards until the first backward returns, then one forward per stage
    and one micro-batch's backwards per round, weight gradients where a
    stage waits or needs memory; under rendezvous semantics also with
    transfers charged), and a family of greedy
    list schedules (in-flight memory bounded below the caps, weight
    gradients in idle time or as early as possible, or forwards before
    input gradients; under rendezvous semantics also with each transfer
    charged to the compute actions it joins) under the costs and
    memory caps given by the options, and keeps the fastest within every
    rank's cap. It times every candidate as the program it becomes:
    `semantics` (async by default: MPI's sends, which never block;
    rendezvous for NCCL) names the transfer semantics the schedule will
    run with, which the schedule records for the passes after it, each candidate's
    transfers are inserted and, for rendezvous, ordered into exchange
    groups as `pp-insert-transfers{semantics}` does (the scheduling
    library's `TransferOrder.h`, which the pass uses), and the program is
    timed under those semantics: the makespan `auto` reports is the one
    `pp-simulate{semantics}` reports after `pp-insert-transfers{semantics}`.
    With `async` that is the compute-only timing (each input arriving
    `comm` after it is computed). It stops as soon as a schedule meets the lower bound it
    proves over the placements it considers (each rank's work after the
    first forward can reach it; one micro-batch's forward-backward chain,
    with transfers where it changes ranks), within a relative 1e-9: the
    remark then says `proven optimal: meets the lower bound ..., gap 0.0%`.
    Otherwise a local search moves single actions of the best schedule a
    few places earlier into the idle time of its rank while that makes it
    faster and keeps every rank within its cap, and then, on problems of at
    most 3000 actions, an exact branch and bound over every schedule (split
    backward) on the placements searched (one stage per rank; otherwise
    looped and, with 2W stages per rank, Hanayo's W waves, the V for
    W = 1) looks for a faster one,
    pruning by critical-path and per-rank work bounds and by dominated
    states. When it finishes within its budget (100000 states per
    placement; small problems such as p <= 4, m <= 8 usually do) the
    schedule is optimal for those placements and the remark says `proven
    optimal by exhaustive search, ... gap 0.0%` (or, with no schedule
    within the cap, that none exists); otherwise auto reports the lower
    bound and the gap. The exact search models async transfers: under
    `semantics=rendezvous` its schedules are candidates like the others
    and prove nothing (the lower bound holds under both semantics). The greedy family and the local search have a budget
    of actions scheduled and timed (a rendezvous program counts 8 times
    its compute actions; past 100000 compute actions a rendezvous problem
    gets two greedy candidates and no local search), so that large
    problems (p = 64, m = 1024) take
    at most about 3 times 1f1b's generation time; auto is never slower
    than any other schedule here, `greedy` included, that fits the caps.
    The remark ends with the number of candidates evaluated.

    `exact` is a testing and diagnostic knob: it runs `auto`'s exact search
    alone, with no other candidate to start from, on the placements it
    searches, and fails unless the search finishes (same limits as above).
    It optimises and reports the async makespan whatever `semantics` says.
    Its mistakes are then not hidden behind a built-in or greedy schedule
    that happens to be optimal; test/e2e/auto_optimality.py checks both
    `exact` and `auto` against a brute-force oracle.

    ```mlir
    pp.schedule @train_step_schedule "gpipe" for @train_step microbatches 2
        stage_rank [0, 1] {
      pp.rank 0 {
        pp.compute forward stage 0 mb 0
        pp.compute forward stage 0 mb 1
        pp.compute backward stage 0 mb 0
        pp.compute backward stage 0 mb 1
      }
      pp.rank 1 { ... }
    }
    ```
  }];
  let options = [
    Option<"schedule", "schedule", "::mlir::pp::sched::ScheduleChoice",
           "::mlir::pp::sched::ScheduleChoice::get(\"1f1b\")",
           "Schedule to generate: auto, gpipe, 1f1b, interleaved-1f1b, "
           "looped-bfs, zb-h1, zb-h2, zbv, v-half, v-min, dualpipev, greedy, "
           "hanayo, interleaved-zb, pipedream-2bw, seq1f1b or exact (auto's "
           "exact search alone, for testing)">,
    Option<"numMicrobatches", "num-microbatches", "int64_t", "0",
           "Number of micro-batches per step; 0 takes the count "
           "pp-split-microbatches used (1 if it did not run)">,
    Option<"numStages", "num-stages", "int64_t", "0",
           "Number of stages; 0 reads it from the derived stage functions "
           "(without them, from the cost file)">,
    Option<"numRanks", "num-ranks", "int64_t", "0",
           "Number of ranks; 0 means one rank per stage">,
    Option<"splitBackward", "split-backward", "bool", "false",
           "Run each backward as backward_input then backward_weight">,
    Option<"numSlices", "slices", "int64_t", "1",
           "Sequence slices per micro-batch (seq1f1b); the costs are "
           "divided among them">,
    ListOption<"forwardCost", "forward-cost", "double",
               "Time of F per stage (one value: every stage; default 1)">,
    ListOption<"backwardInputCost", "backward-input-cost", "double",
               "Time of B per stage (default 1)">,
    ListOption<"backwardWeightCost", "backward-weight-cost", "double",
               "Time of W per stage (default 1)">,
    Option<"commCost", "comm-cost", "double",
           "std::numeric_limits<double>::quiet_NaN()",
           "Time of one activation or gradient transfer (default: the cost "
           "file's, else 0)">,
    ListOption<"activationMemory", "activation-memory", "double",
               "Activation memory one micro-batch's F holds per stage "
               "(default 1)">,
    ListOption<"stashMemory", "stash-memory", "double",
               "Part of it held after B until W per stage (default 0)">,
    ListOption<"memoryCap", "memory-cap", "double",
               "Activation memory each rank may hold: one value for every "
               "rank (0: no cap) or one per rank; the cost file's cap when "
               "absent">,
    Option<"costFile", "cost-file", "std::string", "\"\"",
           "pp-profile-v1 JSON file with the per-stage costs; the cost "
           "options above override its fields">,
    ListOption<"recompute", "recompute", "int64_t",
               "Stages whose backward recomputes their forward, besides "
               "those derived with pp.recompute">,
    ListOption<"inputMemory", "input-memory", "double",
               "Activation memory of each stage's inputs, what a "
               "recomputing stage holds per micro-batch (one value: every "
               "stage; default: its activation memory)">,
    Option<"semantics", "semantics", "::mlir::pp::TransferSemantics",
           "::mlir::pp::TransferSemantics::async",
           "Transfer semantics the schedule runs with (recorded on it, "
           "read by pp-insert-transfers, pp-verify-schedule and "
           "pp-simulate): auto and greedy time candidates as that program",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::TransferSemantics::async, "async",
                        "Sends never block (buffered, MPI)"),
             clEnumValN(::mlir::pp::TransferSemantics::rendezvous,
                        "rendezvous",
                        "A send waits for its receive (NCCL)"))}]>,
    Option<"function", "function", "std::string", "\"train_step\"",
           "Name of the training-step function">,
  ];
  let dependentDialects = ["::mlir::pp::PPDialect"];
}

def PPPlanMicrobatches : Pass<"pp-plan-microbatches", "ModuleOp"> {
  let summary = "Cut one step's samples of different lengths into micro-batches";
  let description = [{
    Reads the sample lengths of step `step` from `lengths-file` (a text
    index: one line per step, its samples' lengths in tokens separated by
    spaces or commas; `#` starts a comment), sorts them longest first and
    cuts them into micro-batches by DynaPipe's dynamic program: the cut
    whose pipeline time, (p - 1) x the slowest micro-batch + the sum of
    all, is least, every micro-batch within `memory-cap`. A micro-batch of
    r samples padded to its longest, L tokens, costs k + r x (a + b L +
    c L^2) per stage and phase, with `per-microbatch` k, `per-sample` a,
    `per-token` b and `per-token-squared` c given as F,B,W triples, and
    holds r x L x `activation-per-token` of activation memory. Without a
    per-micro-batch cost every sample is best alone. With
    `microbatch-multiple` k the cut has a multiple of k micro-batches (the
    schedule `interleaved-1f1b` needs the rank count).

    The plan goes on the module: `pp.microbatch_cost`, a `#pp.cost` with
    the micro-batches' per-(stage, micro-batch) tables, which `pp-schedule`
    schedules with when it has no cost file; `pp.microbatch_samples`, the
    step's sample indices in micro-batch order; `pp.microbatch_begin`, where
    each micro-batch starts in that list; and `pp.microbatch_length`, the
    length each is padded to. A remark compares the plan's pipeline time
    with padding every sample to the step's longest in micro-batches of as
    many samples (`padded-rows`, by default the plan's largest micro-batch's
    or as many as fit `memory-cap`).

    ```mlir
    // pp-opt --pp-plan-microbatches="lengths-file=steps.txt num-stages=2
    //   per-token=1,2,0" --pp-schedule=schedule=1f1b
    module attributes {pp.microbatch_begin = array<i64: 0, 1, 3>,
        pp.microbatch_cost = #pp.cost<..., microbatch_forward = [[...]]>,
        pp.microbatch_length = array<i64: 900, 310, 40>,
        pp.microbatch_samples = array<i64: 2, 0, 3, 1, 4>} { ... }
    ```
  }];
  let options = [
    Option<"lengthsFile", "lengths-file", "std::string", "\"\"",
           "Text index of sample lengths: one line per step">,
    Option<"step", "step", "int64_t", "0", "The step (line) to plan">,
    Option<"numStages", "num-stages", "int64_t", "0",
           "Pipeline stages (0: the derived stage functions')">,
    ListOption<"perMicrobatch", "per-microbatch", "double",
               "F,B,W time of every micro-batch, however small, on every "
               "stage">,
    ListOption<"perSample", "per-sample", "double",
               "F,B,W time per sample of every stage">,
    ListOption<"perToken", "per-token", "double",
               "F,B,W time per token of every stage">,
    ListOption<"perTokenSquared", "per-token-squared", "double",
               "F,B,W time per squared token (attention) of every stage">,
    Option<"activationPerToken", "activation-per-token", "double", "1.0",
           "Activation memory a stage holds per token of a micro-batch">,
    Option<"memoryCap", "memory-cap", "double", "0.0",
           "Activation memory one micro-batch may hold on a stage (0: none)">,
    Option<"commCost", "comm-cost", "double", "0.0",
           "Time of one activation or gradient transfer">,
    Option<"paddedRows", "padded-rows", "int64_t", "0",
           "Samples per micro-batch of the padded comparison (0: the "
           "plan's largest micro-batch)">,
    Option<"microbatchMultiple", "microbatch-multiple", "int64_t", "1",
           "The micro-batch count is a multiple of this (interleaved-1f1b "
           "needs the rank count)">,
  ];
  let dependentDialects = ["::mlir::pp::PPDialect"];
}

def PPAttachVariants : Pass<"pp-attach-variants", "ModuleOp"> {
  let summary = "Add stage functions of other shapes, one set per bucket";
  let description = [{
    Reads each module of `variants`, the same model written at another
    (rows, sequence length) bucket and scheduled with the same stages,
    ranks and micro-batches, and copies its stage functions into this
    module as shape variant 1, 2, ...: renamed with a `_v<k>` suffix and
    tagged `pp.variant = k`. With `microbatch-variants` (one entry per
    micro-batch, 0 for this module's own functions), each action of
    micro-batch mb then runs variant `microbatch-variants[mb]`'s function.
    `convert-pp-to-runtime` gives each variant its own per-micro-batch
    buffers (weights, their gradients and the loss are shared) and tells
    the runtime which variant each micro-batch runs. The variants must cut
    the model into the same stages (the same weights in each).

    ```mlir
    // pp-opt --pp-attach-variants="variants=short.mlir microbatch-variants=0,1"
    pp.schedule @s "gpipe" for @train_step microbatches 2 stage_rank [0] {
      pp.rank 0 {
        pp.compute forward stage 0 mb 0 @train_step_s0_forward
        pp.compute forward stage 0 mb 1 @train_step_s0_forward_v1
        ...
    ```
  }];
  let options = [
    ListOption<"variants", "variants", "std::string",
               "Scheduled modules of the model at other shapes">,
    ListOption<"microbatchVariants", "microbatch-variants", "int64_t",
               "The shape variant of each micro-batch (0: this module's)">,
  ];
  let dependentDialects = ["::mlir::pp::PPDialect"];
}

def PPInsertTransfers : Pass<"pp-insert-transfers", "ModuleOp"> {
  let summary = "Make every cross-rank dependency an explicit send/recv";
  let description = [{
    After each forward whose stage feeds a stage on another rank, inserts a
    `pp.send activation`; before each forward that needs one, a
    `pp.recv activation`; likewise `pp.send gradient` after each backward
    (or backward_input) and `pp.recv gradient` before it. Appends an
    `pp.optimizer_step` per stage on its rank. Dependencies between stages
    on the same rank get no transfer. An overlapped pair (a forward and the
    `overlap` backward after it) stays together: the receives of both come
    before the forward, the sends of both after the backward.

    The semantics are the option's when given, else the schedule's
    `semantics` (what pp-schedule timed it for), else async; the schedule
    records them, so that pp-verify-schedule and pp-simulate check and time
    the program that was ordered. With `semantics=rendezvous` the transfers
    are then ordered so that the ranks cannot deadlock when a send waits for its
    receive (NCCL): each is stamped with the time its send is posted in an
    async simulation with the schedule's costs, both ends move to right
    after their rank's last compute action starting before the stamp (a
    receive may so come earlier than its consumer), and the transfers
    between two compute actions become one exchange group (`grouped`, like
    NCCL group calls or `batch_isend_irecv`). `pp-verify-schedule
    {semantics=rendezvous}` proves the result. A schedule whose ranks
    deadlock even with sends that never block keeps the placement above
    and is an error. `semantics=async` stops after that placement.

    With `num-replicas` d > 1 the pipeline runs as d data-parallel replicas
    (p x d processes): the schedule records `num_replicas = d`, and each
    stage gets a `pp.all_reduce` right after its last weight-gradient action
    on its rank (W or fused backward, after that action's gradient send so
    the previous rank is never held up), where the reduction overlaps with
    the backward of the rank's other stages; the optimizer step waits for
    it. A stage that already has one (imported from PyTorch's
    `REDUCE_GRAD`) keeps it.

    With `zero=1` (ZeRO-1, the optimizer state sharded over the replicas)
    the schedule records `zero = 1`, a `pp.reduce_scatter` takes each
    all-reduce's place and a `pp.all_gather` follows each optimizer step.
    With `zero=3` (ZeRO-3, the weights sharded too) the schedule records
    `zero = 3`, the reduce-scatters stay and each stage's `pp.all_gather`
    goes before its first compute action on its rank (and the receives
    that feed it); a schedule that keeps two weight versions or does not
    flush each step is refused. `zero` takes one level per stage too
    (`zero=0,3`): each stage's collectives then follow its own level, and
    the schedule records `zero = array<i64: 0, 3>`; `zero-gather=param`
    applies to the ZeRO-3 stages.

    ```mlir
    pp.rank 0 {
      pp.compute forward stage 0 mb 0
      pp.send activation stage 0 mb 0 to 1
      pp.recv gradient stage 0 mb 0 from 1 grouped
      pp.compute backward stage 0 mb 0
      pp.all_reduce stage 0          // num-replicas=2 only
      pp.optimizer_step stage 0
    }
    ```
  }];
  let options = [
    Option<"numReplicas", "num-replicas", "int64_t", "1",
           "Data-parallel replicas of the pipeline; above 1, each stage's "
           "weight gradients are all-reduced over them">,
    ListOption<"zero", "zero", "int64_t",
           "ZeRO stage, one for every stage or one per stage (comma "
           "separated; default: the schedule's): 0 (replicated optimizer "
           "state), 1 (sharded over the replicas: reduce-scatter, update of "
           "the replica's block, all-gather) or 3 (weights sharded too: "
           "gathered before each stage's first compute)">,
    Option<"zeroGather", "zero-gather", "::mlir::pp::ZeroGather",
           "::mlir::pp::ZeroGather::Stage",
           "ZeRO-3's unit of gathering the weights, recorded on the "
           "schedule as `zero_gather`: a stage's weights once per step "
           "(default), or each param around each compute's reads of it "
           "(the stages with zero 3; needs one)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::ZeroGather::Stage, "stage",
                        "a stage's weights once per step"),
             clEnumValN(::mlir::pp::ZeroGather::Param, "param",
                        "each param around each compute's reads of it"))}]>,
    Option<"semantics", "semantics", "::mlir::pp::TransferSemantics",
           "::mlir::pp::TransferSemantics::rendezvous",
           "Order transfers for rendezvous sends (NCCL) or leave each "
           "receive right before its consumer (async); default: the "
           "schedule's `semantics`, else async. Recorded on the schedule",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::TransferSemantics::async, "async",
                        "Sends never block (buffered, MPI)"),
             clEnumValN(::mlir::pp::TransferSemantics::rendezvous,
                        "rendezvous",
                        "A send waits for its receive (NCCL)"))}]>,
  ];
}

def PPSimulate : Pass<"pp-simulate", "ModuleOp"> {
  let summary = "Simulate a schedule: makespan, bubble and peak memory";
  let description = [{
    Runs every `pp.schedule` as a discrete-event simulation with the costs
    of its `#pp.cost` (unit costs without one): each rank executes its
    actions in order, compute actions take their cost, a transfer's data
    arrives `comm` after it is sent, under the schedule's `semantics`
    (what pp-schedule timed and pp-insert-transfers ordered it for; the
    option overrides them, async when neither says). With `async` (the
    `pp-schedule-v1` contract) sends never block; with `rendezvous` (how
    NCCL point-to-point behaves) a send also waits for its receive. A
    `pp.all_reduce` takes `all-reduce-cost` (per stage; 0 by default) in
    the background and its stage's `pp.optimizer_step` waits for it, so a
    reduction hidden behind the rank's remaining backward costs nothing.
    Under ZeRO-1 (`zero = 1`) a `pp.reduce_scatter` and a `pp.all_gather`
    each take half of it, also in the background: the optimizer step waits
    for the reduce-scatter, and the step ends with the all-gather. Under
    ZeRO-3 (`zero = 3`) the all-gather comes first and the stage's compute
    actions wait for it.
    Reports
    the makespan, each rank's idle time and the bubble fraction, and each
    rank's peak activation memory as a remark, and records them on the
    schedule as `pp.makespan`, `pp.idle` and `pp.peak_memory`. A schedule
    that deadlocks is an error naming the ranks that wait for each other.
    A schedule that runs its steps without a flush (`first_step` and
    `next_step` actions, docs/PipeDream2BW.md) is simulated as a run of one
    step (its `next_step` actions skipped), then as 2 and 3 steps back to
    back: a second remark gives their time per step (`pp.steady_step`).

    On a schedule with its model (stage functions with `param` slots) a
    third remark gives each rank's static memory in bytes, the weights,
    gradients and optimizer state of its stages under `optimizer` (SGD:
    none; Adam: two f32 moments per weight, only the replica's block of
    every weight buffer under ZeRO-1), as the runtime's `--print-memory`
    prints it for the ranks of replica 0; it records the totals as
    `pp.static_memory`. Under ZeRO-3 the weights are the replica's blocks,
    ceil(n / d) of each buffer's n values, and the remark adds the whole
    weights the step gathers (counted in the totals).

    On a tensor-parallel schedule (`pp.tensor_parallel = T`, its stage
    functions partitioned by `pp-shard-stages`) a remark counts the
    `shard.all_reduce` ops of each stage function and the bytes each
    device sends in them per micro-batch, 2 (T - 1) / T of their tensors'
    bytes (a ring), and records each rank's bytes per step as
    `pp.tp_all_reduce_bytes`. The all-reduces run inside their compute
    action: with `tensor-parallel-bandwidth` (bytes per time unit) and
    `tensor-parallel-latency` each adds latency + bytes / bandwidth to it.

    With `device` or `device-file` (the cost model's devices, one for every
    rank or one per rank, docs/CostModel.md) the collectives cost what the
    devices' links make of them, in time units of `time-unit` seconds (the
    unit of the schedule's costs): the tensor-parallel all-reduces take the
    slowest rank's `link_bandwidth` and `link_latency` unless the
    tensor-parallel options are set, and a data-parallel stage's gradient
    all-reduce over d replicas takes latency + 2 (d - 1) / d x (its
    stage's local weight bytes) / bandwidth, a ring's closed form, unless
    `all-reduce-cost` is set; under ZeRO-1 its reduce-scatter and all-gather
    take half of that each.

    ```mlir
    // remark: makespan 12, bubble 25.0% (idle per rank: 3, 3),
    //         peak activation memory per rank: 2, 1
    pp.schedule @s "1f1b" for @f microbatches 3 stage_rank [0, 1]
        attributes {pp.idle = array<f64: 3.0, 3.0>, pp.makespan = 12.0 : f64,
                    pp.peak_memory = array<f64: 2.0, 1.0>} { ... }
    ```
  }];
  let options = [
    Option<"semantics", "semantics", "::mlir::pp::TransferSemantics",
           "::mlir::pp::TransferSemantics::async",
           "Transfer semantics: async (sends never block) or rendezvous; "
           "default: the schedule's `semantics`, else async",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::TransferSemantics::async, "async",
                        "Sends never block (buffered, MPI)"),
             clEnumValN(::mlir::pp::TransferSemantics::rendezvous,
                        "rendezvous",
                        "A send waits for its receive (NCCL)"))}]>,
    ListOption<"allReduceCost", "all-reduce-cost", "double",
               "Time of each stage's gradient all-reduce (one value: every "
               "stage; default 0)">,
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "Optimizer whose state the static memory counts: sgd (none) or "
           "adam (two moments per weight)">,
    Option<"tensorParallelBandwidth", "tensor-parallel-bandwidth", "double",
           "0.0",
           "Bytes per time unit a device sends in a tensor-parallel "
           "all-reduce (0: the all-reduces take no time)">,
    Option<"tensorParallelLatency", "tensor-parallel-latency", "double",
           "0.0", "Time each tensor-parallel all-reduce takes besides its "
           "bytes">,
    ListOption<"device", "device", "std::string",
               "Device of every rank, or one per rank, whose links time the "
               "collectives (cpu, h200; default: none, collectives as the "
               "options above say)">,
    Option<"deviceFile", "device-file", "std::string", "\"\"",
           "JSON device file (docs/CostModel.md) whose links time the "
           "collectives">,
    Option<"timeUnit", "time-unit", "std::string", "\"s\"",
           "What one time unit of the schedule's costs is (s, ms, us or "
           "ns), to convert the devices' seconds">,
  ];
}

def PPVerifySchedule : Pass<"pp-verify-schedule", "ModuleOp"> {
  let summary = "Check that a schedule is complete, ordered and deadlock free";
  let description = [{
    Rejects a `pp.schedule` with a diagnostic at the offending action when
    an action is missing or duplicated, runs on a rank that does not own
    its stage, comes before an action it depends on, a transfer has no
    matching partner or goes to the wrong peer, or the ranks deadlock
    (sends do not block, receives block until their send was posted).

    Every (stage, micro-batch) needs one `forward` and either one fused
    `backward` or one `backward_input` followed by one `backward_weight`.
    A dependency between stages on the same rank is an order within the
    rank; between ranks it must go through a `pp.send` after the producer
    and a `pp.recv` before the consumer, and between stages on the same
    rank it must not. Deadlock freedom is checked by running the ranks
    against each other (ScheduleTiming, linear in the number of
    actions, the same model `pp-translate` draws timelines with). All
    independent errors are reported; checks that would only repeat an
    earlier error (order after misplacement, deadlock after an unmatched
    receive) are skipped. With `semantics=rendezvous` the ranks must also
    make progress when a send waits for its receive (NCCL point-to-point).
    With a `memory_cap` on the schedule, no rank may hold more activation
    memory (in the units of its `#pp.cost`) after any action than its cap
    (the one cap, or its entry of a list of one per rank); with
    `static-memory=sgd` or `adam`, on a schedule with its model, plus the
    rank's weights, gradients and optimizer state in bytes (as
    `pp-simulate` reports them; the costs' memory unit must then be bytes,
    as in a measured profile). A
    `pp.all_reduce` must follow every weight-gradient action (W or fused
    backward) of its stage and precede its optimizer step, once per stage;
    a schedule with `num_replicas` above 1 needs one for every stage.
    A schedule that runs its steps without a flush (`first_step` and
    `next_step` actions) must repeat its `first_step` actions as its
    `next_step` ones, each after the step's own actions of its micro-batch,
    and passes these checks both as a run of one step and as 3 steps back
    to back (docs/PipeDream2BW.md).

    ```mlir
    pp.rank 1 {
      // error: 'pp.compute' op forward of stage 1 micro-batch 0 needs its
      // input from rank 0, but no 'pp.recv activation' precedes it
      pp.compute forward stage 1 mb 0
    }
    ```
  }];
  let options = [
    Option<"staticMemory", "static-memory", "std::string", "\"\"",
           "With 'sgd' or 'adam', the memory cap also counts each rank's "
           "weights, gradients and that optimizer's state in bytes (on a "
           "schedule with its model and byte costs; default: activations "
           "only)">,
    Option<"semantics", "semantics", "::mlir::pp::TransferSemantics",
           "::mlir::pp::TransferSemantics::async",
           "Also prove deadlock freedom with rendezvous transfers (a send "
           "waits for its receive) when 'rendezvous'; default: the "
           "schedule's `semantics`, else async",
           [{::llvm::cl::values(
             clEnumValN(::mlir::pp::TransferSemantics::async, "async",
                        "Sends never block (buffered, MPI)"),
             clEnumValN(::mlir::pp::TransferSemantics::rendezvous,
                        "rendezvous",
                        "A send waits for its receive (NCCL)"))}]>,
  ];
}

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULE_PASSES_TD
