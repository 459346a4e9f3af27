/* Runtime core state, and what the core and the driver offer each other. */
#ifndef PPRT_CORE_H
#define PPRT_CORE_H

/*
 * Layers (docs/Runtime.md): the core (core/) defines the program, owns the
 * buffers and their slots, runs the step's actions and keeps the pending
 * sends and all-reduces; it never reads or writes buffer contents, which
 * live in device memory and are reached only through the backend's device
 * ops (backends/backend.h) or moved by the transport. The driver (driver/)
 * is main(): options, data, gradient check, profile; it too reaches
 * contents only through the device ops, via host staging.
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
  int32_t num_slots;
  pprt_slot *slots;
  /* PARAM_GRAD: the in-flight all-reduce (transport handle, -1 if none)
     and the step it was last started in (-1 if never). */
  int32_t reduce_handle;
  int64_t reduced_step;
  /* PARAM: optimizer state (Adam's m and v in device memory, NULL until
     first needed) and the number of updates applied. */
  void *moment1;
  void *moment2;
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
  int32_t handle;
  bool grouped;
  int64_t step; /* the step it belongs to: the next one for a carried send */
} pprt_pending_send;

typedef enum pprt_optimizer {
  PPRT_SGD,
  PPRT_ADAM,
} pprt_optimizer;

/* Training tokens of --corpus or --tokens (corpus.c). */
typedef struct pprt_corpus pprt_corpus;

/* A safetensors file read into memory, and one of its tensors
   (driver/safetensors.h). */
typedef struct pprt_safetensors pprt_safetensors;
struct pprt_st_tensor;

/* Timings of a --profile run (profile.c). */
typedef struct pprt_profile pprt_profile;

/* A buffer the forward of `stage` holds for its backward until `until`
   (pprt_define_saved). */
typedef struct pprt_saved_buffer {
  int32_t id;
  int32_t stage;
  int32_t until; /* a pprt_phase */
} pprt_saved_buffer;

/* Run options, shared by every process. */
typedef struct pprt_options {
  int64_t steps;
  pprt_optimizer optimizer;
  float lr;
  float beta1; /* Adam */
  float beta2;
  float eps;
  int32_t sequential_replicas; /* replicas each process plays in turn */
  uint64_t seed;
  double timeout_s;
  const char *corpus_path; /* --corpus; NULL for synthetic data */
  const char *tokens_path; /* --tokens; NULL for synthetic data */
  int token_width;         /* --token-dtype: bytes per id of a flat file */
  bool print_params;
  bool check_gradients;
  const char *profile_path; /* --profile; NULL when training */
  int64_t warmup_steps;     /* --warmup: unmeasured steps before profiling */
  bool profile_cpu_time;    /* --profile-clock cpu: time calls in CPU time */
  const char *backend;      /* --backend / PPRT_BACKEND: "cpu", "guarded" */
  bool allow_non_finite;    /* --allow-non-finite: train on past NaN loss */
  const char *save_path;    /* --save: weights written after training */
  const char *init_weights_path; /* --init-weights: weights to start from */
  int64_t first_step; /* --first-step: 1-based number of the first step */
  bool first_step_set;
  const char *checkpoint_dir; /* --checkpoint: training state written here */
  int64_t checkpoint_every;   /* --checkpoint-every: steps; 0: at the end */
  const char *resume_dir;     /* --resume: training state read from here */
  const char *metrics_path;   /* --metrics: each step's loss and time (JSON) */
} pprt_options;

struct pprt_context {
  pprt_transport *transport;
  pprt_backend *backend;
  pprt_options opts;
  bool in_stage; /* between pprt_action_begin and pprt_action_end */
  void *staging; /* host memory for moving contents in and out */
  size_t staging_bytes;

  bool program_set;
  int32_t num_ranks;
  int32_t num_stages;
  int32_t num_microbatches;
  int32_t pipeline_rank;
  int32_t replica;      /* this process's replica: world rank / num_ranks */
  int32_t num_replicas; /* process replicas: world size / num_ranks */
  int32_t declared_replicas; /* pprt_set_data_parallel; 0 if undeclared */
  int32_t weight_versions;   /* pprt_set_weight_versions: 1 or 2 */
  int32_t pass;              /* sequential replica being played, 0..K-1 */

  int64_t step;
  double step_loss;
  /* The steps of this run, [run_begin, run_end) (pprt_set_run), and the
     offset of the running action's step from `step` (0, or 1 for the next
     step's actions of a no-flush schedule: pprt_set_step_offset). */
  int64_t run_begin, run_end;
  int32_t step_offset;
  bool freeze_params; /* optimizer steps keep weights and gradients */
  bool defer_update;  /* like freeze_params, for all but the last pass */

  pprt_buffer_desc *buffers; /* indexed by id */
  int32_t num_buffers;       /* 1 + highest id slot allocated in `buffers` */

