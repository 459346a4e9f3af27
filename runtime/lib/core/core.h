/* Runtime core state, and the tables through which a driver feeds and watches
 * it. */
#ifndef PPRT_CORE_H
#define PPRT_CORE_H

/*
 * Layers (docs/Runtime.md): the core (core/) defines the program, owns the
 * buffers and their slots, runs the step's actions and keeps the pending
 * sends and all-reduces; it never reads or writes buffer contents, which
 * live in device memory and are reached only through the backend's device
 * ops (backends/backend.h) or moved by the transport. The core calls no
 * driver: a driver (driver/ is main(): options, data, gradient check,
 * profile) installs a data source, which the core asks for initial
 * parameters and rows of data on first touch of a buffer, and an
 * observer, which it tells of steps, actions and transfers. The driver
 * reaches contents only through the device ops too, via host staging.
 */

#include "backends/backend.h"
#include "backends/transport.h"
#include "pprt/pprt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Buffer ids index a table; generated code keeps them small and dense. */
#define PPRT_MAX_BUFFERS (1 << 20)

/* One allocation of a buffer: the only slot of a persistent buffer or the
   slot of one micro-batch. */
typedef struct pprt_slot {
  void *data;           /* device memory; NULL until first touch */
  int64_t capacity;     /* bytes of `data`: a pooled one may be larger */
  int64_t data_step;    /* step whose training data `data` holds; -1 if none */
  int32_t data_replica; /* replica whose rows `data` holds */
} pprt_slot;

typedef struct pprt_buffer_desc {
  bool defined;
  int32_t kind;
  int32_t stage;
  int32_t index;
  int32_t ndims;
  int64_t dims[PPRT_MAX_DIMS];
  int64_t numel;
  int32_t dtype;     /* a pprt_dtype */
  int64_t elem_size; /* bytes per element */
  int64_t bytes;     /* numel * elem_size */
  /* INPUT/TARGET ids: the rows of the smallest table they index
     (pprt_set_id_bound); 0 if none is declared. */
  int64_t id_bound;
  /* pprt_set_id_ignored: an id past the bound the model masks out. */
  bool has_id_ignored;
  int64_t id_ignored;
  int32_t packed_input; /* a pprt_packed_input (pprt_set_packed_input) */
  /* pprt_set_buffer_split: the global tensor is `split_parts` blocks of
     these (local) dims along `split_dim`; split_parts 0 if replicated. */
  int32_t split_dim;
  int32_t split_parts;
  int32_t variant; /* pprt_set_buffer_variant; 0 by default */
  int32_t num_slots;
  pprt_slot *slots;
  /* PARAM_GRAD: the in-flight all-reduce (transport handle, -1 if none)
     and the step it was last started in (-1 if never). */
  int32_t reduce_handle;
  int64_t reduced_step;
  /* PARAM_GRAD under ZeRO-1 (core/zero.c): this replica's block of the
     summed gradient, and the gradient (then the weights) padded to a
     multiple of the replica count; NULL until needed, `padded` also when
     the length is a multiple already. */
  void *zero_shard;
  void *zero_padded;
  /* PARAM: optimizer state (Adam's m and v in device memory, NULL until
     first needed) and the number of updates applied. */
  void *moment1;
  void *moment2;
  int64_t moment_bytes;  /* of each moment: `bytes`, or the ZeRO-1 shard's */
  int32_t gather_handle; /* ZeRO-1's in-flight all-gather; -1 if none */
  /* PARAM under ZeRO-3 (core/zero3.c): this replica's block of the
     weights, all the process keeps between steps (slots[0] holds the whole
     weights from the stage's gather to its optimizer step); NULL until the
     first gather. */
  void *zero_weights;
  /* PARAM: the stage functions' pprt_param_acquire calls not yet
     released; under ZeRO-3 the whole weights go when it drops to 0. */
  int32_t holds;
  bool gather_pending; /* ZeRO-1: updated block not yet gathered */
  int64_t num_updates;
  /* PARAM with two weight versions: the older one, which the stage
     functions read (slots[0] holds the newer); NULL until first read. */
  void *older;
} pprt_buffer_desc;

/* A receive of an exchange group, started (its transport handle) and
   completed at the group's end. */
typedef struct pprt_group_recv {
  int32_t id, mb, world_peer, stage, kind;
  int32_t handle;
} pprt_group_recv;

