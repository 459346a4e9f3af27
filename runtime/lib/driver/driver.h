/* The driver's state: command-line options, data, weights, checkpoints,
 * profile. */
#ifndef PPRT_DRIVER_H
#define PPRT_DRIVER_H

/*
 * The driver (driver/) is main(). It parses the command line, creates the
 * transport, backend and core context, installs its data source and (for
 * --profile) its observer into the core (core/core.h), and runs the steps.
 * It may include the core and the backends; the core includes nothing of
 * it (docs/Runtime.md, "Layers").
 */

#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Training tokens of --corpus or --tokens (corpus.c). */
typedef struct pprt_corpus pprt_corpus;
/* Arrays of --data (samples.c). */
typedef struct pprt_samples pprt_samples;
/* Variable-length samples of --sample-lengths (length_index.c). */
typedef struct pprt_length_index pprt_length_index;

/* A safetensors file read into memory, and one of its tensors
   (driver/safetensors.h). */
typedef struct pprt_safetensors pprt_safetensors;
struct pprt_st_tensor;

/* The command line, shared by every process. */
typedef struct pprt_driver_options {
  pprt_options run; /* what the core trains with */
  int64_t steps;
  uint64_t seed;
  const char *corpus_path; /* --corpus; NULL for synthetic data */
  const char *tokens_path; /* --tokens; NULL for synthetic data */
  int token_width;         /* --token-dtype: bytes per id of a flat file */
  const char *data_spec;   /* --data: arrays by sample; NULL for synthetic */
  const char *sample_lengths_path; /* --sample-lengths; NULL: windows */
  bool choose_plans;      /* --choose-plans: step plans for another index */
  int64_t plan_lookahead; /* --plan-lookahead: stream the index; -1: not */
  int64_t num_classes;    /* --classes: synthetic integer data; 0: none */
  int64_t document_end;   /* --document-end: documents' last id; -1: none */
  /* --samples-per-step: documents a step; 0: the compiled index's first */
  int64_t samples_per_step;
  bool split_long_documents; /* --long-documents split; refuse: false */
  bool long_documents_set;   /* --long-documents was given */
  bool print_params;
  bool print_memory;
  bool check_gradients;
  const char *profile_path;  /* --profile; NULL when training */
  int64_t warmup_steps;      /* --warmup: unmeasured steps before profiling */
  bool profile_cpu_time;     /* --profile-clock cpu: time calls in CPU time */
  const char *profile_model; /* --profile-model: recorded as meta.model */
  const char *backend;       /* --backend / PPRT_BACKEND: "cpu", "guarded" */
  const char *save_path;     /* --save: weights written after training */
  const char *init_weights_path; /* --init-weights: weights to start from */
  int64_t first_step; /* --first-step: 1-based number of the first step */
  bool first_step_set;
  const char *checkpoint_dir; /* --checkpoint: training state written here */
  int64_t checkpoint_every;   /* --checkpoint-every: steps; 0: at the end */
  const char *resume_dir;     /* --resume: the directory (or checkpoint file)
                                 training state is read from */
  const char *metrics_path;   /* --metrics: each step's loss and time (JSON) */
  int64_t threads; /* --threads: host GEMM threads per rank; 0: from env */
} pprt_driver_options;

typedef struct pprt_driver {
  pprt_context *ctx;
  pprt_driver_options opts;
  int32_t x0_index; /* model argument of the teacher's input; -1 if none */
  float *teacher;   /* cached [teacher_din, teacher_dout] matrix */
  float *x0_row;    /* scratch row of the teacher's input */
  int64_t teacher_din;
  int64_t teacher_dout;
  pprt_corpus *corpus;   /* --corpus/--tokens; NULL for synthetic data */
  pprt_samples *samples; /* --data; NULL for synthetic data */
  pprt_length_index *length_index; /* --sample-lengths; NULL: windows */
  /* --init-weights or --resume's checkpoint; NULL for hash init. */
  pprt_safetensors *init_weights;
  bool resuming; /* init_weights is a checkpoint with optimizer state */
  /* The step of the last checkpoint this run wrote to --checkpoint; -1
     before the first. */
  int64_t checkpoint_step;
  /* A write failed that did not stop the run (--metrics, standard
     output): exit 1. */
  bool write_failed;
  bool stdout_failed; /* reported once */
} pprt_driver;

