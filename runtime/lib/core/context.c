/* Runtime context: program and buffer definitions, lazy storage, errors. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
    "param",       "param-grad", "input",     "target",
    "micro-batch", "loss",       "loss-grad", "state",
};

const char *pprt_dtype_name(int32_t dtype) {
  static const char *const names[] = {"f32", "f16", "bf16", "i32", "i64", "i1"};
  return dtype >= PPRT_F32 && dtype <= PPRT_I1 ? names[dtype] : "unknown";
}

void pprt_require_f32(const pprt_context *ctx, const pprt_buffer_desc *b,
                      int32_t id, const char *what) {
  if (b->dtype != PPRT_F32)
    pprt_fatal(ctx,
               "%s: buffer %d (%s of stage %d) holds %s; only f32 is "
               "supported so far",
               what, id, kind_names[b->kind], b->stage,
               pprt_dtype_name(b->dtype));
}

_Noreturn void pprt_fatal(const pprt_context *ctx, const char *fmt, ...) {
  int32_t rank = ctx && ctx->transport ? ctx->transport->world_rank : -1;
  va_list ap;
  va_start(ap, fmt);
  /* Build the line first so concurrent ranks do not interleave pieces. */
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "pprt: rank %d: %s\n", rank, msg);
  fflush(stderr);
  if (ctx && ctx->transport)
    ctx->transport->ops->abort(ctx->transport, 1);
  exit(1);
}

void *pprt_xcalloc(const pprt_context *ctx, size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p)
    pprt_fatal(ctx, "out of memory allocating %zu x %zu bytes", n, size);
  return p;
}

void pprt_reserve(const pprt_context *ctx, void **data, int64_t *cap, int64_t n,
                  size_t size, const char *what) {
  if (n < *cap)
    return;
  int64_t grown = *cap ? 2 * *cap : 16;
  void *p = realloc(*data, (size_t)grown * size);
  if (!p)
    pprt_fatal(ctx, "out of memory growing %s", what);
  *data = p;
  *cap = grown;
}

void *pprt_device_alloc(pprt_context *ctx, size_t bytes, const char *what) {
  void *p = ctx->backend->ops->alloc(ctx->backend, bytes);
  if (!p)
    pprt_fatal(ctx, "%s backend: out of memory allocating %zu bytes for %s",
               ctx->backend->ops->name, bytes, what);
  return p;
}

void *pprt_staging(pprt_context *ctx, size_t bytes) {
  if (bytes > ctx->staging_bytes) {
    free(ctx->staging);
    ctx->staging = pprt_xcalloc(ctx, bytes, 1);
    ctx->staging_bytes = bytes;
  }
  return ctx->staging;
}

const void *pprt_to_host(pprt_context *ctx, const void *data, size_t bytes) {
  void *host = pprt_staging(ctx, bytes);
  ctx->backend->ops->copy_to_host(ctx->backend, host, data, bytes);
  return host;
}

void pprt_core_enter(pprt_context *ctx) {
  if (ctx->in_stage)
    ctx->backend->ops->stage_end(ctx->backend);
}

void pprt_core_leave(pprt_context *ctx) {
  if (ctx->in_stage)
    ctx->backend->ops->stage_begin(ctx->backend);
}

pprt_context *pprt_context_create(pprt_transport *t, pprt_backend *be,
                                  const pprt_options *o) {
  pprt_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) {
    fprintf(stderr, "pprt: rank %d: out of memory\n", t->world_rank);
    t->ops->abort(t, 1);
  }
  ctx->transport = t;
  ctx->backend = be;
  ctx->opts = *o;
  ctx->num_replicas = 1;
  ctx->tensor_parallel = 1;
  ctx->dp_group = -1;
  ctx->tp_group = -1;
  ctx->weight_versions = 1;
  ctx->run_end = 1; /* until pprt_set_run: every step runs flushed */
  return ctx;
}

void pprt_set_data_source(pprt_context *ctx, const pprt_data_source *src) {
  ctx->data = *src;
}

const pprt_data_source *pprt_get_data_source(const pprt_context *ctx) {
  return &ctx->data;
}

