/* Training state in and out of safetensors: --checkpoint, --resume. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver/driver.h"
#include "driver/safetensors.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The value of the "pprt_checkpoint" metadata key: the format's version. */
#define CHECKPOINT_VERSION "1"

/* The tensor name suffix of each pprt_param_part. */
static const char *const part_suffix[PPRT_NUM_PARTS] = {
    "", ".adam_m", ".adam_v", ".adam_step"};

static int32_t parts_per_param(const pprt_context *ctx) {
  return ctx->opts.optimizer == PPRT_ADAM ? PPRT_NUM_PARTS : 1;
}

/* The parts of buffer `b` a checkpoint holds: a state has no optimizer
   state. */
static int32_t parts_of(const pprt_context *ctx, const pprt_buffer_desc *b) {
  return b->kind == PPRT_STATE ? 1 : parts_per_param(ctx);
}

/* The params, then the states, in file order; their count. */
static int32_t ordered_state(const pprt_context *ctx, int32_t *ids) {
  int32_t n = pprt_ordered_params(ctx, ids);
  return n + pprt_ordered_buffers(ctx, PPRT_STATE, ids + n);
}

static void part_name(const pprt_context *ctx, const pprt_buffer_desc *b,
                      int32_t part, char *out, size_t size) {
  char name[64];
  pprt_param_name(ctx, b, name, sizeof name);
  snprintf(out, size, "%s%s", name, part_suffix[part]);
}

static void checkpoint_path(const char *dir, char *out, size_t size) {
  snprintf(out, size, "%s/%s", dir, PPRT_CHECKPOINT_FILE);
}

void pprt_resume_path(const char *resume, char *out, size_t size) {
  struct stat st;
  if (stat(resume, &st) == 0 && S_ISREG(st.st_mode))
    snprintf(out, size, "%s", resume);
  else
    checkpoint_path(resume, out, size);
}

/* ---- The configuration a checkpoint records and a resume checks. ---- */

/* One "__metadata__" entry that must be the same on resume: its key, this
   run's value, and the option that sets it. */
typedef struct setting {
  const char *key;
  char value[32];
  const char *option;
} setting;

static const char *optimizer_name(pprt_optimizer o) {
  return o == PPRT_ADAM ? "adam" : "sgd";
}

/* The settings that give the saved state its meaning: the optimizer (and
   Adam's constants, which its moments depend on) and the data seed. The
   learning rate may change on resume. Returns their count. */
static int32_t settings(const pprt_driver *d, setting *out) {
  const pprt_options *o = &d->opts.run;
  int32_t n = 0;
  out[n] = (setting){"optimizer", "", "--optimizer"};
  snprintf(out[n++].value, sizeof out->value, "%s",
           optimizer_name(o->optimizer));
  out[n] = (setting){"seed", "", "--seed"};
  snprintf(out[n++].value, sizeof out->value, "%" PRIu64, d->opts.seed);
  if (o->optimizer != PPRT_ADAM)
    return n;
  const char *keys[] = {"beta1", "beta2", "eps"};
  const char *options[] = {"--beta1", "--beta2", "--eps"};
  const float values[] = {o->beta1, o->beta2, o->eps};
  for (int32_t i = 0; i < 3; ++i) {
    out[n] = (setting){keys[i], "", options[i]};
    snprintf(out[n++].value, sizeof out->value, "%.9g", (double)values[i]);
  }
  return n;
}

/* ---- Resuming. ---- */

/* Checks the metadata against this run's settings; `*step` is the last
   step the checkpoint saw. */