/* ---- driver/data.c: contents are written to host memory. ---- */
/* Installs the driver's data source into its context. */
void pprt_driver_install_data_source(pprt_driver *d);
/* After the program is defined: caches the teacher matrix and reads
   --corpus or --tokens; false (after rank 0 reported why) if the program's
   data cannot be filled. */
bool pprt_driver_prepare_data(pprt_driver *d);
/* Collective: whether every rank is `ok`; if not, the lowest rank that is
   not prints its `err` (`what` names the check for a silent rank). */
bool pprt_report_first_failure(pprt_driver *d, bool ok, const char *err,
                               const char *what);
void pprt_driver_free_data(pprt_driver *d);

/* ---- driver/corpus.c ---- */
/* Reads --corpus or --tokens and checks the program's data arguments
   against it; false, with the reason in `err`, if they cannot be filled
   from it. */
bool pprt_corpus_load(pprt_driver *d, char *err, size_t err_size);
void pprt_corpus_free(pprt_corpus *c);
/* Fills INPUT/TARGET buffer `b`'s rows [first_row, first_row + dims[0])
   with windows of the tokens (targets: the next tokens): one-hot for f32,
   ids for i32/i64. */
void pprt_corpus_fill(const pprt_driver *d, const pprt_buffer_desc *b,
                      int64_t step, int64_t first_row, void *out);
/* Ends the job, naming the file, if --tokens' file changed since it was
   opened (pprt_int_array_unchanged): called before each refill, so that
   no window is read from a truncated or rewritten mapping. */
void pprt_corpus_check(const pprt_driver *d);
/* Token `i` of the corpus, an index into its vocabulary. */
int64_t pprt_corpus_token(const pprt_corpus *c, int64_t i);

/* ---- driver/length_index.c ---- */
/* Reads --sample-lengths and checks that every step's samples fit the
   program's data arguments and the corpus's `corpus_length` tokens; false,
   with the reason in `err`, if they do not. */
bool pprt_length_index_load(pprt_driver *d, int64_t corpus_length, char *err,
                            size_t err_size);
void pprt_length_index_free(pprt_length_index *x);
/* Collective, before step `step` of a run of `end` steps: with
   --plan-lookahead K, reads the streamed index up to step `step` + K,
   choosing and checking each new step's plan; false (after one rank
   reported why) if a step cannot run. */
bool pprt_length_index_advance(pprt_driver *d, int64_t step, int64_t end);
/* Whether `b` holds tokens (one-hot or ids) under `x` (NULL: none): not
   token weights (f32 [rows, positions] beside integer targets), document
   ids or positions. */
bool pprt_length_index_holds_tokens(const pprt_length_index *x,
                                    const pprt_buffer_desc *b);
/* Fills INPUT/TARGET buffer `b`'s rows [first_row, first_row + dims[0])
   with the step's samples, longest first, right-padded with zeros: tokens
   (one-hot, or ids), targets (the next tokens; one-hot ones weighted 1/N
   for the step's N tokens), or the targets' weights (1/N, 0 at
   padding). */
void pprt_length_index_fill(const pprt_driver *d, const pprt_buffer_desc *b,
                            int64_t step, int64_t first_row, void *out);

/* ---- driver/profile.c ---- */
/* Runs --profile: warm-up and measured steps, then writes the cost profile
   from world rank 0; returns the exit status. */
int pprt_profile_run(pprt_driver *d);

/* ---- driver/gradcheck.c ---- */
/* Compares gradients with finite differences; returns the exit status. */
int pprt_check_gradients(pprt_context *ctx);