void pprt_set_observer(pprt_context *ctx, const pprt_observer *obs) {
  ctx->observer = obs ? *obs : (pprt_observer){0};
}

void pprt_context_destroy(pprt_context *ctx) {
  pprt_backend *be = ctx->backend;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *b = &ctx->buffers[id];
    for (int32_t s = 0; s < b->num_slots; ++s)
      if (b->slots[s].data)
        be->ops->free(be, b->slots[s].data);
    free(b->slots);
    if (b->moment1) {
      be->ops->free(be, b->moment1);
      be->ops->free(be, b->moment2);
    }
    if (b->older)
      be->ops->free(be, b->older);
    if (b->zero_shard)
      be->ops->free(be, b->zero_shard);
    if (b->zero_padded)
      be->ops->free(be, b->zero_padded);
  }
  free(ctx->buffers);
  free(ctx->stage_zero);
  pprt_free_pool(ctx);
  if (!ctx->num_plans) {
    free(ctx->microbatch_variant);
    free(ctx->microbatch_rows_before);
  }
  pprt_free_plans(ctx);
  free(ctx->staging);
  free(ctx->pending);
  free(ctx->group);
  free(ctx->saved);
  free(ctx);
}

/* Reports a start-up problem once (from rank 0) instead of P times. */
static bool start_error(const pprt_context *ctx, const char *msg) {
  if (ctx->transport->world_rank == 0) {
    fprintf(stderr, "pprt: rank 0: %s\n", msg);
    fflush(stderr);
  }
  return false;
}

/* Why the world cannot run the program's layout, in `msg`; "" if it can. */
static void check_world(const pprt_context *ctx, char *msg, size_t size) {
  int32_t world = ctx->transport->world_size, declared = ctx->declared_replicas;
  int32_t t = ctx->tensor_parallel, group = ctx->num_ranks * t;
  char tp[64] = "";
  if (t > 1)
    snprintf(tp, sizeof tp, " x %d tensor-parallel processes", t);
  msg[0] = '\0';
  if (declared && world != group * declared)
    snprintf(msg, size,
             "world size %d does not match the program: %d pipeline "
             "ranks%s x %d data-parallel replicas; run with mpirun -np %d",
             world, ctx->num_ranks, tp, declared, group * declared);
  else if (world % group != 0)
    snprintf(msg, size,
             "world size %d is not a multiple of the program's %d pipeline "
             "ranks%s; run with mpirun -np <k * %d>",
             world, ctx->num_ranks, tp, group);
}

static void count_variant_rows(pprt_context *ctx);

bool pprt_context_start(pprt_context *ctx) {
  pprt_transport *t = ctx->transport;
  if (!ctx->program_set)
    return start_error(ctx, "pp_define_program did not call pprt_set_program");
  char msg[512];
  check_world(ctx, msg, sizeof msg);
  if (msg[0] || !pprt_check_splits(ctx, msg, sizeof msg))
    return start_error(ctx, msg);
  if (ctx->opts.zero == 3 && !ctx->zero_in_schedule)
    return start_error(ctx, "--zero 3 needs a program compiled with --zero 3, "
                            "whose schedule gathers each stage's weights "
                            "before its first compute; recompile");
  count_variant_rows(ctx);
  int32_t tp = ctx->tensor_parallel, group = ctx->num_ranks * tp;
  ctx->tp_index = t->world_rank % tp;
  ctx->pipeline_rank = t->world_rank / tp % ctx->num_ranks;
  ctx->replica = t->world_rank / group;
  ctx->num_replicas = t->world_size / group;
  /* MPI_Comm_split blocks without a timeout: meet within one first, so
     that a rank lost before it is named instead of hanging the others. */
  int32_t started = 1;
  pprt_min_everywhere(ctx, &started, 1, "the start");
  pprt_split_world(ctx);
  return true;
}

