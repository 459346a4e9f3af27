/* Tensor parallelism: the rank layout, split buffers and the collectives
   stage code calls over a pipeline rank's group of processes. */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This process's tp index, for pprt_tp_index (which has no context). */
static int32_t process_tp_index;

void pprt_set_tensor_parallel(pprt_context *ctx, int32_t tensor_parallel) {
  pprt_require_program(ctx, "pprt_set_tensor_parallel");
  if (tensor_parallel < 1)
    pprt_fatal(ctx,
               "pprt_set_tensor_parallel: %d processes per pipeline rank; "
               "must be >= 1",
               tensor_parallel);
  ctx->tensor_parallel = tensor_parallel;
}

void pprt_set_buffer_split(pprt_context *ctx, int32_t id, int32_t dim,
                           int32_t parts) {
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if (b->kind != PPRT_PARAM && b->kind != PPRT_PARAM_GRAD)
    pprt_fatal(ctx,
               "pprt_set_buffer_split: buffer %d (stage %d) is no param or "
               "param gradient",
               id, b->stage);
  if (dim < 0 || dim >= b->ndims)
    pprt_fatal(ctx,
               "pprt_set_buffer_split: buffer %d (param %d of stage %d): "
               "split dim %d out of range 0..%d",
               id, b->index, b->stage, dim, b->ndims - 1);
  if (parts < 1)
    pprt_fatal(ctx,
               "pprt_set_buffer_split: buffer %d (param %d of stage %d): "
               "%d parts; must be >= 1",
               id, b->index, b->stage, parts);
  b->split_dim = dim;
  b->split_parts = parts;
}

bool pprt_is_split(const pprt_buffer_desc *b) { return b->split_parts > 1; }

/* The PARAM a PARAM_GRAD belongs to: same index, preferring its stage. */
static const pprt_buffer_desc *param_of(const pprt_context *ctx,
                                        const pprt_buffer_desc *g) {
  const pprt_buffer_desc *found = NULL;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *p = &ctx->buffers[id];
    if (p->defined && p->kind == PPRT_PARAM && p->index == g->index &&
        (!found || p->stage == g->stage))
      found = p;
  }
  return found;
}

bool pprt_check_splits(const pprt_context *ctx, char *err, size_t err_size) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!b->defined || b->split_parts == 0)
      continue;
    if (b->split_parts != ctx->tensor_parallel) {
      snprintf(err, err_size,
               "buffer %d (param %d of stage %d) is split in %d parts, but "
               "the program runs %d tensor-parallel processes per pipeline "
               "rank",
               id, b->index, b->stage, b->split_parts, ctx->tensor_parallel);
      return false;
    }
    const pprt_buffer_desc *p =
        b->kind == PPRT_PARAM_GRAD ? param_of(ctx, b) : NULL;
    if (p &&
        (p->split_parts != b->split_parts || p->split_dim != b->split_dim)) {
      snprintf(err, err_size,
               "gradient buffer %d of param %d (stage %d) is split along dim "
               "%d, unlike its param",
               id, b->index, b->stage, b->split_dim);
      return false;
    }
  }
  return true;
}

int32_t pprt_world_rank_of(const pprt_context *ctx, int32_t rank) {
  return ctx->tp_index +
         ctx->tensor_parallel * (rank + ctx->num_ranks * ctx->replica);
}

void pprt_split_world(pprt_context *ctx) {
  pprt_transport *t = ctx->transport;
  int32_t tp = ctx->tensor_parallel;
  /* Every process splits the same times in the same order. */
  ctx->dp_group = t->ops->split_groups(
      t, ctx->tp_index + tp * ctx->pipeline_rank, ctx->replica);
  if (tp > 1)
    ctx->tp_group = t->ops->split_groups(
        t, ctx->pipeline_rank + ctx->num_ranks * ctx->replica, ctx->tp_index);
  process_tp_index = ctx->tp_index;
}

pprt_buffer_desc pprt_global_desc(const pprt_buffer_desc *b) {
  pprt_buffer_desc g = *b;
  if (!pprt_is_split(b))
    return g;
  g.dims[b->split_dim] *= b->split_parts;
  g.numel *= b->split_parts;
  g.bytes *= b->split_parts;
  return g;
}

/* Copies block `block` of split buffer `b` between its global tensor and
   its local storage: [outer, dims[dim], inner] locally, [outer, parts *
   dims[dim], inner] globally, block `block` at offset block * dims[dim] of
   the middle. */
