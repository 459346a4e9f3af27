/* ZeRO-1: the optimizer state sharded over the data-parallel replicas
   (ZeRO-3 shares its blocks, reduce-scatter and update: core/zero3.c).
   A stage's gradients are reduce-scattered instead of all-reduced, each
   replica updates its block of the weights (Adam's moments exist for that
   block only) and the replicas all-gather the updated weights: all of a
   stage's at once, completed at the end of its optimizer step. */
#include "core/core.h"

/* A buffer of `numel` values is split into `replicas` blocks of
   ceil(numel / replicas); the last ones are padded (with zeros, which sum
   to zero and are never read back). */
static int64_t block_numel(const pprt_context *ctx, int64_t numel) {
  return (numel + ctx->num_replicas - 1) / ctx->num_replicas;
}

void pprt_zero_block(const pprt_context *ctx, int64_t numel, int64_t *first,
                     int64_t *length) {
  int64_t block = block_numel(ctx, numel);
  *first = ctx->replica * block;
  *length = numel - *first < block ? numel - *first : block;
  if (*length < 0)
    *length = 0;
}

int32_t pprt_stage_zero(const pprt_context *ctx, int32_t stage) {
  if (ctx->stage_zero && stage >= 0 && stage < ctx->num_stages)
    return ctx->stage_zero[stage];
  return ctx->opts.zero < 0 ? 0 : ctx->opts.zero;
}

bool pprt_zero_in(const pprt_context *ctx, int32_t stage, unsigned levels) {
  if (ctx->num_replicas <= 1)
    return false;
  if (stage >= 0 || !ctx->stage_zero)
    return (levels >> pprt_stage_zero(ctx, stage)) & 1u;
  for (int32_t s = 0; s < ctx->num_stages; ++s)
    if ((levels >> ctx->stage_zero[s]) & 1u)
      return true;
  return false;
}

bool pprt_zero_sharded(const pprt_context *ctx, int32_t stage) {
  return pprt_zero_in(ctx, stage, 1u << 1 | 1u << 3);
}

/* The padded copy of gradient `g`, allocated on first use; NULL when its
   length is a multiple of the replica count. */
static void *padded(pprt_context *ctx, pprt_buffer_desc *g) {
  int64_t whole = block_numel(ctx, g->numel) * ctx->num_replicas;
  if (whole == g->numel)
    return NULL;
  if (!g->zero_padded)
    g->zero_padded = pprt_device_alloc(ctx, (size_t)whole * sizeof(float),
                                       "ZeRO-1's padded gradient");
  return g->zero_padded;
}

void pprt_zero_reduce_scatter(pprt_context *ctx, pprt_buffer_desc *g,
                              int32_t id) {
  int64_t block = block_numel(ctx, g->numel);
  if (!g->zero_shard)
    g->zero_shard = pprt_device_alloc(ctx, (size_t)block * sizeof(float),
                                      "ZeRO-1's gradient shard");
  const void *send = pprt_slot_data(ctx, g, id, 0);
  void *pad = padded(ctx, g);
  if (pad) {
    pprt_copy_f32(ctx, pad, send, g->numel);
    send = pad;
  }
  pprt_transport *t = ctx->transport;
  g->reduce_handle = t->ops->ireduce_scatter_group_f32(
      t, ctx->dp_group, send, g->zero_shard, block, ctx->num_replicas);
}

/* Starts gathering every replica's block of the weights at `w`. */
static void start_gather(pprt_context *ctx, pprt_buffer_desc *p, float *w,
                         pprt_buffer_desc *g) {
  int64_t first = 0, mine = 0;
  pprt_zero_block(ctx, p->numel, &first, &mine);
  float *buf = w, *pad = padded(ctx, g);
  if (pad) {
    if (mine > 0)
      pprt_copy_f32(ctx, pad + first, w + first, mine);
    buf = pad;
  }
  pprt_transport *t = ctx->transport;
  p->gather_handle = t->ops->iallgather_group_f32(
      t, ctx->dp_group, buf, block_numel(ctx, p->numel), ctx->num_replicas);
}