void pprt_set_program(pprt_context *ctx, int32_t abi_version, int32_t num_ranks,
                      int32_t num_stages, int32_t num_microbatches) {
  if (ctx->program_set)
    pprt_fatal(ctx, "pprt_set_program called twice");
  if (abi_version != PPRT_ABI_VERSION)
    pprt_fatal(ctx,
               "the program was compiled for pprt ABI version %d, but this "
               "runtime implements version %d; rebuild it with the pp-compile "
               "of this runtime",
               abi_version, PPRT_ABI_VERSION);
  if (num_ranks < 1 || num_stages < 1 || num_microbatches < 1)
    pprt_fatal(ctx,
               "pprt_set_program: invalid shape (ranks %d, stages %d, "
               "micro-batches %d); all must be >= 1",
               num_ranks, num_stages, num_microbatches);
  ctx->num_ranks = num_ranks;
  ctx->num_stages = num_stages;
  ctx->num_microbatches = num_microbatches;
  ctx->num_slices = 1;
  ctx->program_set = true;
}

void pprt_require_program(const pprt_context *ctx, const char *call) {
  if (!ctx->program_set)
    pprt_fatal(ctx, "%s before pprt_set_program", call);
}

void pprt_set_data_parallel(pprt_context *ctx, int32_t num_replicas) {
  pprt_require_program(ctx, "pprt_set_data_parallel");
  if (num_replicas < 1)
    pprt_fatal(ctx, "pprt_set_data_parallel: %d replicas; must be >= 1",
               num_replicas);
  ctx->declared_replicas = num_replicas;
}

void pprt_set_weight_versions(pprt_context *ctx, int32_t num_versions) {
  pprt_require_program(ctx, "pprt_set_weight_versions");
  if (num_versions != 1 && num_versions != 2)
    pprt_fatal(ctx, "pprt_set_weight_versions: %d versions; must be 1 or 2",
               num_versions);
  ctx->weight_versions = num_versions;
}

void pprt_set_stage_zero(pprt_context *ctx, int32_t stage, int32_t zero) {
  pprt_require_program(ctx, "pprt_set_stage_zero");
  if (stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "pprt_set_stage_zero: stage %d out of range 0..%d", stage,
               ctx->num_stages - 1);
  if (zero != 0 && zero != 1 && zero != 3)
    pprt_fatal(ctx, "pprt_set_stage_zero: ZeRO stage %d; must be 0, 1 or 3",
               zero);
  if (ctx->opts.zero >= 0 && ctx->opts.zero != zero)
    pprt_fatal(ctx,
               "--zero %d contradicts the program, compiled with --zero %d "
               "for stage %d (its schedule %s); leave --zero out or "
               "recompile",
               ctx->opts.zero, zero, stage,
               zero == 0   ? "all-reduces its gradients"
               : zero == 3 ? "reduce-scatters its gradients and all-gathers "
                             "its weights before its first compute"
                           : "reduce-scatters its gradients and all-gathers "
                             "its weights");
  if (!ctx->stage_zero)
    ctx->stage_zero =
        pprt_xcalloc(ctx, (size_t)ctx->num_stages, sizeof *ctx->stage_zero);
  ctx->stage_zero[stage] = zero;
  ctx->zero_in_schedule = true;
}

bool pprt_kind_is_persistent(int32_t kind) {
  return kind == PPRT_PARAM || kind == PPRT_PARAM_GRAD ||
         kind == PPRT_LOSS_GRAD || kind == PPRT_STATE;
}

/* Grows the id-indexed buffer table so that `id` is a valid index. */
static void reserve_id(pprt_context *ctx, int32_t id) {
  if (id < ctx->num_buffers)
    return;
  int32_t n = ctx->num_buffers ? ctx->num_buffers : 16;
  while (n <= id)
    n = n > INT32_MAX / 2 ? INT32_MAX : 2 * n;
  pprt_buffer_desc *grown = realloc(ctx->buffers, (size_t)n * sizeof *grown);
  if (!grown)
    pprt_fatal(ctx, "out of memory defining buffer %d", id);
  memset(grown + ctx->num_buffers, 0,
         (size_t)(n - ctx->num_buffers) * sizeof *grown);
  ctx->buffers = grown;
  ctx->num_buffers = n;
}

/* Bytes per element of `dtype`; aborts on an unknown type. */
static int64_t elem_size_of(const pprt_context *ctx, int32_t id,
                            int32_t dtype) {
  switch (dtype) {
  case PPRT_F32:
  case PPRT_I32:
    return 4;
  case PPRT_F16:
  case PPRT_BF16:
    return 2;
  case PPRT_I64:
    return 8;
  case PPRT_I1:
    return 1;
  default:
    pprt_fatal(ctx, "buffer %d: unknown element type %d", id, dtype);
  }
}