static bool check_metadata(const pprt_driver *d, const pprt_safetensors *st,
                           int64_t *step, char *err, size_t err_size) {
  const char *version = pprt_st_metadata(st, "pprt_checkpoint");
  if (!version) {
    snprintf(err, err_size,
             "not a pprt checkpoint: no \"pprt_checkpoint\" in __metadata__");
    return false;
  }
  if (strcmp(version, CHECKPOINT_VERSION) != 0) {
    snprintf(err, err_size,
             "checkpoint format version '%s'; this runtime reads version %s",
             version, CHECKPOINT_VERSION);
    return false;
  }
  const char *s = pprt_st_metadata(st, "step");
  char *end = NULL;
  errno = 0;
  *step = s ? strtoll(s, &end, 10) : -1;
  if (!s || errno || end == s || *end || *step < 0) {
    snprintf(err, err_size, "bad or missing \"step\" in __metadata__");
    return false;
  }
  /* The optimizer first: Adam's constants mean nothing to an SGD run. */
  setting want[8];
  int32_t n = settings(d, want);
  for (int32_t i = 0; i < n; ++i) {
    const char *got = pprt_st_metadata(st, want[i].key);
    if (got && strcmp(got, want[i].value) == 0)
      continue;
    snprintf(err, err_size,
             "the checkpoint was written with %s %s, but this run has %s %s",
             want[i].option, got ? got : "(none)", want[i].option,
             want[i].value);
    return false;
  }
  return true;
}

/* Whether the first step after checkpoint step `step` and --steps more
   keep every step number within int64_t. */
static bool check_step_range(const pprt_driver *d, int64_t step, char *err,
                             size_t err_size) {
  if (step < INT64_MAX && step <= INT64_MAX - d->opts.steps)
    return true;
  snprintf(err, err_size,
           "the checkpoint's step %lld with --steps %lld would number "
           "steps past %lld, the largest step number",
           (long long)step, (long long)d->opts.steps, (long long)INT64_MAX);
  return false;
}

/* Whether `t` is an update count of at most `step` (one update a step). */
static bool check_count(const pprt_safetensors *st, const pprt_st_tensor *t,
                        const char *name, int64_t step, char *err,
                        size_t err_size) {
  int64_t count;
  if (strcmp(t->dtype, "I64") != 0 || t->ndims != 0) {
    snprintf(err, err_size, "tensor '%s' must be an I64 scalar", name);
    return false;
  }
  memcpy(&count, st->data + t->begin, sizeof count);
  if (count >= 0 && count <= step)
    return true;
  snprintf(err, err_size,
           "tensor '%s' counts %lld updates; after step %lld it must be "
           "in [0, %lld]",
           name, (long long)count, (long long)step, (long long)step);
  return false;
}

/* Whether the file's tensor `t` can hold part `part` of PARAM `b` after
   `step` steps. */
static bool check_part(const pprt_context *ctx, const pprt_safetensors *st,
                       const pprt_buffer_desc *b, int32_t part,
                       const pprt_st_tensor *t, const char *name, int64_t step,
                       char *err, size_t err_size) {
  char why[384];
  if (part == PPRT_PART_ADAM_STEP)
    return check_count(st, t, name, step, err, err_size);
  if (pprt_tensor_mismatch(b, t, why, sizeof why)) {
    snprintf(err, err_size, "tensor '%s' %s", name, why);
    return false;
  }
  return pprt_check_state_values(st, t, part, ctx->opts.allow_non_finite, err,
                                 err_size);
}

/* Checks that the file holds every part of every param, and nothing else:
   a tensor the model lacks means a checkpoint of another model. */