/* ---- driver/params.c ---- */
/* Prints per-param sums (from replica 0); false if the replicas' weights
   differ. */
bool pprt_print_params(pprt_context *ctx);
/* Prints this rank's bytes of weights, gradients and optimizer state. */
void pprt_print_memory(pprt_context *ctx);
/* Per PARAM buffer ids[i] and tensor-parallel index k < T, in
   owner[i * T + k]: the lowest world rank of replica 0 that holds block k
   of it (of a replicated param: the whole as k = 0, nobody for k > 0), or
   INT32_MAX if none does; identical on every rank. */
void pprt_elect_owners(pprt_context *ctx, const int32_t *ids, int32_t n,
                       int32_t *owner);
/* The index (model argument) of a PARAM among ids[0..n) whose values or
   optimizer state differ between the data-parallel replicas (or, when it
   is not split, the tensor-parallel ranks), or -1; identical on every
   rank. Collective. */
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
bool pprt_weights_prepare(pprt_driver *d);
/* Copies PARAM `b`'s initial values from --init-weights into `out`. */
void pprt_weights_init_param(const pprt_driver *d, const pprt_buffer_desc *b,
                             void *out);
void pprt_weights_free(pprt_driver *d);
/* Writes every param (from replica 0) to --save through world rank 0;
   false (after it reported why) if that failed. Collective. */
bool pprt_weights_save(pprt_driver *d);
/* The safetensors dtype ("F32", ...) of a pprt_dtype. */
const char *pprt_st_dtype_name(int32_t dtype);
/* PARAM buffer ids ordered by model argument, then stage (the order of
   weight files); their count. `ids` has room for ctx->num_buffers. */
int32_t pprt_ordered_params(const pprt_context *ctx, int32_t *ids);
/* The same for the buffers of `kind` (PPRT_STATE: by model argument). */
int32_t pprt_ordered_buffers(const pprt_context *ctx, int32_t kind,
                             int32_t *ids);
/* Why the file's tensor `t` cannot hold buffer `b` (dtype or global
   shape), in `why`; NULL if it can. */
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
/* Whether the values of part `part` of a param in tensor `t` of `st` can
   be trained from: finite weights (any with `allow_non_finite`), finite
   moments, second moments >= 0; `err` says which element is not. */
bool pprt_check_state_values(const pprt_safetensors *st,
                             const struct pprt_st_tensor *t, int32_t part,
                             bool allow_non_finite, char *err, size_t err_size);
/* The host bytes of part `part` of param `id` from world rank `owner`, on
   world rank 0 and on the owner; NULL elsewhere. Collective between the
   two. The owner sends `owned` if not NULL, else reads the param. */
const void *pprt_param_part_bytes(pprt_context *ctx, int32_t id, int32_t owner,
                                  int32_t part, const void *owned,
                                  const char *option);

/* The host bytes of part `part` of param `id` as its global tensor, on
   world rank 0 (NULL elsewhere), from the owners of its blocks
   (pprt_elect_owners' owners[0..T)): a split param's blocks are assembled
   in rank 0's `whole` (its global bytes), a replicated one comes from
   owners[0]. An owner sends `owned` if not NULL. Collective between the
   owners and rank 0. */
const void *pprt_param_global_part(pprt_context *ctx, int32_t id,
                                   const int32_t *owners, int32_t part,
                                   const void *owned, const char *option,
                                   void *whole);

/* ---- driver/outputs.c ---- */
/* How a writer puts its file in place: written into PATH.tmp and renamed
   over PATH (--save, checkpoints), or written at PATH as it goes
   (--metrics, --profile). */
typedef enum pprt_output_mode {
  PPRT_OUTPUT_REPLACED,
  PPRT_OUTPUT_IN_PLACE
} pprt_output_mode;
/* Before the first step: proves that the writer can create its file where
   it will (creating and removing it), and that `path` is not a device,
   FIFO, directory or kernel file; `err` says why not. */
bool pprt_check_output(const char *path, pprt_output_mode mode, char *err,
                       size_t err_size);