/* Checks the shape and returns its element count. */
static int64_t checked_numel(const pprt_context *ctx, int32_t id, int32_t stage,
                             int32_t ndims, const int64_t *dims) {
  if (ndims < 0 || ndims > PPRT_MAX_DIMS)
    pprt_fatal(ctx, "buffer %d of stage %d: rank %d out of range 0..%d", id,
               stage, ndims, PPRT_MAX_DIMS);
  if (ndims > 0 && !dims)
    pprt_fatal(ctx, "buffer %d of stage %d: rank %d but no dims", id, stage,
               ndims);
  int64_t numel = 1;
  for (int32_t i = 0; i < ndims; ++i) {
    if (dims[i] < 1)
      pprt_fatal(ctx, "buffer %d of stage %d: dim %d is %lld, not >= 1", id,
                 stage, i, (long long)dims[i]);
    if (numel > (INT64_MAX / 8) / dims[i]) /* room for 8-byte elements */
      pprt_fatal(ctx, "buffer %d of stage %d: shape too large", id, stage);
    numel *= dims[i];
  }
  return numel;
}

void pprt_define_buffer(pprt_context *ctx, int32_t id, int32_t kind,
                        int32_t stage, int32_t index, int32_t dtype,
                        int32_t ndims, const int64_t *dims) {
  if (!ctx->program_set)
    pprt_fatal(ctx, "pprt_define_buffer(%d) before pprt_set_program", id);
  if (id < 0 || id >= PPRT_MAX_BUFFERS)
    pprt_fatal(ctx, "buffer id %d out of range 0..%d", id,
               PPRT_MAX_BUFFERS - 1);
  if (kind < PPRT_PARAM || kind > PPRT_STATE)
    pprt_fatal(ctx, "buffer %d: unknown kind %d", id, kind);
  if (stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "buffer %d: stage %d out of range 0..%d", id, stage,
               ctx->num_stages - 1);
  int64_t numel = checked_numel(ctx, id, stage, ndims, dims);
  int64_t elem_size = elem_size_of(ctx, id, dtype);
  if ((kind == PPRT_LOSS || kind == PPRT_LOSS_GRAD) && numel != 1)
    pprt_fatal(ctx, "buffer %d: a %s buffer must hold one element, not %lld",
               id, kind_names[kind], (long long)numel);
  reserve_id(ctx, id);
  pprt_buffer_desc *b = &ctx->buffers[id];
  if (b->defined)
    pprt_fatal(ctx, "buffer %d defined twice", id);
  b->defined = true;
  b->kind = kind;
  b->stage = stage;
  b->index = index;
  b->ndims = ndims;
  for (int32_t i = 0; i < PPRT_MAX_DIMS; ++i)
    b->dims[i] = i < ndims ? dims[i] : 0;
  b->numel = numel;
  b->dtype = dtype;
  b->elem_size = elem_size;
  b->bytes = numel * b->elem_size;
  b->num_slots = pprt_kind_is_persistent(kind) ? 1 : ctx->num_microbatches;
  b->slots = pprt_xcalloc(ctx, (size_t)b->num_slots, sizeof *b->slots);
  for (int32_t s = 0; s < b->num_slots; ++s)
    b->slots[s].data_step = -1;
  b->split_dim = 0;
  b->split_parts = 0;
  b->reduce_handle = -1;
  b->gather_handle = -1;
  b->reduced_step = -1;
}

void pprt_set_id_bound(pprt_context *ctx, int32_t id, int64_t bound) {
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if ((b->kind != PPRT_INPUT && b->kind != PPRT_TARGET) ||
      (b->dtype != PPRT_I32 && b->dtype != PPRT_I64))
    pprt_fatal(
        ctx, "pprt_set_id_bound: buffer %d is no i32 or i64 data argument", id);
  if (bound < 1)
    pprt_fatal(ctx, "pprt_set_id_bound: buffer %d: bound %lld is not >= 1", id,
               (long long)bound);
  if (b->id_bound == 0 || bound < b->id_bound)
    b->id_bound = bound;
}