void pprt_zero_update(pprt_context *ctx, pprt_buffer_desc *p, int32_t pid,
                      pprt_buffer_desc *g, int32_t gid) {
  if (!g->zero_shard || g->reduced_step != ctx->step)
    pprt_fatal(ctx,
               "ZeRO-1: gradient buffer %d of param %d (stage %d) was not "
               "reduce-scattered in step %lld",
               gid, p->index, p->stage, (long long)ctx->step + 1);
  int64_t first = 0, mine = 0;
  pprt_zero_block(ctx, p->numel, &first, &mine);
  /* ZeRO-3 updates the block it keeps; the next step gathers it. */
  if (pprt_zero_weights_sharded(ctx, p->stage)) {
    if (!p->zero_weights)
      pprt_fatal(ctx,
                 "ZeRO-3: param %d (stage %d) is updated before its stage "
                 "gathered its weights (pprt_all_gather) in step %lld",
                 p->index, p->stage, (long long)ctx->step + 1);
    if (mine > 0)
      pprt_apply_update(ctx, p, p->zero_weights, g->zero_shard, mine);
    return;
  }
  float *w = pprt_slot_data(ctx, p, pid, 0);
  if (mine > 0)
    pprt_apply_update(ctx, p, w + first, g->zero_shard, mine);
  p->gather_pending = true;
  if (!ctx->zero_in_schedule)
    pprt_zero_start_gathers(ctx, p->stage);
}

void pprt_zero_start_gathers(pprt_context *ctx, int32_t stage) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *p = &ctx->buffers[id];
    if (!p->defined || p->kind != PPRT_PARAM || p->stage != stage ||
        !p->gather_pending)
      continue;
    p->gather_pending = false;
    start_gather(ctx, p, pprt_slot_data(ctx, p, id, 0),
                 pprt_grad_of(ctx, p, NULL));
  }
}

/* Completes param `pid`'s all-gather; a padded one is copied back. */
static void finish_gather(pprt_context *ctx, pprt_buffer_desc *p, int32_t pid) {
  pprt_transport *t = ctx->transport;
  if (!t->ops->wait_for(t, p->gather_handle, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, PPRT_EVERYONE,
                      "the all-gather of param %d (stage %d) over %d replicas",
                      p->index, p->stage, ctx->num_replicas);
  p->gather_handle = -1;
  void *pad = padded(ctx, pprt_grad_of(ctx, p, NULL));
  if (pad)
    pprt_copy_f32(ctx, pprt_slot_data(ctx, p, pid, 0), pad, p->numel);
}

void pprt_zero_wait_gathers(pprt_context *ctx, int32_t stage) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *p = &ctx->buffers[id];
    if (p->defined && p->kind == PPRT_PARAM && p->stage == stage &&
        p->gather_handle >= 0)
      finish_gather(ctx, p, id);
  }
}

/* A padded device copy of this replica's block of `moment` (NULL: none),
   gathered in place; returns its all-gather's handle. */
static int32_t start_moment_gather(pprt_context *ctx, pprt_buffer_desc *p,
                                   const void *moment, float *whole) {
  int64_t first = 0, mine = 0;
  pprt_zero_block(ctx, p->numel, &first, &mine);
  if (moment && mine > 0)
    pprt_copy_f32(ctx, whole + first, moment, mine);
  pprt_transport *t = ctx->transport;
  return t->ops->iallgather_group_f32(
      t, ctx->dp_group, whole, block_numel(ctx, p->numel), ctx->num_replicas);
}

void pprt_zero_gather_moments(pprt_context *ctx, pprt_buffer_desc *p, void *m,
                              void *v) {
  size_t bytes =
      (size_t)(block_numel(ctx, p->numel) * ctx->num_replicas) * sizeof(float);
  float *whole_m = pprt_device_alloc(ctx, bytes, "gathered Adam moments");
  float *whole_v = pprt_device_alloc(ctx, bytes, "gathered Adam moments");
  int32_t hm = start_moment_gather(ctx, p, p->moment1, whole_m);
  int32_t hv = start_moment_gather(ctx, p, p->moment2, whole_v);
  pprt_transport *t = ctx->transport;
  if (!t->ops->wait_for(t, hm, ctx->opts.timeout_s) ||
      !t->ops->wait_for(t, hv, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, PPRT_EVERYONE,
                      "the all-gather of param %d's Adam moments (stage %d) "
                      "over %d replicas",
                      p->index, p->stage, ctx->num_replicas);
  pprt_backend *be = ctx->backend;
  be->ops->copy_to_host(be, m, whole_m, (size_t)p->bytes);
  be->ops->copy_to_host(be, v, whole_v, (size_t)p->bytes);
  be->ops->free(be, whole_m);
  be->ops->free(be, whole_v);
}