static void copy_block(const pprt_buffer_desc *b, int32_t block,
                       const char *from, char *to, bool to_local) {
  int64_t outer = 1, inner = b->elem_size;
  for (int32_t d = 0; d < b->split_dim; ++d)
    outer *= b->dims[d];
  for (int32_t d = b->split_dim + 1; d < b->ndims; ++d)
    inner *= b->dims[d];
  int64_t run = b->dims[b->split_dim] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t global = (o * b->split_parts + block) * run, local = o * run;
    memcpy(to + (to_local ? local : global), from + (to_local ? global : local),
           (size_t)run);
  }
}

void pprt_block_from_global(const pprt_buffer_desc *b, int32_t block,
                            const void *global, void *local) {
  copy_block(b, block, global, local, true);
}

void pprt_block_to_global(const pprt_buffer_desc *b, int32_t block,
                          const void *local, void *global) {
  copy_block(b, block, local, global, false);
}

int32_t pprt_tp_index(void) { return process_tp_index; }

/* The running action's context, for a collective stage code calls. */
static pprt_context *collective_context(const char *what) {
  pprt_context *ctx = pprt_running_context();
  if (!ctx) {
    fprintf(stderr, "pprt: %s called outside a stage action\n", what);
    fflush(stderr);
    abort();
  }
  return ctx;
}

/* Aborts unless `dtype` is one the transport's collectives sum. */
static void require_f32(const pprt_context *ctx, int32_t dtype,
                        const char *what) {
  if (dtype != PPRT_F32)
    pprt_fatal(ctx,
               "%s in stage %d micro-batch %d: element type %s; only f32 is "
               "supported so far",
               what, ctx->action_stage, ctx->action_mb, pprt_dtype_name(dtype));
}

/* Completes collective `handle` over the tensor group, or ends the job
   naming the silent rank and the group. */
static void finish(pprt_context *ctx, int32_t handle, const char *what,
                   int64_t count) {
  pprt_transport *t = ctx->transport;
  if (t->ops->wait_for(t, handle, ctx->opts.timeout_s))
    return;
  int32_t first = pprt_world_rank_of(ctx, ctx->pipeline_rank) - ctx->tp_index;
  pprt_fatal_silent(ctx, PPRT_EVERYONE,
                    "the tensor-parallel %s of %lld f32 in stage %d "
                    "micro-batch %d over the tensor group of pipeline rank "
                    "%d, replica %d (world ranks %d..%d)",
                    what, (long long)count, ctx->action_stage, ctx->action_mb,
                    ctx->pipeline_rank, ctx->replica, first,
                    first + ctx->tensor_parallel - 1);
}

/* The collective's name in messages: "all-reduce" for a sum. */
static const char *all_reduce_name(int32_t reduction) {
  switch (reduction) {
  case PPRT_REDUCE_SUM:
    return "all-reduce";
  case PPRT_REDUCE_MAX:
    return "max all-reduce";
  case PPRT_REDUCE_MIN:
    return "min all-reduce";
  default:
    return NULL;
  }
}

void pprt_tp_all_reduce(int32_t dtype, void *buf, int64_t count,
                        int32_t reduction) {
  pprt_context *ctx = collective_context("pprt_tp_all_reduce");
  const char *what = all_reduce_name(reduction);
  if (!what)
    pprt_fatal(ctx,
               "pprt_tp_all_reduce in stage %d micro-batch %d: unknown "
               "reduction %d (sum 0, max 1, min 2)",
               ctx->action_stage, ctx->action_mb, reduction);
  if (ctx->tensor_parallel == 1 || count == 0)
    return;
  require_f32(ctx, dtype, "pprt_tp_all_reduce");
  pprt_core_enter(ctx);
  pprt_transport *t = ctx->transport;
  finish(ctx,
         t->ops->iallreduce_group_f32(t, ctx->tp_group, buf, count,
                                      (pprt_reduction)reduction),
         what, count);
  pprt_core_leave(ctx);
}

void pprt_tp_all_gather(int32_t dtype, const void *send, void *recv,
                        int64_t count) {
  pprt_context *ctx = collective_context("pprt_tp_all_gather");
  require_f32(ctx, dtype, "pprt_tp_all_gather");
  if (count == 0)
    return;
  pprt_core_enter(ctx);
  /* In place: this process's block first goes where it belongs. */
  float *own = (float *)recv + ctx->tp_index * count;
  if ((const float *)send != own)
    pprt_copy_f32(ctx, own, send, count);
  if (ctx->tensor_parallel > 1) {
    pprt_transport *t = ctx->transport;
    finish(ctx,
           t->ops->iallgather_group_f32(t, ctx->tp_group, recv, count,
                                        ctx->tensor_parallel),
           "all-gather", count * ctx->tensor_parallel);
  }
  pprt_core_leave(ctx);
}