void pprt_set_id_ignored(pprt_context *ctx, int32_t id, int64_t value) {
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if (b->id_bound == 0)
    pprt_fatal(ctx, "pprt_set_id_ignored: buffer %d has no id bound", id);
  b->has_id_ignored = true;
  b->id_ignored = value;
}

void pprt_set_packed_input(pprt_context *ctx, int32_t id, int32_t role) {
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if (b->kind != PPRT_INPUT || (b->dtype != PPRT_I32 && b->dtype != PPRT_I64) ||
      b->ndims != 2)
    pprt_fatal(ctx,
               "pprt_set_packed_input: buffer %d is no i32 or i64 [rows, "
               "positions] input",
               id);
  if (role != PPRT_DOCUMENT_IDS && role != PPRT_POSITION_IDS)
    pprt_fatal(ctx, "pprt_set_packed_input: buffer %d: %d is no packed input",
               id, role);
  b->packed_input = role;
}

void pprt_set_buffer_variant(pprt_context *ctx, int32_t id, int32_t variant) {
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if (pprt_kind_is_persistent(b->kind) || b->kind == PPRT_LOSS)
    pprt_fatal(ctx,
               "pprt_set_buffer_variant: buffer %d is shared by every "
               "variant",
               id);
  if (variant < 0)
    pprt_fatal(ctx, "pprt_set_buffer_variant: buffer %d: variant %d < 0", id,
               variant);
  b->variant = variant;
}

void pprt_set_microbatch_variant(pprt_context *ctx, int32_t mb,
                                 int32_t variant) {
  pprt_require_program(ctx, "pprt_set_microbatch_variant");
  if (mb < 0 || mb >= ctx->num_microbatches || variant < 0)
    pprt_fatal(ctx,
               "pprt_set_microbatch_variant: micro-batch %d (of %d), "
               "variant %d",
               mb, ctx->num_microbatches, variant);
  if (!ctx->microbatch_variant)
    ctx->microbatch_variant = pprt_xcalloc(ctx, (size_t)ctx->num_microbatches,
                                           sizeof *ctx->microbatch_variant);
  ctx->microbatch_variant[mb] = variant;
}

void pprt_set_slices(pprt_context *ctx, int32_t slices) {
  pprt_require_program(ctx, "pprt_set_slices");
  if (slices < 1 || ctx->num_microbatches % slices != 0)
    pprt_fatal(ctx,
               "pprt_set_slices: %d slices do not divide the %d slices of "
               "the micro-batches",
               slices, ctx->num_microbatches);
  ctx->num_slices = slices;
}

int64_t pprt_variant_rows(const pprt_context *ctx, int32_t variant,
                          int32_t mb) {
  int64_t rows = -1;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!b->defined || b->variant != variant ||
        (b->kind != PPRT_INPUT && b->kind != PPRT_TARGET))
      continue;
    int64_t own = b->ndims > 0 ? b->dims[0] : 1;
    if (rows >= 0 && own != rows)
      pprt_fatal(ctx,
                 "variant %d's data buffers hold %lld and %lld rows; a "
                 "micro-batch's data arguments must agree",
                 variant, (long long)rows, (long long)own);
    rows = own;
  }
  if (rows < 0)
    pprt_fatal(ctx,
               "micro-batch %d runs variant %d, which has no data "
               "buffer",
               mb, variant);
  return rows;
}

/* The rows before each micro-batch under variants, from the defined
   buffers: once per program, not per data load. */
static void count_variant_rows(pprt_context *ctx) {
  if (ctx->num_slices > 1)
    return;
  if (ctx->num_plans) {
    pprt_count_plan_rows(ctx);
    return;
  }
  if (!ctx->microbatch_variant || ctx->microbatch_rows_before)
    return;
  int64_t *before =
      pprt_xcalloc(ctx, (size_t)ctx->num_microbatches + 1, sizeof *before);
  for (int32_t j = 0; j < ctx->num_microbatches; ++j)
    before[j + 1] =
        before[j] + pprt_variant_rows(ctx, ctx->microbatch_variant[j], j);
  ctx->microbatch_rows_before = before;
}