/* A send still in flight from slot `slot` of buffer `id`; `grouped` while
   its exchange group is open. */
typedef struct pprt_pending_send {
  int32_t id;
  int32_t slot;
  int32_t world_peer;
  int32_t handle;
  bool grouped;
  int64_t step; /* the step it belongs to: the next one for a carried send */
} pprt_pending_send;

typedef enum pprt_optimizer {
  PPRT_SGD,
  PPRT_ADAM,
} pprt_optimizer;

/* A buffer the forward of `stage` holds for its backward until `until`
   (pprt_define_saved). */
typedef struct pprt_saved_buffer {
  int32_t id;
  int32_t stage;
  int32_t until; /* a pprt_phase */
} pprt_saved_buffer;

/* How the core trains, the same on every process. */
typedef struct pprt_options {
  pprt_optimizer optimizer;
  float lr;
  float beta1; /* Adam */
  float beta2;
  float eps;
  int32_t sequential_replicas; /* replicas each process plays in turn */
  double timeout_s;            /* receives and all-reduces */
  bool allow_non_finite;       /* train on past a NaN or infinite loss */
  int32_t zero;  /* ZeRO stage: 0 (replicated optimizer state) or 1; -1:
                    not given, the program's */
  uint64_t seed; /* --seed: keys pprt_random_seed */
} pprt_options;

/* Where buffer contents come from, installed by the driver
   (pprt_set_data_source); the core asks on first touch of a buffer. Every
   `out` is host memory of b->bytes bytes; `self` is the driver's state. */
typedef struct pprt_data_source {
  void *self;
  /* The initial values of PARAM or STATE `id` (of any element type for a
     STATE); for a split param `b` describes
     its global tensor (pprt_global_desc), of which the core keeps this
     process's block. */
  void (*init_param)(void *self, pprt_context *ctx, const pprt_buffer_desc *b,
                     int32_t id, void *out);
  /* The optimizer state PARAM `id` resumes with: true with its update count
     in *num_updates and, when that is positive, Adam's moments in host
     memory *m and *v (global, as for init_param); false when it starts
     fresh. NULL: always fresh. */
  bool (*param_state)(void *self, pprt_context *ctx, const pprt_buffer_desc *b,
                      int32_t id, int64_t *num_updates, const void **m,
                      const void **v);
  /* The rows [first_row, first_row + b->dims[0]) of INPUT or TARGET `id`
     at 0-based `step`, rows numbered as pprt_user_load_data's (pprt.h). */
  void (*load_rows)(void *self, pprt_context *ctx, const pprt_buffer_desc *b,
                    int32_t id, int64_t step, int64_t first_row, void *out);
} pprt_data_source;

/* What the core tells a driver that watches it (pprt_set_observer): for
   profiling and tracing. Any slot may be NULL. */
typedef struct pprt_observer {
  void *self;
  /* pprt_begin_step and pprt_end_step of 0-based `step`. */
  void (*step_begin)(void *self, pprt_context *ctx, int64_t step);
  void (*step_end)(void *self, pprt_context *ctx, int64_t step);
  /* Around a stage action's bracket (pprt_action_begin/end), outside the
     backend's own stage bracket. */
  void (*action_begin)(void *self, pprt_context *ctx, int32_t phase,
                       int32_t stage, int32_t mb);
  void (*action_end)(void *self, pprt_context *ctx, int32_t phase,
                     int32_t stage, int32_t mb);
  /* A send or receive of slot (id, mb) to or from pipeline rank `peer`,
     about to start. */
  void (*send)(void *self, pprt_context *ctx, int32_t id, int32_t mb,
               int32_t peer, int64_t bytes);
  void (*recv)(void *self, pprt_context *ctx, int32_t id, int32_t mb,
               int32_t peer, int64_t bytes);
  /* Around the parameter updates of `stage`'s optimizer step, after the
     wait for its gradients' reduction. */
  void (*update_begin)(void *self, pprt_context *ctx, int32_t stage);
  void (*update_end)(void *self, pprt_context *ctx, int32_t stage);
} pprt_observer;

struct pprt_context {
  pprt_transport *transport;
  pprt_backend *backend;
  pprt_options opts;
  pprt_data_source data;
  pprt_observer observer;
  bool in_stage; /* between pprt_action_begin and pprt_action_end */
  int32_t action_phase, action_stage, action_mb; /* the running action */
  void *staging; /* host memory for moving contents in and out */
  size_t staging_bytes;