static bool check_tensors(const pprt_context *ctx, const pprt_safetensors *st,
                          const int32_t *ids, int32_t n, int64_t step,
                          char *err, size_t err_size) {
  int32_t count = 0;
  char name[96];
  for (int32_t i = 0; i < n; ++i) {
    const pprt_buffer_desc *b = &ctx->buffers[ids[i]];
    int32_t parts = parts_of(ctx, b);
    count += parts;
    for (int32_t part = 0; part < parts; ++part) {
      part_name(ctx, b, part, name, sizeof name);
      const pprt_st_tensor *t = pprt_st_find(st, name);
      if (!t) {
        snprintf(err, err_size, "no tensor '%s' (stage %d's %s%s)", name,
                 b->stage, b->kind == PPRT_STATE ? "state" : "weight",
                 part ? "'s optimizer state" : "");
        return false;
      }
      if (!check_part(ctx, st, b, part, t, name, step, err, err_size))
        return false;
    }
  }
  if (st->num_tensors == count)
    return true;
  /* Names are unique, so some tensor is none of the expected ones. */
  for (int32_t k = 0; k < st->num_tensors; ++k) {
    bool known = false;
    for (int32_t i = 0; i < n && !known; ++i)
      for (int32_t part = 0;
           part < parts_of(ctx, &ctx->buffers[ids[i]]) && !known; ++part) {
        part_name(ctx, &ctx->buffers[ids[i]], part, name, sizeof name);
        known = strcmp(name, st->tensors[k].name) == 0;
      }
    if (!known) {
      snprintf(err, err_size,
               "tensor '%s' is not part of this model's %s training state",
               st->tensors[k].name, optimizer_name(ctx->opts.optimizer));
      return false;
    }
  }
  return true;
}

/* Reads and checks the checkpoint at `path` into `st`. */
static bool read_checkpoint(const pprt_driver *d, const char *path,
                            pprt_safetensors *st, int64_t *step, char *err,
                            size_t err_size) {
  const pprt_context *ctx = d->ctx;
  int32_t *ids = pprt_xcalloc(ctx, (size_t)ctx->num_buffers, sizeof *ids);
  int32_t n = ordered_state(ctx, ids);
  bool ok = pprt_st_read(path, st, err, err_size) &&
            check_metadata(d, st, step, err, err_size) &&
            check_step_range(d, *step, err, err_size) &&
            check_tensors(ctx, st, ids, n, *step, err, err_size);
  free(ids);
  return ok;
}

/* Checks that a program given --checkpoint or --resume has params. */
static bool check_has_params(const pprt_driver *d) {
  pprt_context *ctx = d->ctx;
  const char *option = d->opts.resume_dir ? "--resume" : "--checkpoint";
  const char *dir =
      d->opts.resume_dir ? d->opts.resume_dir : d->opts.checkpoint_dir;
  int32_t *ids = pprt_xcalloc(ctx, (size_t)ctx->num_buffers, sizeof *ids);
  bool ok = pprt_ordered_params(ctx, ids) > 0;
  free(ids);
  return pprt_agree(ctx, ok, option, dir, "the program has no parameters");
}

/* Whether every rank that read `st` (NULL where reading failed) read the
   same bytes: ranks that started from different checkpoints would run
   different steps and wait forever on each other. Collective. */
static bool same_file_everywhere(pprt_context *ctx,
                                 const pprt_safetensors *st) {
  int32_t h = INT32_MAX, not_h = INT32_MAX;
  if (st) {
    h = (int32_t)(pprt_fnv1a(PPRT_FNV_OFFSET, st->bytes, st->size) % INT32_MAX);
    not_h = ~h;
  }
  int32_t lo_and_not_hi[2] = {h, not_h};
  pprt_min_everywhere(ctx, lo_and_not_hi, 2, "the checkpoint's fingerprint");
  return lo_and_not_hi[0] == INT32_MAX || lo_and_not_hi[0] == ~lo_and_not_hi[1];
}

/* Appends to `err`, why --resume's directory cannot be resumed, the
   checkpoint kept before it there if that one is intact, with its step
   and how to resume from it. */
static void name_previous(const pprt_driver *d, char *err, size_t err_size) {
  char path[4200], why[512];
  struct stat st;
  const char *dir = d->opts.resume_dir;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return;
  snprintf(path, sizeof path, "%s/%s", dir, PPRT_PREVIOUS_CHECKPOINT_FILE);
  pprt_safetensors previous = {0};
  int64_t step = 0;
  if (read_checkpoint(d, path, &previous, &step, why, sizeof why)) {
    size_t n = strlen(err);
    snprintf(err + n, err_size - n,
             "; the previous checkpoint '%s' (step %lld) is intact: continue "
             "from it with --resume %s",
             path, (long long)step, path);
  }
  pprt_st_free(&previous);
}