int64_t pprt_microbatch_first_row(const pprt_context *ctx,
                                  const pprt_buffer_desc *b, int32_t replica,
                                  int32_t mb) {
  if (ctx->num_plans)
    return pprt_plan_first_row(ctx, pprt_plan_line(ctx, pprt_action_step(ctx)),
                               replica, mb);
  if (ctx->num_slices > 1) {
    int64_t rows = b->ndims > 0 ? b->dims[0] : 1;
    int32_t per_step = ctx->num_microbatches / ctx->num_slices;
    return ((int64_t)replica * per_step + mb / ctx->num_slices) * rows;
  }
  if (!ctx->microbatch_variant) {
    int64_t rows = b->ndims > 0 ? b->dims[0] : 1;
    return ((int64_t)replica * ctx->num_microbatches + mb) * rows;
  }
  const int64_t *before = ctx->microbatch_rows_before;
  if (!before)
    pprt_fatal(ctx, "pprt_microbatch_first_row before the context started");
  return (int64_t)replica * before[ctx->num_microbatches] + before[mb];
}

void pprt_define_saved(pprt_context *ctx, int32_t id, int32_t stage,
                       int32_t until) {
  const pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if (pprt_kind_is_persistent(b->kind))
    pprt_fatal(ctx, "pprt_define_saved: buffer %d is not per micro-batch", id);
  if (stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "pprt_define_saved: stage %d out of range 0..%d", stage,
               ctx->num_stages - 1);
  if (until != PPRT_BACKWARD_INPUT && until != PPRT_BACKWARD_WEIGHT &&
      until != PPRT_BACKWARD)
    pprt_fatal(ctx,
               "pprt_define_saved: buffer %d held until phase %d, not "
               "a backward phase",
               id, until);
  pprt_reserve(ctx, (void **)&ctx->saved, &ctx->saved_cap, ctx->num_saved,
               sizeof *ctx->saved, "the saved buffers");
  ctx->saved[ctx->num_saved++] = (pprt_saved_buffer){id, stage, until};
}

pprt_buffer_desc *pprt_lookup(pprt_context *ctx, int32_t id) {
  if (id < 0 || id >= ctx->num_buffers || !ctx->buffers[id].defined)
    pprt_fatal(ctx, "unknown buffer id %d", id);
  return &ctx->buffers[id];
}

int32_t pprt_slot_index(pprt_context *ctx, const pprt_buffer_desc *b,
                        int32_t id, int32_t mb) {
  if (pprt_kind_is_persistent(b->kind))
    return 0;
  if (mb < 0 || mb >= ctx->num_microbatches)
    pprt_fatal(ctx, "buffer %d (%s): micro-batch %d out of range 0..%d", id,
               kind_names[b->kind], mb, ctx->num_microbatches - 1);
  return mb;
}

/* The driver's data source, which must have `slot`. */
static const pprt_data_source *source_of(pprt_context *ctx, bool has_slot,
                                         int32_t id) {
  if (!has_slot)
    pprt_fatal(ctx, "buffer %d: no data source to fill it from", id);
  return &ctx->data;
}

/* Device memory of `bytes` bytes with host contents `host`. */
static void *device_copy(pprt_context *ctx, const void *host, size_t bytes,
                         const char *what) {
  void *data = pprt_device_alloc(ctx, bytes, what);
  ctx->backend->ops->copy_to_device(ctx->backend, data, host, bytes);
  return data;
}

/* Gives PARAM `b`, just initialised, the optimizer state the data source
   resumes it with. */
