/* Trained weights in and out of safetensors files: --init-weights, --save. */
#include "driver/driver.h"
#include "driver/safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every buffer's shape fits a file's (--save, checkpoints). */
_Static_assert(PPRT_ST_MAX_DIMS >= PPRT_MAX_DIMS,
               "safetensors shapes must hold every buffer's rank");

const char *pprt_st_dtype_name(int32_t dtype) {
  static const char *const names[] = {"F32", "F16", "BF16",
                                      "I32", "I64", "BOOL"};
  return dtype >= 0 && dtype <= PPRT_I1 ? names[dtype] : "?";
}

void pprt_param_name(const pprt_context *ctx, const pprt_buffer_desc *b,
                     char *out, size_t size) {
  if (b->kind == PPRT_STATE) { /* one stage reads and updates a state */
    snprintf(out, size, "state%d", b->index);
    return;
  }
  int32_t same_index = 0;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *p = &ctx->buffers[id];
    same_index += p->defined && p->kind == PPRT_PARAM && p->index == b->index;
  }
  /* A weight that several stages hold (tied) is saved once per stage. */
  if (same_index > 1)
    snprintf(out, size, "param%d.stage%d", b->index, b->stage);
  else
    snprintf(out, size, "param%d", b->index);
}

int32_t pprt_ordered_params(const pprt_context *ctx, int32_t *ids) {
  return pprt_ordered_buffers(ctx, PPRT_PARAM, ids);
}

int32_t pprt_ordered_buffers(const pprt_context *ctx, int32_t kind,
                             int32_t *ids) {
  int32_t n = 0;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!b->defined || b->kind != kind)
      continue;
    int32_t k = n++;
    for (; k > 0; --k) {
      const pprt_buffer_desc *prev = &ctx->buffers[ids[k - 1]];
      if (prev->index < b->index ||
          (prev->index == b->index && prev->stage <= b->stage))
        break;
      ids[k] = ids[k - 1];
    }
    ids[k] = id;
  }
  return n;
}

const char *pprt_tensor_mismatch(const pprt_buffer_desc *local,
                                 const pprt_st_tensor *t, char *why,
                                 size_t size) {
  /* Files hold the global tensor of a split param. */
  pprt_buffer_desc global = pprt_global_desc(local);
  const pprt_buffer_desc *b = &global;
  bool same = t->ndims == b->ndims &&
              strcmp(t->dtype, pprt_st_dtype_name(b->dtype)) == 0;
  for (int32_t d = 0; same && d < b->ndims; ++d)
    same = t->dims[d] == b->dims[d];
  if (same)
    return NULL;
  /* Room for every dim as ",-9223372036854775808". */
  char want[PPRT_MAX_DIMS * 21] = "", got[PPRT_ST_MAX_DIMS * 21] = "";
  size_t n = 0;
  for (int32_t d = 0; d < b->ndims && n < sizeof want; ++d)
    n += (size_t)snprintf(want + n, sizeof want - n, "%s%lld", d ? "," : "",
                          (long long)b->dims[d]);
  n = 0;
  for (int32_t d = 0; d < t->ndims && n < sizeof got; ++d)
    n += (size_t)snprintf(got + n, sizeof got - n, "%s%lld", d ? "," : "",
                          (long long)t->dims[d]);
  snprintf(why, size, "is %s [%s] in the file, but the model's is %s [%s]",
           t->dtype, got, pprt_st_dtype_name(b->dtype), want);
  return why;
}