  pprt_saved_buffer *saved; /* pprt_define_saved, in call order */
  int64_t num_saved;
  int64_t saved_cap;
  pprt_profile *profile; /* non-NULL while --profile measures */

  pprt_pending_send *pending;
  int32_t num_pending;
  int32_t pending_cap;

  /* Between pprt_group_begin and pprt_group_end: the group's receives,
     started in the group and completed at its end. */
  bool in_group;
  pprt_group_recv *group;
  int32_t num_group;
  int32_t group_cap;

  int32_t x0_index;    /* model argument of the teacher's input; -1 if none */
  float *teacher;      /* cached [teacher_din, teacher_dout] matrix */
  float *x0_row;       /* scratch row of the teacher's input */
  pprt_corpus *corpus; /* --corpus/--tokens; NULL for synthetic data */
  /* --init-weights or --resume's checkpoint; NULL for hash init. */
  pprt_safetensors *init_weights;
  bool resuming; /* init_weights is a checkpoint with optimizer state */
  int64_t teacher_din;
  int64_t teacher_dout;
};

/* ---- core/context.c ---- */
/* The context takes the transport as the backend wraps it. */
pprt_context *pprt_context_create(pprt_transport *t, pprt_backend *be,
                                  const pprt_options *o);
void pprt_context_destroy(pprt_context *ctx);
/* Validates the program against the world; returns false (after rank 0
   reported why) if the job cannot run. */