static void restore_param_state(pprt_context *ctx, pprt_buffer_desc *b,
                                int32_t id) {
  const pprt_data_source *src = &ctx->data;
  int64_t updates = 0;
  const void *m = NULL, *v = NULL;
  pprt_buffer_desc global = pprt_global_desc(b);
  if (!src->param_state ||
      !src->param_state(src->self, ctx, &global, id, &updates, &m, &v))
    return;
  b->num_updates = updates;
  /* Adam allocates its moments on the first update; so a param never
     updated is resumed without them, as it was saved. */
  if (updates == 0)
    return;
  /* A split param keeps its tp index's block of the global moments. */
  void *local = NULL;
  if (pprt_is_split(b)) {
    local = pprt_xcalloc(ctx, 2, (size_t)b->bytes);
    pprt_block_from_global(b, ctx->tp_index, m, local);
    pprt_block_from_global(b, ctx->tp_index, v, (char *)local + b->bytes);
    m = local;
    v = (char *)local + b->bytes;
  }
  /* Under ZeRO-1 the replica keeps its block of the whole moments. */
  int64_t first = 0, length = b->numel;
  if (pprt_zero_sharded(ctx, b->stage))
    pprt_zero_block(ctx, b->numel, &first, &length);
  if (length == 0) {
    free(local);
    return;
  }
  b->moment_bytes = length * b->elem_size;
  int64_t skip = first * b->elem_size;
  b->moment1 = device_copy(ctx, (const char *)m + skip, (size_t)b->moment_bytes,
                           "Adam's moments");
  b->moment2 = device_copy(ctx, (const char *)v + skip, (size_t)b->moment_bytes,
                           "Adam's moments");
  ctx->optimizer_state_bytes += 2 * b->moment_bytes;
  free(local);
}

/* Gives freshly allocated (zeroed) storage its kind's initial contents,
   made in host staging. */
static void init_storage(pprt_context *ctx, pprt_buffer_desc *b, int32_t id,
                         void *data) {
  if (b->kind == PPRT_STATE) {
    /* Any element type: the data source gives its starting values. */
    void *host = pprt_staging(ctx, (size_t)b->bytes);
    const pprt_data_source *src =
        source_of(ctx, ctx->data.init_param != NULL, id);
    src->init_param(src->self, ctx, b, id, host);
    ctx->backend->ops->copy_to_device(ctx->backend, data, host,
                                      (size_t)b->bytes);
    return;
  }
  if (b->kind != PPRT_PARAM && b->kind != PPRT_LOSS_GRAD)
    return;
  pprt_require_f32(ctx, b, id, "initialising");
  float *host = pprt_staging(ctx, (size_t)b->bytes);
  if (b->kind == PPRT_PARAM && pprt_is_split(b)) {
    /* The data source makes the global tensor; this rank keeps its block. */
    const pprt_data_source *src =
        source_of(ctx, ctx->data.init_param != NULL, id);
    pprt_buffer_desc global = pprt_global_desc(b);
    void *whole = pprt_xcalloc(ctx, 1, (size_t)global.bytes);
    src->init_param(src->self, ctx, &global, id, whole);
    pprt_block_from_global(b, ctx->tp_index, whole, host);
    free(whole);
  } else if (b->kind == PPRT_PARAM) {
    const pprt_data_source *src =
        source_of(ctx, ctx->data.init_param != NULL, id);
    src->init_param(src->self, ctx, b, id, host);
  } else {
    host[0] = 1.0f;
  }
  ctx->backend->ops->copy_to_device(ctx->backend, data, host, (size_t)b->bytes);
  if (b->kind == PPRT_PARAM)
    restore_param_state(ctx, b, id);
}

/* Refuses ids of INPUT/TARGET `b` (slot `slot`, host copy `ids`) outside
   [0, id_bound), but the one the model ignores: a gather rewritten as a
   one-hot sum has no bounds check, so such an id would gather zeros and
   train silently, whichever data source wrote it. */
static void check_ids(const pprt_context *ctx, const pprt_buffer_desc *b,
                      int32_t slot, int64_t step, const void *ids) {
  if (b->id_bound <= 0)
    return;
  for (int64_t i = 0; i < b->numel; ++i) {
    int64_t v = b->dtype == PPRT_I64 ? ((const int64_t *)ids)[i]
                                     : ((const int32_t *)ids)[i];
    if ((v >= 0 && v < b->id_bound) ||
        (b->has_id_ignored && v == b->id_ignored))
      continue;
    int64_t row_size = b->ndims > 0 ? b->numel / b->dims[0] : 1;
    char ignored[48] = "";
    if (b->has_id_ignored)
      snprintf(ignored, sizeof ignored, " (or %lld, which it ignores)",
               (long long)b->id_ignored);
    pprt_fatal(ctx,
               "step %lld: %s argument %d of stage %d micro-batch %d holds id "
               "%lld at row %lld position %lld, but it indexes a table of "
               "%lld rows: ids must be in [0, %lld)%s",
               (long long)step + 1, kind_names[b->kind], b->index, b->stage,
               slot, (long long)v, (long long)(i / row_size),
               (long long)(i % row_size), (long long)b->id_bound,
               (long long)b->id_bound, ignored);
  }
}