bool pprt_check_state_values(const pprt_safetensors *st,
                             const pprt_st_tensor *t, int32_t part,
                             bool allow_non_finite, char *err,
                             size_t err_size) {
  /* The optimizer computes on f32 alone; other dtypes hold what they may. */
  if (strcmp(t->dtype, "F32") != 0 || part == PPRT_PART_ADAM_STEP)
    return true;
  uint64_t n = (t->end - t->begin) / sizeof(float);
  for (uint64_t i = 0; i < n; ++i) {
    float v;
    memcpy(&v, st->data + t->begin + i * sizeof v, sizeof v);
    const char *why = NULL;
    if (part == PPRT_PART_ADAM_V && !(v >= 0.0f))
      why = "Adam's second moments must be >= 0";
    else if (!isfinite(v) && (part != PPRT_PART_VALUES || !allow_non_finite))
      why = part == PPRT_PART_VALUES
                ? "weights must be finite (--allow-non-finite loads them)"
                : "Adam's moments must be finite";
    if (why) {
      snprintf(err, err_size, "tensor '%s' holds %g at element %llu; %s",
               t->name, (double)v, (unsigned long long)i, why);
      return false;
    }
  }
  return true;
}

/* Checks that the file holds every param and state with its dtype and
   shape, and values the run can start from. */
static bool check_weights(const pprt_context *ctx, const pprt_safetensors *st,
                          char *err, size_t err_size) {
  char name[64], why[384];
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!b->defined || (b->kind != PPRT_PARAM && b->kind != PPRT_STATE))
      continue;
    pprt_param_name(ctx, b, name, sizeof name);
    const pprt_st_tensor *t = pprt_st_find(st, name);
    if (!t) {
      snprintf(err, err_size, "no tensor '%s' (stage %d's %s)", name, b->stage,
               b->kind == PPRT_STATE ? "state" : "weight");
      return false;
    }
    if (pprt_tensor_mismatch(b, t, why, sizeof why)) {
      snprintf(err, err_size, "tensor '%s' %s", name, why);
      return false;
    }
    if (!pprt_check_state_values(st, t, PPRT_PART_VALUES,
                                 ctx->opts.allow_non_finite, err, err_size))
      return false;
  }
  return true;
}

static bool has_params(const pprt_context *ctx) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id)
    if (ctx->buffers[id].defined && ctx->buffers[id].kind == PPRT_PARAM)
      return true;
  return false;
}

bool pprt_agree(pprt_context *ctx, bool ok, const char *option,
                const char *path, const char *err) {
  pprt_transport *t = ctx->transport;
  int32_t first_failed = ok ? INT32_MAX : t->world_rank;
  char what[4200];
  snprintf(what, sizeof what, "%s '%s'", option, path);
  pprt_min_everywhere(ctx, &first_failed, 1, what);
  if (first_failed == t->world_rank) {
    fprintf(stderr, "pprt: rank %d: %s '%s': %s\n", t->world_rank, option, path,
            err);
    fflush(stderr);
  }
  return first_failed == INT32_MAX;
}

bool pprt_weights_prepare(pprt_driver *d) {
  pprt_context *ctx = d->ctx;
  const char *path = d->opts.init_weights_path;
  const char *option = path ? "--init-weights" : "--save";
  if (!path && !d->opts.save_path)
    return true;
  if (!has_params(ctx))
    return pprt_agree(ctx, false, option, path ? path : d->opts.save_path,
                      "the program has no parameters");
  if (!path)
    return true;
  char err[512] = "";
  pprt_safetensors *st = pprt_xcalloc(ctx, 1, sizeof *st);
  bool ok = pprt_st_read(path, st, err, sizeof err) &&
            check_weights(ctx, st, err, sizeof err);
  if (!pprt_agree(ctx, ok, option, path, err)) {
    pprt_st_free(st);
    free(st);
    return false;
  }
  d->init_weights = st;
  return true;
}

void pprt_weights_init_param(const pprt_driver *d, const pprt_buffer_desc *b,
                             void *out) {
  char name[64];
  pprt_param_name(d->ctx, b, name, sizeof name);
  /* pprt_weights_prepare checked presence, dtype and shape. */
  const pprt_st_tensor *t = pprt_st_find(d->init_weights, name);
  memcpy(out, d->init_weights->data + t->begin, (size_t)b->bytes);
}

void pprt_weights_free(pprt_driver *d) {
  if (!d->init_weights)
    return;
  pprt_st_free(d->init_weights);
  free(d->init_weights);
  d->init_weights = NULL;
}

