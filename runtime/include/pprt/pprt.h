/* Public C ABI between pp-generated training programs and the pprt runtime. */
#ifndef PPRT_PPRT_H
#define PPRT_PPRT_H

#include "pp-abi/pprt_abi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Overview
 * --------
 * A program compiled by pp-compile is an object file that defines the two
 * entry points below and calls the pprt_* functions. It is linked against
 * libpprt.a, which provides main(), MPI and the BLAS (OpenBLAS), and run as
 *
 *   mpirun -np P ./train [--steps N] [--optimizer sgd|adam] [--lr F]
 *                        [--beta1 F] [--beta2 F] [--eps F] [--seed N]
 *                        [--timeout S] [--sequential-replicas K]
 *                        [--zero 0|1|3] [--print-memory]
 *                        [--corpus FILE] [--print-params]
 *                        [--profile FILE [--warmup N]
 *                         [--profile-clock wall|cpu]]
 *                        [--backend cpu|guarded] [--check-gradients]
 *                        [--save FILE] [--init-weights FILE]
 *                        [--first-step N]
 *
 * The world of P processes is split into P / (num_ranks * T) data-parallel
 * replicas of a num_ranks-deep pipeline whose ranks are each a group of T
 * tensor-parallel processes (T = 1 unless pprt_set_tensor_parallel says
 * otherwise): world rank = tp + T * (pipeline rank + num_ranks * replica).
 * Every `rank`/`peer` argument in this ABI is a *pipeline* rank; the
 * runtime maps it into the caller's replica and tensor-parallel index. A
 * program that declares its replica count (pprt_set_data_parallel) must
 * run on exactly num_ranks * T * num_replicas processes.
 *
 * With --sequential-replicas K every process also plays K replicas one
 * after the other in each step (accumulating their gradients, applying
 * the optimizer once), so one process can compute what K processes would:
 * the unpipelined reference of a data-parallel run.
 *
 * With --profile FILE the program runs --warmup steps (default 2), then
 * --steps measured steps, timing every stage-function call, and world rank
 * 0 writes the per-stage median F, B and W times (ms), activation memory
 * (bytes) and the transfer time as a pp-profile-v1 cost profile
 * (docs/CostProfile.md), with the median step time in its "meta".
 * --profile-clock cpu times the calls in CPU time instead of wall-clock
 * time, leaving out the time a process waits for a core.
 *
 * --save FILE writes the trained weights (replica 0's) to a safetensors
 * file, named "param<index>" by model argument; --init-weights FILE starts
 * from such a file instead of the seeded init; --first-step N numbers the
 * first step N and trains it on step N's data, resuming a run saved after
 * N-1 steps (docs/Runtime.md).
 *
 * Buffers have an element type (pprt_dtype). Their storage is device
 * memory of the process's backend (--backend, env PPRT_BACKEND: "cpu",
 * host memory and OpenBLAS, the default; "guarded", a test backend whose
 * memory faults outside stage functions and the runtime's own device ops).
 * Only the stage functions touch it, between pprt_action_begin and
 * pprt_action_end, so generated code must not assume host-accessible
 * pointers beyond what its own stage functions do (docs/Runtime.md).
 *
 * ABI version: pprt_set_program's `abi_version` must be PPRT_ABI_VERSION
 * of the pprt.h the object was compiled against; the runtime refuses to
 * run an object of another version.
 *
 * Errors (unknown buffer id, micro-batch out of range, bad shapes, transfer
 * timeouts, ...) print one line "pprt: rank R: ..." to stderr and abort the
 * whole job with exit status 1.
 */

/* The buffer kinds, element types, phases, transfer kinds, PPRT_ABI_VERSION
   and PPRT_MAX_DIMS are in pp-abi/pprt_abi.h, shared with the compiler. */

/* Opaque runtime state; one per process. */
typedef struct pprt_context pprt_context;

/* ---- Entry points the generated object must define. ------------------- */

/* Calls pprt_set_program once, then pprt_define_buffer for every buffer.
   Runs once on every process before the first step. */
void pp_define_program(pprt_context *ctx);

/* Runs one training step's ordered actions for pipeline rank `rank`. */
void pp_run_step(pprt_context *ctx, int32_t rank);

/* ---- Program definition. ----------------------------------------------- */

/* Declares the pipeline shape; the first call of pp_define_program.
   `abi_version` is the PPRT_ABI_VERSION the object was compiled against:
   any other value aborts the job with a message naming both versions.
   The other arguments must be >= 1. */
void pprt_set_program(pprt_context *ctx, int32_t abi_version, int32_t num_ranks,
                      int32_t num_stages, int32_t num_microbatches);

/* Declares that the program was compiled for `num_replicas` (>= 1)
   data-parallel replicas, i.e. its schedule all-reduces every stage's
   weight gradients: the job must then run on exactly num_ranks *
   num_replicas processes, and fails at start-up otherwise. A program that
   does not call it runs with any multiple of num_ranks. Call after
   pprt_set_program. */
void pprt_set_data_parallel(pprt_context *ctx, int32_t num_replicas);

/* Declares how many versions of its weights every stage keeps: 1 (the
   default) or 2, PipeDream-2BW's double buffer. With 2, the stage functions
   of step t read version t - 1 (pprt_buffer of a PARAM) and
   pprt_optimizer_step applies step t's gradients to version t, so that
   W(t + 1) = W(t) - lr * grad(W(t - 1)) (both start as the initial weights);
   with --optimizer adam, grad(W(t - 1)) updates the moments and the
   bias-corrected step of pprt_optimizer_step goes onto W(t) to give
   W(t + 1) (one pair of moments per param; t counts its updates).
   --print-params and --save see the newest version. Checkpoints, which
   hold one version, are refused. Call after pprt_set_program. */
void pprt_set_weight_versions(pprt_context *ctx, int32_t num_versions);

/* After pprt_set_program: each pipeline rank is a group of T >= 1 processes
   running the same actions; the job runs on num_ranks*T*num_replicas
   processes, world rank = tp + T*(pipeline_rank + num_ranks*replica).
   T = 1 (no call) is today's layout. A stage's transfers pair tp index i
   with tp index i of the peer rank; the loss is the tp index 0 ranks'. */
void pprt_set_tensor_parallel(pprt_context *ctx, int32_t tensor_parallel);
/* Declares the ZeRO stage of pipeline stage `stage` (pp-compile --zero):
   the schedule reduce-scatters the gradients of a ZeRO-1 or -3 stage
   (pprt_reduce_scatter) and all-gathers its weights (pprt_all_gather:
   ZeRO-1 the updated ones, ZeRO-3 before the stage's first compute), and
   all-reduces those of a ZeRO-0 stage. A program with any ZeRO stage
   declares every stage's; an explicit --zero other than a stage's
   contradicts it and stops the run. 0, 1 and 3 are accepted. Call after
   pprt_set_program. */
void pprt_set_stage_zero(pprt_context *ctx, int32_t stage, int32_t zero);

/* Declares buffer `id` (>= 0, unique; ids index a table, so keep them
   small and dense) of `kind` owned by `stage`, with elements of `dtype`
   (a pprt_dtype) and shape `dims[0..ndims)`, 0 <= ndims <= PPRT_MAX_DIMS
   (`dims` may be NULL when ndims is 0); the runtime copies the dims.
   For PARAM, PARAM_GRAD, INPUT and TARGET, `index` is the model argument
   index the buffer stands for; otherwise it is free (pass 0). Defining a
   buffer allocates nothing: storage is created on first touch, so ranks
   only pay for what they use. */
void pprt_define_buffer(pprt_context *ctx, int32_t id, int32_t kind,
                        int32_t stage, int32_t index, int32_t dtype,
                        int32_t ndims, const int64_t *dims);

/* After pprt_define_buffer(id, ...), whose dims are the LOCAL shape: the
   global tensor is `parts` blocks along `dim` (global dims[dim] =
   local*parts); tensor-parallel index i holds block i. For PARAM buffers
   (the PARAM_GRAD of the same index is split alike). Init, --init-weights,
   --save, --print-params and checkpoints see the global tensor. `dim`
   must be in [0, ndims) and `parts` must be T (checked at start-up);
   PARAM buffers without a split are replicated: every tp index holds the
   whole tensor, and they must stay identical. */
void pprt_set_buffer_split(pprt_context *ctx, int32_t id, int32_t dim,
                           int32_t parts);

/* Declares that the ids in INPUT or TARGET buffer `id` (defined before, of
   i32 or i64) index a table of `bound` (>= 1) rows, such as an embedding
   or the classes a loss picks from: ids outside [0, bound) would gather
   nothing and train silently, so the runtime refuses training data that
   holds one. Several calls keep the smallest bound. */
void pprt_set_id_bound(pprt_context *ctx, int32_t id, int64_t bound);

/* After pprt_set_id_bound(id, ...): `value`, outside the table, is
   accepted too, because the model replaces it before every gather (the
   ignore_index of a cross-entropy loss, whose targets of that value
   count for nothing). */
void pprt_set_id_ignored(pprt_context *ctx, int32_t id, int64_t value);
/* Input buffer `id` (i32/i64 [rows, positions]) holds, instead of
   token ids, each token's document index within its row or its position
   within its document (`role`, a pprt_packed_input): what a model needs to
   mask attention between the documents of a packed row. Only the
   --sample-lengths loader fills such inputs. */
void pprt_set_packed_input(pprt_context *ctx, int32_t id, int32_t role);
/* Shape variants (docs/VariableLength.md): a program may hold one set of
   stage functions per (rows, length) bucket, each with its own
   per-micro-batch buffers. pprt_set_buffer_variant says that buffer `id`
   (defined before, not persistent) belongs to variant `variant` (>= 0;
   undeclared: 0); pprt_set_microbatch_variant that micro-batch `mb` runs
   variant `variant`. A micro-batch's rows of the global batch then follow
   those of the micro-batches before it, each as many as its variant's
   data buffers have. */
void pprt_set_buffer_variant(pprt_context *ctx, int32_t id, int32_t variant);
void pprt_set_microbatch_variant(pprt_context *ctx, int32_t mb,
                                 int32_t variant);
/* Per-step plans (pp-compile --step-plans): a program with one schedule
   per distinct step plan declares, plan by plan, the variant of each of
   its micro-batches (0, 1, ... in order), then `table`: the lines of the
   length index it was planned for, the replicas, then per (line, replica)
   the plan, its micro-batches m and the samples each of them holds.
   pp_run_step calls pprt_step_plan for the running step's plan, which the
   step then loads its rows and runs its variants by. A later
   pprt_set_step_plans replaces the table (the runtime's --choose-plans). */
void pprt_set_plan_microbatch_variant(pprt_context *ctx, int32_t plan,
                                      int32_t mb, int32_t variant);
void pprt_set_step_plans(pprt_context *ctx, const int32_t *table, int32_t size);
int32_t pprt_step_plan(pprt_context *ctx);
/* Packing (pp-compile --packing): the plans' "samples" are rows of `row`
   tokens, each step's samples back to back in them (docs/VariableLength.md,
   "Packing or plans"). */
void pprt_set_packing(pprt_context *ctx, int32_t row);
/* Sequence slices (docs/Seq1F1B.md): the program's `num_microbatches` units
   are `slices` slices of each micro-batch, unit u slice u % slices of
   micro-batch u / slices, which runs variant u % slices. Every slice's
   data buffers hold the rows of its micro-batch (its stage functions take
   their positions). Call after pprt_set_program; `slices` must divide the
   unit count. */
void pprt_set_slices(pprt_context *ctx, int32_t slices);
/* The most bytes of saved buffers (pprt_define_saved) this process held
   at once so far: each forward's from its end until the phase that frees
   them, as the schedule runs them (with slices, per slice). */
int64_t pprt_peak_activation_bytes(const pprt_context *ctx);

/* Declares that the per-micro-batch buffer `id` (defined before) is what
   the forward of `stage` leaves for that stage's backward: it is held from
   a micro-batch's F until its `until` phase (PPRT_BACKWARD_INPUT,
   PPRT_BACKWARD_WEIGHT or PPRT_BACKWARD) of the same micro-batch. Only
   feeds the activation memory that --profile reports. */
void pprt_define_saved(pprt_context *ctx, int32_t id, int32_t stage,
                       int32_t until);

/* ---- Step actions. ----------------------------------------------------- */
/* `mb` selects the micro-batch slot, 0 <= mb < num_microbatches; it is
   ignored for persistent kinds (PARAM, PARAM_GRAD, LOSS_GRAD). */

/* Returns the storage of slot (id, mb) (device memory of the process's
   backend: host memory on the CPU backend), allocating it on first use. */
void *pprt_buffer(pprt_context *ctx, int32_t id, int32_t mb);

/* ZeRO-3 gathering per param (pp-compile --zero-gather=param): the stage
   functions call these around their reads of PARAM `id` instead of
   pprt_buffer. pprt_param_acquire returns the whole weights, gathering
   them from the replicas' blocks unless they are held already (the first
   time, the whole weights are the initial ones and the replica keeps its
   block of them); pprt_param_release, after the function's last read,
   frees them once every acquire is released. Collective over the
   replicas, which acquire in the same order. Without ZeRO-3 they are
   pprt_buffer and nothing. */
void *pprt_param_acquire(pprt_context *ctx, int32_t id);
void pprt_param_release(pprt_context *ctx, int32_t id);

/* Starts sending slot (id, mb) to pipeline rank `peer` and returns at once.
   `stage` is the stage that consumes the value and `kind` a
   pprt_transfer_kind; both only feed diagnostics.
   Contract: the caller must not write the slot again until the step ends
   (all sends are completed after pp_run_step returns). Runtime operations
   that write a slot (pprt_recv, pprt_accumulate, ...) wait for its
   in-flight sends themselves. */
void pprt_send(pprt_context *ctx, int32_t id, int32_t mb, int32_t peer,
               int32_t stage, int32_t kind);

/* Receives slot (id, mb) from pipeline rank `peer`, blocking until it
   arrives. Aborts the job, naming the peer, stage and micro-batch, if
   nothing arrives within the timeout (--timeout, env PPRT_TIMEOUT, default
   60 s). The wait spins, then yields the core, then sleeps in short
   backoffs, so a small message arrives within about the MPI latency. */
void pprt_recv(pprt_context *ctx, int32_t id, int32_t mb, int32_t peer,
               int32_t stage, int32_t kind);

/* Bracket an exchange group: the pp.send and pp.recv of a schedule that
   the `grouped` attribute posts together (NCCL group calls,
   batch_isend_irecv). Every send of the group is started before any of its
   receives waits, so two ranks that exchange values cannot wait for each
   other's receives. Groups do not nest, and only transfers go inside. */
void pprt_group_begin(pprt_context *ctx);
void pprt_group_end(pprt_context *ctx);

/* dst(persistent) += src(src_id, mb), element-wise; shapes must match. */
void pprt_accumulate(pprt_context *ctx, int32_t dst_id, int32_t src_id,
                     int32_t mb);

/* state(state_id) = src(src_id, mb): a forward's new value of a STATE
   buffer, which it cannot write in place as it reads the state too. */
void pprt_update_state(pprt_context *ctx, int32_t state_id, int32_t src_id,
                       int32_t mb);

/* Adds the scalar in slot (id, mb) (an f32) to this step's loss. */
void pprt_record_loss(pprt_context *ctx, int32_t id, int32_t mb);

/* Starts summing the PARAM_GRAD buffers of `stage` over the data-parallel
   group (same pipeline rank in every replica) and returns at once, so the
   reduction overlaps with the rest of the step; the stage's optimizer step
   (or the end of the step) completes it. A SUM, not a mean: each replica
   trains on its own slice of the data, like extra micro-batches, and the
   summed gradient is the gradient of the global batch's loss (the sum of
   the replicas' losses). Accumulating into a gradient of `stage` while its
   reduction is in flight, or reducing a stage twice in one step, aborts.
   Waits at most the receive timeout for the other replicas. */
void pprt_all_reduce(pprt_context *ctx, int32_t stage);

/* ZeRO-1 and -3 stages (pprt_set_stage_zero): like
   pprt_all_reduce, but each replica receives the sum of its block of every
   PARAM_GRAD buffer of `stage` only. The stage's optimizer step waits for
   it and updates the replica's block of the weights; under ZeRO-1
   pprt_all_gather then spreads the updated blocks. */
void pprt_reduce_scatter(pprt_context *ctx, int32_t stage);

/* ZeRO-1: gathers the blocks of `stage`'s weights that the replicas
   updated in the stage's optimizer step, and returns once every replica
   holds the whole weights (within the receive timeout). ZeRO-3: gathers
   the whole weights of `stage` from the blocks the replicas keep, before
   the stage's first compute of the step; its optimizer step updates the
   replica's block and frees them. */
void pprt_all_gather(pprt_context *ctx, int32_t stage);

/* Completes the stage's all-reduce, then updates the params of `stage`
   with their gradients and zeroes the gradients. --optimizer sgd (default):
   param -= lr * grad. --optimizer adam (Kingma & Ba, bias-corrected, no
   weight decay), with t the param's 1-based update count:
     m = beta1 m + (1 - beta1) grad,  v = beta2 v + (1 - beta2) grad^2,
     param -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps). */
void pprt_optimizer_step(pprt_context *ctx, int32_t stage);

/* Bracket every stage-function call of pp_run_step: `phase` is a
   pprt_phase. Only inside a bracket may host code touch buffer storage
   (the backend makes it accessible: the guarded backend opens its pages,
   an accelerator backend would synchronise), and with --profile the
   runtime times the bracket. pprt_buffer, pprt_accumulate and
   pprt_record_loss may be called inside one; brackets do not nest. */
void pprt_action_begin(pprt_context *ctx, int32_t phase, int32_t stage,
                       int32_t mb);
void pprt_action_end(pprt_context *ctx);

/* Steps without a flush (PipeDream-2BW, docs/PipeDream2BW.md): a call of
   pp_run_step for step t runs the warm-up forwards only in the run's first
   step (pprt_step_is_first != 0) and the next step's first forwards, with
   their transfers, in every step but the last (pprt_step_is_last == 0).
   Those run between pprt_set_step_offset(ctx, 1) and
   pprt_set_step_offset(ctx, 0): they read step t + 1's data and the weight
   version step t + 1 reads, and their sends may stay in flight past
   pprt_end_step of step t, which waits only for step t's own sends. With
   --sequential-replicas above 1, or on a transport whose transfers
   complete in order (NCCL), every step is both first and last, so each
   step runs flushed. */
int32_t pprt_step_is_first(const pprt_context *ctx);
int32_t pprt_step_is_last(const pprt_context *ctx);
void pprt_set_step_offset(pprt_context *ctx, int32_t offset); /* 0 or 1 */

/* ---- Queries. ---------------------------------------------------------- */

int32_t pprt_rank(const pprt_context *ctx);      /* pipeline rank */
int32_t pprt_num_ranks(const pprt_context *ctx); /* pipeline depth */
/* The data-parallel replica whose data the current step pass computes on
   (with --sequential-replicas K, process replica * K + pass), and the
   number of replicas, K times the process replicas. */
int32_t pprt_replica(const pprt_context *ctx);
int32_t pprt_num_replicas(const pprt_context *ctx);
int32_t pprt_num_microbatches(const pprt_context *ctx);
/* 0-based; inside the next step's actions of a no-flush call, that step. */
int64_t pprt_step(const pprt_context *ctx);

/* ---- Stage-code kernels. ----------------------------------------------- */

/*
 * Batched GEMM called from stage functions, implemented by the process's
 * backend (a BLAS on CPUs, cuBLAS on GPUs). For every p < batch:
 *
 *   C_p = alpha * op(A_p) * op(B_p) + beta * C_p
 *
 * with X_p = X + p * stride_x elements, all matrices row-major with row
 * strides lda, ldb, ldc (elements, unit column stride), op(A_p) m x k,
 * op(B_p) k x n and C_p m x n; op(X) is X^T when trans_x is non-zero.
 * `ab_type` is the element type of A and B, `c_type` that of C (PPRT_F32
 * or PPRT_BF16, and PPRT_F32, on CPUs; bf16 inputs accumulate in fp32).
 * Unsupported types or invalid strides abort the job with a message.
 */
void pprt_gemm(int32_t ab_type, int32_t c_type, int32_t trans_a,
               int32_t trans_b, int64_t batch, int64_t m, int64_t n, int64_t k,
               float alpha, const void *a, int64_t lda, int64_t stride_a,
               const void *b, int64_t ldb, int64_t stride_b, float beta,
               void *c, int64_t ldc, int64_t stride_c);

/* The seed of random op `id` (dropout's mask) in the running stage action:
   a hash of --seed, the step, the data-parallel replica, the micro-batch
   and `id`, so that a backward that recomputes the op draws what its
   forward drew, under any schedule. Aborts outside an action. */
int64_t pprt_random_seed(int64_t id);

/* ---- Tensor-parallel collectives. ------------------------------------- */

/* Context-free, like pprt_gemm, called by stage code inside an action:
   in-place element-wise `reduction` (a pprt_reduction: sum, max or min)
   of `count` elements of `dtype` (PPRT_F32 at least) over the calling
   process's tensor-parallel group; blocking, bounded by --timeout
   (naming the silent rank and the group); a no-op when T = 1. Every
   process of the group must make the same calls in the same order. */
void pprt_tp_all_reduce(int32_t dtype, void *buf, int64_t count,
                        int32_t reduction);
/* recv gets T*count elements: block i is tp index i's `send`. Blocking and
   bounded like pprt_tp_all_reduce; a copy when T = 1. */
void pprt_tp_all_gather(int32_t dtype, const void *send, void *recv,
                        int64_t count);
/* This process's index in its tensor-parallel group, 0..T-1 (0 before the
   job has started). */
int32_t pprt_tp_index(void);

/* ---- Training data. ---------------------------------------------------- */

/*
 * Fills `out` (num_rows * row_size floats, row-major) with rows
 * [first_row, first_row + num_rows) of the data for model argument `index`
 * (`kind` is PPRT_INPUT or PPRT_TARGET) at 0-based `step`. Rows are global:
 * per step, replica r owns rows [r*B, (r+1)*B) of a num_replicas*B batch,
 * and micro-batch mb of a replica is its mb-th block of rows. Must return
 * the same values on every process.
 *
 * The built-in generator draws inputs from uniform(-1, 1) and targets as
 * tanh(x0 @ T), x0 being the 2-D INPUT with the lowest index and T a fixed
 * random [din, dout] "teacher" matrix (targets that do not fit this are
 * drawn like inputs).
 *
 * With --corpus FILE the runtime fills every INPUT and TARGET from the text
 * instead: both must be one-hot [rows, T, V] with V at least the number of
 * distinct bytes of the file (the vocabulary, in increasing order). Row r
 * of a step is the window of T characters at a position hashed from (seed,
 * step, r); the target holds the window's next characters. The corpus takes
 * precedence over pprt_user_load_data.
 */
void pprt_builtin_load_data(const pprt_context *ctx, int32_t kind,
                            int32_t index, int64_t step, int64_t first_row,
                            int64_t num_rows, int64_t row_size, float *out);

/* Optional user hook with the same contract. The runtime references it
   weakly: link an object defining it to replace the built-in generator
   (it may call pprt_builtin_load_data for arguments it does not handle). */
void pprt_user_load_data(const pprt_context *ctx, int32_t kind, int32_t index,
                         int64_t step, int64_t first_row, int64_t num_rows,
                         int64_t row_size, float *out);

#ifdef __cplusplus
}
#endif

#endif /* PPRT_PPRT_H */