/* Fills INPUT/TARGET slot `slot` with step `step`'s rows: replica r owns
   rows [r*B, (r+1)*B) of the step's global batch, micro-batch mb its mb-th
   block of dims[0] rows (under variants, the block after those of the
   micro-batches before it). */
static void load_data(pprt_context *ctx, const pprt_buffer_desc *b, int32_t id,
                      int32_t slot, int64_t step, void *data) {
  const pprt_data_source *src = source_of(ctx, ctx->data.load_rows != NULL, id);
  int64_t first_row =
      pprt_microbatch_first_row(ctx, b, pprt_data_replica(ctx), slot);
  void *host = pprt_staging(ctx, (size_t)b->bytes);
  src->load_rows(src->self, ctx, b, id, step, first_row, host);
  check_ids(ctx, b, slot, step, host);
  ctx->backend->ops->copy_to_device(ctx->backend, data, host, (size_t)b->bytes);
}

void *pprt_slot_data(pprt_context *ctx, pprt_buffer_desc *b, int32_t id,
                     int32_t slot) {
  pprt_slot *s = &b->slots[slot];
  /* Initialising it again would silently reset the weights. */
  if (!s->data && b->zero_weights)
    pprt_fatal(ctx,
               "param %d (stage %d) is read while ZeRO-3 keeps only this "
               "replica's block of it: its stage's pprt_all_gather must come "
               "first in the step",
               b->index, b->stage);
  if (!s->data && !pprt_kind_is_persistent(b->kind)) {
    pprt_microbatch_alloc(ctx, b, id, slot);
  } else if (!s->data) {
    char what[64];
    snprintf(what, sizeof what, "buffer %d", id);
    s->data = pprt_device_alloc(ctx, (size_t)b->bytes, what);
    s->capacity = b->bytes;
    init_storage(ctx, b, id, s->data);
  }
  bool is_data = b->kind == PPRT_INPUT || b->kind == PPRT_TARGET;
  int32_t replica = pprt_data_replica(ctx);
  /* Keyed by the action's own step: a no-flush call also runs the next
     step's first forwards. */
  int64_t step = pprt_action_step(ctx);
  if (is_data && (s->data_step != step || s->data_replica != replica)) {
    pprt_wait_slot_sends(ctx, id, slot);
    load_data(ctx, b, id, slot, step, s->data);
    s->data_step = step;
    s->data_replica = replica;
  }
  return s->data;
}

void *pprt_buffer(pprt_context *ctx, int32_t id, int32_t mb) {
  pprt_core_enter(ctx);
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  void *data =
      b->kind == PPRT_PARAM
          ? pprt_param_read_version(ctx, b, id)
          : pprt_slot_data(ctx, b, id, pprt_slot_index(ctx, b, id, mb));
  pprt_core_leave(ctx);
  return data;
}

int32_t pprt_rank(const pprt_context *ctx) { return ctx->pipeline_rank; }
int32_t pprt_num_ranks(const pprt_context *ctx) { return ctx->num_ranks; }
int32_t pprt_data_replica(const pprt_context *ctx) {
  return ctx->replica * ctx->opts.sequential_replicas + ctx->pass;
}
int32_t pprt_num_data_replicas(const pprt_context *ctx) {
  return ctx->num_replicas * ctx->opts.sequential_replicas;
}
int32_t pprt_replica(const pprt_context *ctx) { return pprt_data_replica(ctx); }
int32_t pprt_num_replicas(const pprt_context *ctx) {
  return pprt_num_data_replicas(ctx);
}
int32_t pprt_num_microbatches(const pprt_context *ctx) {
  return ctx->num_microbatches;
}
int64_t pprt_step(const pprt_context *ctx) { return pprt_action_step(ctx); }