/* Rank 0 starts the file: one entry per param, in `ids` order. */
static pprt_st_writer *begin_file(const pprt_driver *d, const char *path,
                                  const int32_t *ids, int32_t n, char *err,
                                  size_t err_size) {
  const pprt_context *ctx = d->ctx;
  pprt_st_entry *entries = pprt_xcalloc(ctx, (size_t)n, sizeof *entries);
  char(*names)[64] = pprt_xcalloc(ctx, (size_t)n, sizeof *names);
  pprt_buffer_desc *global = pprt_xcalloc(ctx, (size_t)n, sizeof *global);
  for (int32_t i = 0; i < n; ++i) {
    global[i] = pprt_global_desc(&ctx->buffers[ids[i]]);
    const pprt_buffer_desc *b = &global[i];
    pprt_param_name(ctx, b, names[i], sizeof names[i]);
    entries[i] = (pprt_st_entry){names[i], pprt_st_dtype_name(b->dtype),
                                 b->ndims, b->dims};
  }
  char step[32];
  snprintf(step, sizeof step, "%lld",
           (long long)(d->opts.first_step - 1 + d->opts.steps));
  const char *keys[] = {"format", "producer", "step"};
  const char *values[] = {"pt", "pprt", step};
  pprt_st_writer *w =
      pprt_st_writer_begin(path, entries, n, keys, values, 3, err, err_size);
  free(global);
  free(names);
  free(entries);
  return w;
}

/* The owner's host copy of part `part` of param `b` (see
   pprt_param_part_bytes): zeros for moments not allocated yet. */
static const void *part_on_owner(pprt_context *ctx, pprt_buffer_desc *b,
                                 int32_t id, int32_t part, int64_t bytes) {
  if (part == PPRT_PART_ADAM_STEP)
    return &b->num_updates;
  void *data = part == PPRT_PART_VALUES   ? pprt_slot_data(ctx, b, id, 0)
               : part == PPRT_PART_ADAM_M ? b->moment1
                                          : b->moment2;
  if (data)
    return pprt_to_host(ctx, data, (size_t)bytes);
  void *zeros = pprt_staging(ctx, (size_t)bytes);
  memset(zeros, 0, (size_t)bytes);
  return zeros;
}

/* Every owner sends in file order and MPI keeps the order of messages with
   one tag, so the parts need no tag of their own (and no limit on the
   param count). */
const void *pprt_param_part_bytes(pprt_context *ctx, int32_t id, int32_t owner,
                                  int32_t part, const void *owned,
                                  const char *option) {
  enum { TAG = 0 };
  pprt_transport *t = pprt_host_transport(ctx->transport);
  pprt_buffer_desc *b = &ctx->buffers[id];
  int64_t bytes =
      part == PPRT_PART_ADAM_STEP ? (int64_t)sizeof b->num_updates : b->bytes;
  if (owner == t->world_rank) {
    const void *host = owned ? owned : part_on_owner(ctx, b, id, part, bytes);
    if (t->world_rank != 0 &&
        !t->ops->wait_for(t, t->ops->isend(t, host, bytes, 0, TAG),
                          ctx->opts.timeout_s))
      pprt_fatal_silent(ctx, 0, "rank 0 to take param %d for %s", b->index,
                        option);
    return host;
  }
  if (t->world_rank != 0)
    return NULL;
  void *host = pprt_staging(ctx, (size_t)bytes);
  pprt_recv_status s =
      t->ops->recv(t, host, bytes, owner, TAG, ctx->opts.timeout_s);
  if (s == PPRT_RECV_TIMEOUT)
    pprt_fatal_silent(ctx, owner, "param %d for %s from rank %d", b->index,
                      option, owner);
  if (s != PPRT_RECV_OK)
    pprt_fatal(ctx, "%s: param %d from rank %d has the wrong size", option,
               b->index, owner);
  return host;
}

/* Rank 0's starting point for the global tensor of split param `b` when a
   block has no owner (no rank touched it): the initial values, or zeros
   for the optimizer state. */