/* Before the first step: false, with one line in `err`, if an output
   (--save, --profile, --metrics, --checkpoint's file) is another output
   or a file the run reads (the program, --init-weights, --resume,
   --tokens, --corpus, --sample-lengths, --data): the same inode under any
   name, or the same name where neither exists yet. */
bool pprt_check_output_names(const pprt_driver_options *o, char *err,
                             size_t err_size);
/* Creates --checkpoint's directory if it is missing and checks its
   checkpoint file as pprt_check_output does. */
bool pprt_check_checkpoint_dir(const char *dir, char *err, size_t err_size);
/* Locks the checkpoint directory `dir` for this job's lifetime (an
   exclusive flock of DIR/pprt.lock, which names the job's pid and host),
   so that two jobs cannot write into one directory; false, with a line
   naming the job that holds it, if another does. */
bool pprt_lock_checkpoint_dir(const char *dir, char *err, size_t err_size);
/* Locks --save's file `path` the same way, through PATH.lock beside it
   (the file itself is replaced by a rename, which a lock would not
   survive), so that two jobs cannot save over each other; the lock file
   goes as the job exits (one killed leaves it, unlocked). */
bool pprt_lock_save(const char *path, char *err, size_t err_size);
/* Where trained state that could not be written to `path` goes instead:
   the `attempt`th place (the working directory, then $TMPDIR or /tmp),
   in `out`; false when there is none left. */
bool pprt_rescue_path(const char *path, int32_t attempt, char *out,
                      size_t size);

/* Writes a run's state (weights or a checkpoint after step `step`) to
   `path` through world rank 0; false there, with the reason in `err`, if
   that failed. Collective. */
typedef bool (*pprt_state_writer)(pprt_driver *d, const char *path,
                                  int64_t step, char *err, size_t err_size);
/* After `write` failed for `path` on every rank: writes the same state to
   each rescue place in turn (pprt_rescue_path) until one takes it, each
   failure reported as "OPTION 'PLACE': ERR"; true, with the place in
   `out` on rank 0, if one did. Collective. */
bool pprt_rescue_state(pprt_driver *d, pprt_state_writer write,
                       const char *option, const char *path, int64_t step,
                       char *out, size_t size);

/* ---- driver/checkpoint.c ---- */
/* The checkpoint file in --checkpoint's and --resume's directory. */
#define PPRT_CHECKPOINT_FILE "checkpoint.safetensors"
/* The checkpoint before it, kept beside it: when the newest is torn,
   --resume names this one. */
#define PPRT_PREVIOUS_CHECKPOINT_FILE "checkpoint.prev.safetensors"
/* The checkpoint file --resume reads: `resume` itself where it is a
   regular file, else RESUME/checkpoint.safetensors. */
void pprt_resume_path(const char *resume, char *out, size_t size);
/* The file in a checkpoint directory that a job holds locked (flock)
   while it runs, naming its pid and host. */
#define PPRT_CHECKPOINT_LOCK "pprt.lock"
/* Before the first step: reads and checks --resume's checkpoint, and
   numbers the first step after its last; false (after one rank reported
   why) if the job cannot resume. Collective. */
bool pprt_checkpoint_prepare(pprt_driver *d);
/* The optimizer state PARAM `b` resumes with from --resume's checkpoint
   (pprt_data_source's param_state); false when it starts fresh. */
bool pprt_checkpoint_param_state(const pprt_driver *d,
                                 const pprt_buffer_desc *b,
                                 int64_t *num_updates, const void **m,
                                 const void **v);
/* Whether a checkpoint is due after 1-based step `step` (`last`: the run's
   last step). */
bool pprt_checkpoint_due(const pprt_driver *d, int64_t step, bool last);
/* Writes the training state after 1-based step `step` to --checkpoint
   through world rank 0, atomically; false (after one rank reported why)
   if that failed. Collective. */
bool pprt_checkpoint_write(pprt_driver *d, int64_t step);

#endif /* PPRT_DRIVER_H */