bool pprt_checkpoint_prepare(pprt_driver *d) {
  pprt_context *ctx = d->ctx;
  pprt_driver_options *o = &d->opts;
  if (!o->resume_dir && !o->checkpoint_dir)
    return true;
  if (!check_has_params(d))
    return false;
  if (!o->resume_dir)
    return true;
  char path[4200], err[1024] = "";
  pprt_resume_path(o->resume_dir, path, sizeof path);
  pprt_safetensors *st = pprt_xcalloc(ctx, 1, sizeof *st);
  int64_t step = 0;
  bool ok = read_checkpoint(d, path, st, &step, err, sizeof err);
  if (!ok && ctx->transport->world_rank == 0)
    name_previous(d, err, sizeof err);
  if (!same_file_everywhere(ctx, ok ? st : NULL) && ok) {
    snprintf(err, sizeof err,
             "the ranks read different files (a copy per node that is out "
             "of date?)");
    ok = ctx->transport->world_rank != 0; /* rank 0 reports */
  }
  if (!pprt_agree(ctx, ok, "--resume", path, err)) {
    pprt_st_free(st);
    free(st);
    return false;
  }
  d->init_weights = st;
  d->resuming = true;
  o->first_step = step + 1;
  return true;
}

/* The bytes of tensor `name` of the checkpoint. */
static const void *tensor_data(const pprt_safetensors *st, const char *name) {
  return st->data + pprt_st_find(st, name)->begin;
}

bool pprt_checkpoint_param_state(const pprt_driver *d,
                                 const pprt_buffer_desc *b,
                                 int64_t *num_updates, const void **m,
                                 const void **v) {
  const pprt_context *ctx = d->ctx;
  if (!d->resuming || ctx->opts.optimizer != PPRT_ADAM)
    return false;
  /* pprt_checkpoint_prepare checked every part's presence and shape. */
  char name[96];
  part_name(ctx, b, PPRT_PART_ADAM_STEP, name, sizeof name);
  memcpy(num_updates, tensor_data(d->init_weights, name), sizeof *num_updates);
  part_name(ctx, b, PPRT_PART_ADAM_M, name, sizeof name);
  *m = tensor_data(d->init_weights, name);
  part_name(ctx, b, PPRT_PART_ADAM_V, name, sizeof name);
  *v = tensor_data(d->init_weights, name);
  return true;
}

/* ---- Writing. ---- */

bool pprt_checkpoint_due(const pprt_driver *d, int64_t step, bool last) {
  int64_t every = d->opts.checkpoint_every;
  return d->opts.checkpoint_dir && (last || (every > 0 && step % every == 0));
}

/* Rank 0 starts the file: each param's parts, then each state, in `ids`
   order. */
static pprt_st_writer *begin_file(const pprt_driver *d, const char *path,
                                  const int32_t *ids, int32_t n, int64_t step,
                                  char *err, size_t err_size) {
  const pprt_context *ctx = d->ctx;
  static const int64_t no_dims[1] = {0};
  int32_t count = 0;
  for (int32_t i = 0; i < n; ++i)
    count += parts_of(ctx, &ctx->buffers[ids[i]]);
  pprt_st_entry *entries = pprt_xcalloc(ctx, (size_t)count, sizeof *entries);
  char(*names)[96] = pprt_xcalloc(ctx, (size_t)count, sizeof *names);
  /* A split param's parts are its global tensors. */
  pprt_buffer_desc *global = pprt_xcalloc(ctx, (size_t)n + 1, sizeof *global);
  for (int32_t i = 0; i < n; ++i)
    global[i] = pprt_global_desc(&ctx->buffers[ids[i]]);
  for (int32_t i = 0, k = 0; i < n; ++i) {
    const pprt_buffer_desc *b = &global[i];
    for (int32_t part = 0; part < parts_of(ctx, b); ++part, ++k) {
      part_name(ctx, b, part, names[k], sizeof names[k]);
      entries[k] = part == PPRT_PART_ADAM_STEP
                       ? (pprt_st_entry){names[k], "I64", 0, no_dims}
                       : (pprt_st_entry){names[k], pprt_st_dtype_name(b->dtype),
                                         b->ndims, b->dims};
    }
  }
  setting config[8];
  int32_t nconfig = settings(d, config);
  const char *keys[12] = {"format", "producer", "pprt_checkpoint", "step"};
  char step_text[32];
  snprintf(step_text, sizeof step_text, "%lld", (long long)step);
  const char *values[12] = {"pt", "pprt", CHECKPOINT_VERSION, step_text};
  for (int32_t i = 0; i < nconfig; ++i) {
    keys[4 + i] = config[i].key;
    values[4 + i] = config[i].value;
  }
  pprt_st_writer *w = pprt_st_writer_begin(path, entries, count, keys, values,
                                           4 + nconfig, err, err_size);
  free(global);
  free(names);
  free(entries);
  return w;
}