static void unowned_blocks(pprt_context *ctx, const pprt_buffer_desc *b,
                           int32_t id, int32_t part, void *whole) {
  pprt_buffer_desc global = pprt_global_desc(b);
  if (part == PPRT_PART_VALUES)
    ctx->data.init_param(ctx->data.self, ctx, &global, id, whole);
  else
    memset(whole, 0, (size_t)global.bytes);
}

const void *pprt_param_global_part(pprt_context *ctx, int32_t id,
                                   const int32_t *owners, int32_t part,
                                   const void *owned, const char *option,
                                   void *whole) {
  pprt_buffer_desc *b = &ctx->buffers[id];
  int32_t me = ctx->transport->world_rank;
  if (!pprt_is_split(b) || part == PPRT_PART_ADAM_STEP) {
    /* A param nobody touched still has its initial values: rank 0 makes
       them. */
    int32_t from = owners[0] == INT32_MAX ? 0 : owners[0];
    return pprt_param_part_bytes(ctx, id, from, part, owned, option);
  }
  bool unowned = false;
  for (int32_t k = 0; k < b->split_parts; ++k)
    unowned = unowned || owners[k] == INT32_MAX;
  if (me == 0 && unowned)
    unowned_blocks(ctx, b, id, part, whole);
  for (int32_t k = 0; k < b->split_parts; ++k) {
    if (owners[k] == INT32_MAX)
      continue;
    const void *block = pprt_param_part_bytes(
        ctx, id, owners[k], part, owners[k] == me ? owned : NULL, option);
    if (me == 0)
      pprt_block_to_global(b, k, block, whole);
  }
  return me == 0 ? whole : NULL;
}

/* Writes every param, then every state (both from replica 0), to `path`
   through world rank 0;
   false there, with the reason in `err`, if that failed. Collective. */
static bool save_to(pprt_driver *d, const char *path, int64_t step, char *err,
                    size_t err_size) {
  (void)step;
  pprt_context *ctx = d->ctx;
  int32_t cap = ctx->num_buffers ? ctx->num_buffers : 1;
  int32_t tp = ctx->tensor_parallel;
  int32_t *ids = pprt_xcalloc(ctx, (size_t)cap, sizeof *ids);
  int32_t *owner = pprt_xcalloc(ctx, (size_t)cap * (size_t)tp, sizeof *owner);
  int32_t n = pprt_ordered_params(ctx, ids);
  n += pprt_ordered_buffers(ctx, PPRT_STATE, ids + n);
  pprt_elect_owners(ctx, ids, n, owner);
  bool root = ctx->transport->world_rank == 0;
  pprt_st_writer *w = root ? begin_file(d, path, ids, n, err, err_size) : NULL;
  bool ok = !root || w;
  for (int32_t i = 0; i < n; ++i) {
    int64_t bytes = pprt_global_desc(&ctx->buffers[ids[i]]).bytes;
    void *whole = root ? pprt_xcalloc(ctx, 1, (size_t)bytes) : NULL;
    const void *host = pprt_param_global_part(
        ctx, ids[i], owner + i * tp, PPRT_PART_VALUES, NULL, "--save", whole);
    if (root && ok)
      ok = pprt_st_writer_data(w, host, (size_t)bytes, err, err_size);
    free(whole);
  }
  if (w)
    ok = pprt_st_writer_finish(w, ok, err, err_size);
  free(owner);
  free(ids);
  return ok;
}

bool pprt_weights_save(pprt_driver *d) {
  char err[512] = "";
  const char *path = d->opts.save_path;
  bool ok = save_to(d, path, 0, err, sizeof err);
  if (pprt_agree(d->ctx, ok, "--save", path, err))
    return true;
  char rescued[4400];
  if (pprt_rescue_state(d, save_to, "--save", path, 0, rescued,
                        sizeof rescued) &&
      d->ctx->transport->world_rank == 0)
    fprintf(stderr,
            "pprt: rank 0: --save: the trained weights are in '%s' instead "
            "of '%s'\n",
            rescued, path);
  fflush(stderr);
  return false;
}