  bool program_set;
  int32_t num_ranks;
  int32_t num_stages;
  int32_t num_microbatches;
  /* pprt_set_microbatch_variant: each micro-batch's variant; NULL while
     every micro-batch runs variant 0. */
  int32_t *microbatch_variant;
  /* Under variants, the rows of one replica's batch before micro-batch mb
     (num_microbatches + 1 entries, the last the replica's whole batch),
     computed once when the context starts. */
  int64_t *microbatch_rows_before;
  /* Per-step plans (pprt_set_step_plans): under them the two above point
     at the running step's plan's. */
  int32_t num_plans;
  struct pprt_plan *plans;
  int32_t *step_table; /* as pprt_set_step_plans got it */
  int32_t plan_lines, plan_replicas;
  int64_t *plan_entry; /* per (line, replica): its offset in step_table */
  int32_t packed_row;  /* pprt_set_packing: tokens a packed row holds; 0 */
  /* Per-micro-batch device memory that no slot holds (buffer_pool.c): the
     slots a step's plan does not run give theirs back, and slots of
     another variant or micro-batch take it; and the bytes of every
     per-micro-batch buffer this process allocated (--print-memory). */
  struct pprt_pooled_buffer *pool;
  int64_t pool_size, pool_cap;
  int64_t microbatch_buffer_bytes;
  /* pprt_set_slices: sequence slices per micro-batch (1: none). */
  int32_t num_slices;
  /* Bytes of saved buffers (pprt_define_saved) the actions run so far on
     this process hold: after each forward, until the phase that frees
     them; and the most they held (pprt_peak_activation_bytes). */
  int64_t held_activation_bytes;
  int64_t peak_activation_bytes;
  int32_t pipeline_rank;
  /* Processes per pipeline rank (pprt_set_tensor_parallel; 1 by default)
     and this one's index among them: world rank % tensor_parallel. */
  int32_t tensor_parallel;
  int32_t tp_index;
  int32_t replica;      /* world rank / (num_ranks * tensor_parallel) */
  int32_t num_replicas; /* world size / (num_ranks * tensor_parallel) */
  /* The transport's groups (split_groups' ids): the data-parallel group
     (same pipeline rank and tp index in every replica) and, with
     tensor_parallel > 1, the tensor-parallel group; -1 if not split. */
  int32_t dp_group;
  int32_t tp_group;
  int32_t declared_replicas; /* pprt_set_data_parallel; 0 if undeclared */
  int32_t weight_versions;   /* pprt_set_weight_versions: 1 or 2 */
  /* pprt_set_stage_zero: the schedule reduce-scatters and all-gathers
     itself (else --zero 1 turns its all-reduces into reduce-scatters and
     the optimizer step gathers), with each stage's ZeRO stage in
     stage_zero (num_stages entries; NULL without the calls). */
  bool zero_in_schedule;
  int32_t *stage_zero;
  int32_t pass; /* sequential replica being played, 0..K-1 */

  int64_t step;
  double step_loss;
  /* The steps of this run, [run_begin, run_end) (pprt_set_run), and the
     offset of the running action's step from `step` (0, or 1 for the next
     step's actions of a no-flush schedule: pprt_set_step_offset). */
  int64_t run_begin, run_end;
  int32_t step_offset;
  bool freeze_params; /* optimizer steps keep weights and gradients */
  bool defer_update;  /* like freeze_params, for all but the last pass */

  /* Optimizer state this process allocated (Adam's moments), in bytes. */
  int64_t optimizer_state_bytes;
  /* ZeRO-3: the bytes of whole weights gathered now, and the most ever. */
  int64_t gathered_weight_bytes, peak_gathered_weight_bytes;

  pprt_buffer_desc *buffers; /* indexed by id */
  int32_t num_buffers;       /* 1 + highest id slot allocated in `buffers` */

  pprt_saved_buffer *saved; /* pprt_define_saved, in call order */
  int64_t num_saved;
  int64_t saved_cap;

  pprt_pending_send *pending;
  int32_t num_pending;
  int32_t pending_cap;

  /* Between pprt_group_begin and pprt_group_end: the group's receives,
     started in the group and completed at its end. */
  bool in_group;
  pprt_group_recv *group;
  int32_t num_group;
  int32_t group_cap;
};