/* Under ZeRO-1 with Adam: the whole moments of every param this rank
   holds, gathered from the replicas (m then v, each the param's bytes; NULL
   for the others); NULL without sharded moments. */
static void **gather_moments(pprt_context *ctx, const int32_t *ids, int32_t n) {
  if (!pprt_zero_sharded(ctx, -1) || ctx->opts.optimizer != PPRT_ADAM)
    return NULL;
  void **whole = pprt_xcalloc(ctx, n ? (size_t)n : 1, sizeof *whole);
  for (int32_t i = 0; i < n; ++i) {
    pprt_buffer_desc *b = &ctx->buffers[ids[i]];
    if (!b->slots[0].data || b->kind != PPRT_PARAM ||
        !pprt_zero_sharded(ctx, b->stage))
      continue;
    whole[i] = pprt_xcalloc(ctx, 2, (size_t)b->bytes);
    pprt_zero_gather_moments(ctx, b, whole[i], (char *)whole[i] + b->bytes);
  }
  return whole;
}

static void free_moments(void **whole, int32_t n) {
  for (int32_t i = 0; whole && i < n; ++i)
    free(whole[i]);
  free(whole);
}

/* What the owner of param `i` sends as `part`: its gathered moments under
   ZeRO-1, else NULL (read from the param). */
static const void *owned_part(void **whole, int32_t i, int32_t part,
                              int64_t bytes) {
  if (!whole || !whole[i] ||
      (part != PPRT_PART_ADAM_M && part != PPRT_PART_ADAM_V))
    return NULL;
  return (char *)whole[i] + (part == PPRT_PART_ADAM_V ? bytes : 0);
}

/* Streams every part of every param from its owners into `w` (rank 0). */
static bool write_parts(pprt_context *ctx, pprt_st_writer *w,
                        const int32_t *ids, const int32_t *owner, int32_t n,
                        bool ok, char *err, size_t err_size) {
  int32_t tp = ctx->tensor_parallel;
  bool root = ctx->transport->world_rank == 0;
  void **whole = gather_moments(ctx, ids, n);
  for (int32_t i = 0; i < n; ++i) {
    const pprt_buffer_desc *b = &ctx->buffers[ids[i]];
    int64_t bytes = pprt_global_desc(b).bytes;
    void *global = root ? pprt_xcalloc(ctx, 1, (size_t)bytes) : NULL;
    for (int32_t part = 0; part < parts_of(ctx, b); ++part) {
      const void *host = pprt_param_global_part(
          ctx, ids[i], owner + i * tp, part,
          owned_part(whole, i, part, b->bytes), "--checkpoint", global);
      size_t size =
          part == PPRT_PART_ADAM_STEP ? sizeof(int64_t) : (size_t)bytes;
      if (w && ok)
        ok = pprt_st_writer_data(w, host, size, err, err_size);
    }
    free(global);
  }
  free_moments(whole, n);
  return ok;
}

/* Writes the training state after `step` to DIR/checkpoint.safetensors
   (creating DIR, as a rescue place is new) through world rank 0; a
   pprt_state_writer. */