bool pprt_context_start(pprt_context *ctx);
_Noreturn void pprt_fatal(const pprt_context *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
pprt_buffer_desc *pprt_lookup(pprt_context *ctx, int32_t id);
bool pprt_kind_is_persistent(int32_t kind);
/* Maps (desc, mb) to its slot index, aborting on a bad mb. */
int32_t pprt_slot_index(pprt_context *ctx, const pprt_buffer_desc *b,
                        int32_t id, int32_t mb);
/* Returns the slot's device storage, allocating and initialising it if
   needed. */
void *pprt_slot_data(pprt_context *ctx, pprt_buffer_desc *b, int32_t id,
                     int32_t slot);
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

/* ---- Provided by the driver (driver/) to the core. ---- */

/* ---- driver/data.c: contents are written to host memory. ---- */
/* Caches the teacher matrix once all buffers are defined. */
void pprt_prepare_teacher(pprt_context *ctx);
void pprt_init_param(const pprt_context *ctx, const pprt_buffer_desc *b,
                     float *out);
void pprt_load_slot_data(pprt_context *ctx, const pprt_buffer_desc *b,
                         int32_t slot, void *out);

/* The replica whose rows the current pass computes on, and their count. */
int32_t pprt_data_replica(const pprt_context *ctx);
int32_t pprt_num_data_replicas(const pprt_context *ctx);

/* ---- driver/corpus.c ---- */
/* Reads --corpus or --tokens and checks the program's data arguments
   against it; false, with the reason in `err`, if they cannot be filled
   from it. */
bool pprt_corpus_load(pprt_context *ctx, char *err, size_t err_size);
void pprt_corpus_free(pprt_corpus *c);
/* Fills INPUT/TARGET buffer `b`'s rows [first_row, first_row + dims[0])
   with windows of the tokens (targets: the next tokens): one-hot for f32,
   ids for i32/i64. */
void pprt_corpus_fill(const pprt_context *ctx, const pprt_buffer_desc *b,
                      int64_t step, int64_t first_row, void *out);

/* ---- core/transfer.c ---- */
/* Completes the in-flight sends of slot (id, slot) before it is written. */
void pprt_wait_slot_sends(pprt_context *ctx, int32_t id, int32_t slot);
void pprt_wait_all_sends(pprt_context *ctx);
/* Completes the sends of steps up to `step`; later (carried) ones stay. */
void pprt_wait_step_sends(pprt_context *ctx, int64_t step);

/* ---- core/all_reduce.c ---- */
/* Completes the in-flight all-reduces of `stage` (every stage if -1). */
void pprt_wait_reductions(pprt_context *ctx, int32_t stage);

/* ---- core/update.c ---- */
void pprt_zero_grads(pprt_context *ctx);
/* The PARAM_GRAD buffer of param `p` (its id in *gid when non-null). */
pprt_buffer_desc *pprt_grad_of(pprt_context *ctx, const pprt_buffer_desc *p,
                               int32_t *gid);

/* ---- driver/profile.c ---- */
/* Runs --profile: warm-up and measured steps, then writes the cost profile
   from world rank 0; returns the exit status. */
int pprt_profile_run(pprt_context *ctx);
/* Notes a send of `bytes` bytes: the transfer probe sends the largest. */
void pprt_profile_note_send(pprt_context *ctx, int64_t bytes);
/* Time the stage action that pprt_action_begin/end bracket. */
void pprt_profile_action_begin(pprt_context *ctx, int32_t phase, int32_t stage);
void pprt_profile_action_end(pprt_context *ctx);

/* ---- driver/gradcheck.c ---- */
/* Compares gradients with finite differences; returns the exit status. */
int pprt_check_gradients(pprt_context *ctx);

/* ---- core/step.c ---- */
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

/* ---- driver/params.c ---- */
/* Prints per-param sums (from replica 0); false if the replicas' weights
   differ. */
bool pprt_print_params(pprt_context *ctx);
/* Per PARAM buffer ids[i], the lowest world rank of replica 0 that holds
   it, or INT32_MAX if none does; identical on every rank. */
void pprt_elect_owners(pprt_context *ctx, const int32_t *ids, int32_t n,
                       int32_t *owner);
/* FNV-1a over `n` bytes, continuing from `h` (PPRT_FNV_OFFSET to start). */
#define PPRT_FNV_OFFSET 0xCBF29CE484222325ull
uint64_t pprt_fnv1a(uint64_t h, const void *data, size_t n);
/* The index (model argument) of a PARAM among ids[0..n) whose values or
   optimizer state differ between the data-parallel replicas, or -1;
   identical on every rank. Collective. */
int32_t pprt_find_diverged_param(pprt_context *ctx, const int32_t *ids,
                                 int32_t n);

/* ---- driver/weights.c ---- */
/* The name of PARAM `b` in weight files: "param<index>" (the model
   argument), "param<index>.stage<stage>" if several stages hold it. */
void pprt_param_name(const pprt_context *ctx, const pprt_buffer_desc *b,
                     char *out, size_t size);
/* Before the first step: checks that a program given --save or
   --init-weights has params, and reads and checks --init-weights; false
   (after one rank reported why) if the job cannot run. Collective. */
bool pprt_weights_prepare(pprt_context *ctx);
/* Copies PARAM `b`'s initial values from --init-weights into `out`. */
void pprt_weights_init_param(const pprt_context *ctx, const pprt_buffer_desc *b,
                             void *out);
void pprt_weights_free(pprt_context *ctx);
/* Writes every param (from replica 0) to --save through world rank 0;
   false (after it reported why) if that failed. Collective. */
bool pprt_weights_save(pprt_context *ctx);
/* The safetensors dtype ("F32", ...) of a pprt_dtype. */
const char *pprt_st_dtype_name(int32_t dtype);
/* PARAM buffer ids ordered by model argument, then stage (the order of
   weight files); their count. `ids` has room for ctx->num_buffers. */
int32_t pprt_ordered_params(const pprt_context *ctx, int32_t *ids);
/* Why the file's tensor `t` cannot hold buffer `b` (dtype or shape), in
   `why`; NULL if it can. */
const char *pprt_tensor_mismatch(const pprt_buffer_desc *b,
                                 const struct pprt_st_tensor *t, char *why,
                                 size_t size);
/* Every rank learns whether all had `ok`; the lowest failing rank reports
   "OPTION 'PATH': ERR", so the job prints one line. Collective. */
bool pprt_agree(pprt_context *ctx, bool ok, const char *option,
                const char *path, const char *err);
/* The parts of a param's state in weight files and checkpoints: its
   values, Adam's moments (zeros before the first update) and its update
   count (an int64). */
typedef enum pprt_param_part {
  PPRT_PART_VALUES,
  PPRT_PART_ADAM_M,
  PPRT_PART_ADAM_V,
  PPRT_PART_ADAM_STEP,
  PPRT_NUM_PARTS
} pprt_param_part;
/* The host bytes of part `part` of param `id` from world rank `owner`, on
   world rank 0 and on the owner; NULL elsewhere. Collective between the
   two. */
const void *pprt_param_part_bytes(pprt_context *ctx, int32_t id, int32_t owner,
                                  int32_t part, const char *option);

/* ---- driver/checkpoint.c ---- */
/* The checkpoint file in --checkpoint's and --resume's directory. */
#define PPRT_CHECKPOINT_FILE "checkpoint.safetensors"
/* Before the first step: reads and checks --resume's checkpoint, and
   numbers the first step after its last; false (after one rank reported
   why) if the job cannot resume. Collective. */
bool pprt_checkpoint_prepare(pprt_context *ctx);
/* Gives PARAM `b`, just initialised from --resume's checkpoint, the
   optimizer state saved with it. */
void pprt_checkpoint_restore_param(pprt_context *ctx, pprt_buffer_desc *b);
/* Whether a checkpoint is due after 1-based step `step` (`last`: the run's
   last step). */
bool pprt_checkpoint_due(const pprt_context *ctx, int64_t step, bool last);
/* Writes the training state after 1-based step `step` to --checkpoint
   through world rank 0, atomically; false (after one rank reported why)
   if that failed. Collective. */
bool pprt_checkpoint_write(pprt_context *ctx, int64_t step);

#endif /* PPRT_CORE_H */