/* ---- core/context.c ---- */
/* The context takes the transport as the backend wraps it. */
pprt_context *pprt_context_create(pprt_transport *t, pprt_backend *be,
                                  const pprt_options *o);
/* Installs the driver's tables (copied); an observer may be NULL (none). */
void pprt_set_data_source(pprt_context *ctx, const pprt_data_source *src);
const pprt_data_source *pprt_get_data_source(const pprt_context *ctx);
void pprt_set_observer(pprt_context *ctx, const pprt_observer *obs);
void pprt_context_destroy(pprt_context *ctx);
/* Validates the program against the world; returns false (after rank 0
   reported why) if the job cannot run. */
bool pprt_context_start(pprt_context *ctx);
_Noreturn void pprt_fatal(const pprt_context *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Ends the run when `call` comes before pprt_set_program. */
void pprt_require_program(const pprt_context *ctx, const char *call);
pprt_buffer_desc *pprt_lookup(pprt_context *ctx, int32_t id);
bool pprt_kind_is_persistent(int32_t kind);
/* Maps (desc, mb) to its slot index, aborting on a bad mb. */
int32_t pprt_slot_index(pprt_context *ctx, const pprt_buffer_desc *b,
                        int32_t id, int32_t mb);
/* Returns the slot's device storage, allocating and initialising it if
   needed. */
void *pprt_slot_data(pprt_context *ctx, pprt_buffer_desc *b, int32_t id,
                     int32_t slot);
/* Makes room for element `n` of the growable array `*data` of `*cap`
   elements of `size` bytes, doubling it; `what` names it if memory runs
   out. */
void pprt_reserve(const pprt_context *ctx, void **data, int64_t *cap, int64_t n,
                  size_t size, const char *what);
void *pprt_xcalloc(const pprt_context *ctx, size_t n, size_t size);
/* Zeroed device memory, aborting with `what` in the message if it fails. */
void *pprt_device_alloc(pprt_context *ctx, size_t bytes, const char *what);
/* The weights the stage functions read: the older version with two. */
void *pprt_param_read_version(pprt_context *ctx, pprt_buffer_desc *p,
                              int32_t id);
/* Host memory of at least `bytes`, reused until the next call. */
void *pprt_staging(pprt_context *ctx, size_t bytes);
/* Copies `bytes` of device memory into host staging and returns it. */
const void *pprt_to_host(pprt_context *ctx, const void *data, size_t bytes);
/* The name of a pprt_dtype ("f32", ...). */
const char *pprt_dtype_name(int32_t dtype);
/* Aborts unless buffer `id` holds f32: `what` (the optimizer, the loss,
   ...) computes on f32 only. */
void pprt_require_f32(const pprt_context *ctx, const pprt_buffer_desc *b,
                      int32_t id, const char *what);
/* Bracket core work done on behalf of an ABI call that generated code may
   make inside a stage action: device memory is closed to it meanwhile. */
void pprt_core_enter(pprt_context *ctx);
void pprt_core_leave(pprt_context *ctx);

/* The replica whose rows the current pass computes on, and their count. */
int32_t pprt_data_replica(const pprt_context *ctx);
/* The first row of the global batch that data buffer `b` of micro-batch
   `mb` of data replica `replica` holds (pprt_set_microbatch_variant). */
int64_t pprt_microbatch_first_row(const pprt_context *ctx,
                                  const pprt_buffer_desc *b, int32_t replica,
                                  int32_t mb);
int32_t pprt_num_data_replicas(const pprt_context *ctx);
/* Rows of variant `variant`'s data buffers (micro-batch `mb` for errors). */
int64_t pprt_variant_rows(const pprt_context *ctx, int32_t variant, int32_t mb);

/* Per-step plans (step_plans.c). A plan: its micro-batches, the variant
   each runs and the rows before each (the last entry: all its rows). */
typedef struct pprt_plan {
  int32_t num_microbatches;
  int32_t *variant;
  int64_t *rows_before;
} pprt_plan;
/* Counts each plan's rows, once, when the context starts. */
void pprt_count_plan_rows(pprt_context *ctx);

/* Per-micro-batch buffers reused across shape variants (buffer_pool.c). */
/* Device memory for slot `slot` of per-micro-batch buffer `b`: a pooled
   buffer of at least b->bytes (the smallest), else a new one. */
void pprt_microbatch_alloc(pprt_context *ctx, pprt_buffer_desc *b, int32_t id,
                           int32_t slot);
/* Gives back to the pool the memory of every slot that plan `plan` does
   not run: a slot of a micro-batch the plan runs at another variant, or
   past its micro-batches. */
void pprt_pool_unplanned_slots(pprt_context *ctx, const struct pprt_plan *plan);
/* Frees the pool's device memory. */
void pprt_free_pool(pprt_context *ctx);
void pprt_free_plans(pprt_context *ctx);
/* The line of the step table that step `step` runs. */
int32_t pprt_plan_line(const pprt_context *ctx, int64_t step);
/* The table's entry of (line, replica): plan, m, then the samples each of
   the m micro-batches holds. */
const int32_t *pprt_plan_entry(const pprt_context *ctx, int32_t line,
                               int32_t replica);
/* The row of (line, replica, mb) in the line's rows: the replicas' plans'
   rows one after another. */
int64_t pprt_plan_first_row(const pprt_context *ctx, int32_t line,
                            int32_t replica, int32_t mb);

/* ---- core/transfer.c ---- */
/* Completes the in-flight sends of slot (id, slot) before it is written. */
void pprt_wait_slot_sends(pprt_context *ctx, int32_t id, int32_t slot);
void pprt_wait_all_sends(pprt_context *ctx);
/* Completes the sends of steps up to `step`; later (carried) ones stay. */
void pprt_wait_step_sends(pprt_context *ctx, int64_t step);

/* ---- core/silence.c ---- */
/* Ends the job after a wait on `peer` (a world rank, or PPRT_EVERYONE for
   a collective) did not complete, naming the rank that stopped answering
   (find_silent); `fmt` says what was awaited. */
_Noreturn void pprt_fatal_silent(const pprt_context *ctx, int32_t peer,
                                 const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for a transport without a context yet; `ranks` is the pipeline
   ranks per replica (0 if unknown) and `tp` the processes per pipeline
   rank. */
_Noreturn void pprt_transport_fatal_silent(pprt_transport *t, int32_t ranks,
                                           int32_t tp, int32_t peer,
                                           double timeout_s, const char *what);
/* allreduce_world_min_i32 and reduce_world_f64 within the timeout, or the
   end of the job naming the silent rank; `what` names the values. */
void pprt_min_everywhere(pprt_context *ctx, int32_t *vals, int32_t n,
                         const char *what);
void pprt_sum_to_rank0(pprt_context *ctx, double *vals, int32_t n,
                       const char *what);

/* ---- core/tensor_parallel.c ---- */
/* The world rank of pipeline rank `rank` in this process's replica and
   tensor-parallel index. */
int32_t pprt_world_rank_of(const pprt_context *ctx, int32_t rank);
/* Checks the buffers' splits against the program's tensor parallelism;
   false with the reason in `err` if one does not fit. */
bool pprt_check_splits(const pprt_context *ctx, char *err, size_t err_size);
/* Splits the world into the data-parallel and tensor-parallel groups and
   makes this process's tp index known to pprt_tp_index. Collective. */
void pprt_split_world(pprt_context *ctx);
/* Whether buffer `b` is split over the tensor-parallel ranks. */
bool pprt_is_split(const pprt_buffer_desc *b);
/* `b` as its global tensor: dims, numel and bytes of all blocks. */
pprt_buffer_desc pprt_global_desc(const pprt_buffer_desc *b);
/* Block `block` of split buffer `b` out of its global tensor `global`
   (host, pprt_global_desc's bytes) into `local` (host, b->bytes), and
   back. */
void pprt_block_from_global(const pprt_buffer_desc *b, int32_t block,
                            const void *global, void *local);
void pprt_block_to_global(const pprt_buffer_desc *b, int32_t block,
                          const void *local, void *global);

/* ---- core/all_reduce.c ---- */
/* Completes the in-flight all-reduces of `stage` (every stage if -1). */
void pprt_wait_reductions(pprt_context *ctx, int32_t stage);

/* ---- core/update.c ---- */
void pprt_zero_grads(pprt_context *ctx);
/* Applies the optimizer to `n` weights at `w` of param `p` (whose update
   count is already this update's) with gradient `dw`; Adam's moments, first
   allocated here, hold `n` values. */
void pprt_apply_update(pprt_context *ctx, pprt_buffer_desc *p, void *w,
                       const void *dw, int64_t n);
/* dst = src for `n` f32 values in device memory (exact). */
void pprt_copy_f32(pprt_context *ctx, void *dst, const void *src, int64_t n);

/* ---- core/zero.c ---- */
/* The ZeRO stage of `stage`: the program's (pprt_set_stage_zero), else the
   run's --zero (0 when not given). */
int32_t pprt_stage_zero(const pprt_context *ctx, int32_t stage);
/* Whether `stage` (any stage if negative) runs one of the ZeRO stages in
   the bit mask `levels` (1u << level), with several replicas. */
bool pprt_zero_in(const pprt_context *ctx, int32_t stage, unsigned levels);
/* Whether the optimizer state of `stage` is sharded over the replicas
   (ZeRO-1 and ZeRO-3); with a negative `stage`, of any stage. */
bool pprt_zero_sharded(const pprt_context *ctx, int32_t stage);
/* Starts the reduce-scatter of gradient buffer `id` into its shard. */
void pprt_zero_reduce_scatter(pprt_context *ctx, pprt_buffer_desc *g,
                              int32_t id);
/* Updates this replica's shard of param `pid` from its reduced gradient
   shard (gradient buffer `gid`); the gather of the updated weights starts
   now, or at the schedule's pprt_all_gather. */
void pprt_zero_update(pprt_context *ctx, pprt_buffer_desc *p, int32_t pid,
                      pprt_buffer_desc *g, int32_t gid);
/* Starts gathering every updated block of `stage`'s weights. */
void pprt_zero_start_gathers(pprt_context *ctx, int32_t stage);
/* Completes the all-gathers of `stage`'s weights. */
void pprt_zero_wait_gathers(pprt_context *ctx, int32_t stage);
/* This replica's block of a buffer of `numel` values: its first value and
   its length (0 for a replica past the end). */
void pprt_zero_block(const pprt_context *ctx, int64_t numel, int64_t *first,
                     int64_t *length);
/* Adam's whole moments of PARAM `p` into host memory `m` and `v` (its
   `bytes` each), gathered from the replicas' blocks (zeros where none
   exist yet). Collective: every replica holding the param's stage calls
   it, for the same params in the same order. */
void pprt_zero_gather_moments(pprt_context *ctx, pprt_buffer_desc *p, void *m,
                              void *v);
/* ---- core/zero3.c ---- */
/* Whether the weights of `stage` are sharded over the replicas too
   (ZeRO-3); with a negative `stage`, of any stage. */
bool pprt_zero_weights_sharded(const pprt_context *ctx, int32_t stage);
/* Gathers the whole weights of `stage` from the replicas' blocks, unless
   they are whole already; the first time, the whole weights are the
   initial ones and the replica keeps its block of them. With a negative
   `stage`: of every param gathered here before. Collective over the
   replicas. */
void pprt_zero_gather_weights(pprt_context *ctx, int32_t stage);
/* Frees the whole weights of `stage` (every stage if negative), keeping
   the replica's block. */
void pprt_zero_release_weights(pprt_context *ctx, int32_t stage);
/* The bytes of this replica's blocks of the weights it holds. */
int64_t pprt_zero_weight_block_bytes(const pprt_context *ctx);

/* The PARAM_GRAD buffer of param `p` (its id in *gid when non-null). */
pprt_buffer_desc *pprt_grad_of(pprt_context *ctx, const pprt_buffer_desc *p,
                               int32_t *gid);

/* ---- core/step.c ---- */
/* The context of the stage action running on this thread; NULL outside
   one. */
pprt_context *pprt_running_context(void);
/* Declares the steps the driver will run, [begin, end), which tells a
   no-flush program its first and last step (pprt_step_is_first/last). */
void pprt_set_run(pprt_context *ctx, int64_t begin, int64_t end);
/* The step the running action belongs to: `step` plus the step offset. */
int64_t pprt_action_step(const pprt_context *ctx);
void pprt_begin_step(pprt_context *ctx, int64_t step);
/* Runs this process's actions of the step: once per sequential replica. */
void pprt_run_step(pprt_context *ctx);
/* Finishes the step and returns the loss summed over the world (valid on
   world rank 0 only). */
double pprt_end_step(pprt_context *ctx);

#endif /* PPRT_CORE_H */