static bool write_to(pprt_driver *d, const char *dir, int64_t step, char *err,
                     size_t err_size) {
  pprt_context *ctx = d->ctx;
  bool root = ctx->transport->world_rank == 0;
  int32_t cap = ctx->num_buffers ? ctx->num_buffers : 1;
  int32_t *ids = pprt_xcalloc(ctx, (size_t)cap, sizeof *ids);
  int32_t *owner = pprt_xcalloc(ctx, (size_t)cap * (size_t)ctx->tensor_parallel,
                                sizeof *owner);
  int32_t n = ordered_state(ctx, ids);
  pprt_elect_owners(ctx, ids, n, owner);
  char path[4200], previous[4200];
  checkpoint_path(dir, path, sizeof path);
  snprintf(previous, sizeof previous, "%s/%s", dir,
           PPRT_PREVIOUS_CHECKPOINT_FILE);
  pprt_st_writer *w = NULL;
  bool ok = true;
  if (root && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    snprintf(err, err_size, "cannot create '%s': %s", dir, strerror(errno));
    ok = false;
  } else if (root) {
    w = begin_file(d, path, ids, n, step, err, err_size);
    ok = w != NULL;
    if (w)
      pprt_st_writer_keep_previous(w, previous);
  }
  ok = write_parts(ctx, w, ids, owner, n, ok, err, err_size);
  if (w)
    ok = pprt_st_writer_finish(w, ok, err, err_size);
  free(owner);
  free(ids);
  return ok;
}

/* Says on rank 0 where the state after `step` went when --checkpoint's
   directory did not take it. */
static void report_rescue(const pprt_driver *d, int64_t step, bool rescued,
                          const char *place) {
  if (d->ctx->transport->world_rank != 0)
    return;
  if (rescued)
    fprintf(stderr,
            "pprt: rank 0: --checkpoint: the training state after step %lld "
            "is in '%s' (continue with --resume %s)\n",
            (long long)step, place, place);
  if (d->checkpoint_step >= 0)
    fprintf(stderr,
            "pprt: rank 0: --checkpoint: '%s' keeps the checkpoint of step "
            "%lld\n",
            d->opts.checkpoint_dir, (long long)d->checkpoint_step);
  fflush(stderr);
}

static bool write_checkpoint(pprt_driver *d, int64_t step) {
  pprt_context *ctx = d->ctx;
  const char *dir = d->opts.checkpoint_dir;
  char path[4200], err[512] = "";
  checkpoint_path(dir, path, sizeof path);
  int32_t *ids = pprt_xcalloc(ctx, (size_t)ctx->num_buffers + 1, sizeof *ids);
  int32_t n = pprt_ordered_params(ctx, ids);
  int32_t diverged = pprt_find_diverged_param(ctx, ids, n);
  free(ids);
  if (diverged >= 0) {
    snprintf(err, sizeof err,
             "after step %lld the %s hold different values of param %d or "
             "of its optimizer state",
             (long long)step,
             ctx->tensor_parallel > 1
                 ? "data-parallel replicas or tensor-parallel ranks"
                 : "data-parallel replicas",
             diverged);
    /* Every rank found it; rank 0 reports. */
    return pprt_agree(ctx, ctx->transport->world_rank != 0, "--checkpoint",
                      path, err);
  }
  bool ok = write_to(d, dir, step, err, sizeof err);
  if (pprt_agree(ctx, ok, "--checkpoint", path, err)) {
    d->checkpoint_step = step;
    return true;
  }
  char place[4400];
  bool rescued = pprt_rescue_state(d, write_to, "--checkpoint", dir, step,
                                   place, sizeof place);
  report_rescue(d, step, rescued, place);
  return false;
}

/* A checkpoint holds whole weights: under ZeRO-3 the replicas gather them
   for it and keep their blocks again after. */
bool pprt_checkpoint_write(pprt_driver *d, int64_t step) {
  pprt_zero_gather_weights(d->ctx, -1);
  bool ok = write_checkpoint(d, step);
  pprt_zero_release_weights(d->ctx, -1);
  return ok;
}
