/* ZeRO-3: the weights sharded over the data-parallel replicas too. Between
   steps each replica keeps only its block of every weight buffer (the
   blocks of ZeRO-1, core/zero.c); the schedule's pprt_all_gather of a stage,
   before its first compute, gathers the whole weights into a buffer the
   stage's optimizer step frees again after updating the block. Gathered
   per param, the stage functions acquire each weight before their first
   read of it and release it after their last. */
#include "core/core.h"

bool pprt_zero_weights_sharded(const pprt_context *ctx, int32_t stage) {
  return pprt_zero_in(ctx, stage, 1u << 3);
}

static int64_t padded_numel(const pprt_context *ctx, int64_t numel) {
  int64_t block = (numel + ctx->num_replicas - 1) / ctx->num_replicas;
  return block * ctx->num_replicas;
}

static bool is_stage_param(const pprt_buffer_desc *b, int32_t stage) {
  return b->defined && b->kind == PPRT_PARAM &&
         (stage < 0 || b->stage == stage);
}

static void count_gathered(pprt_context *ctx, int64_t bytes) {
  ctx->gathered_weight_bytes += bytes;
  if (ctx->gathered_weight_bytes > ctx->peak_gathered_weight_bytes)
    ctx->peak_gathered_weight_bytes = ctx->gathered_weight_bytes;
}

/* The first gather: the whole weights are the initial (or resumed) ones,
   the same on every replica; the replica keeps its block of them. */
static void keep_first_block(pprt_context *ctx, pprt_buffer_desc *p,
                             int32_t id) {
  pprt_require_f32(ctx, p, id, "--zero 3");
  const float *whole = pprt_slot_data(ctx, p, id, 0);
  int64_t first = 0, mine = 0;
  pprt_zero_block(ctx, p->numel, &first, &mine);
  int64_t block = padded_numel(ctx, p->numel) / ctx->num_replicas;
  p->zero_weights = pprt_device_alloc(ctx, (size_t)block * sizeof(float),
                                      "ZeRO-3's block of the weights");
  if (mine > 0)
    pprt_copy_f32(ctx, p->zero_weights, whole + first, mine);
  count_gathered(ctx, p->bytes);
}

/* Starts gathering param `p`'s whole weights from the replicas' blocks
   into a fresh buffer, padded to a multiple of the replica count. */
static int32_t start_gather(pprt_context *ctx, pprt_buffer_desc *p) {
  int64_t padded = padded_numel(ctx, p->numel);
  int64_t block = padded / ctx->num_replicas;
  float *whole = pprt_device_alloc(ctx, (size_t)padded * sizeof(float),
                                   "ZeRO-3's gathered weights");
  pprt_copy_f32(ctx, whole + ctx->replica * block, p->zero_weights, block);
  p->slots[0].data = whole;
  count_gathered(ctx, p->bytes);
  pprt_transport *t = ctx->transport;
  return t->ops->iallgather_group_f32(t, ctx->dp_group, whole, block,
                                      ctx->num_replicas);
}

static void wait_gather(pprt_context *ctx, pprt_buffer_desc *p) {
  pprt_transport *t = ctx->transport;
  if (!t->ops->wait_for(t, p->gather_handle, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, PPRT_EVERYONE,
                      "the all-gather of param %d's weights (stage %d) "
                      "over %d replicas",
                      p->index, p->stage, ctx->num_replicas);
  p->gather_handle = -1;
}

/* Frees param `p`'s whole weights, keeping the replica's block. */
static void release_whole(pprt_context *ctx, pprt_buffer_desc *p, int32_t id) {
  pprt_wait_slot_sends(ctx, id, 0);
  ctx->backend->ops->free(ctx->backend, p->slots[0].data);
  p->slots[0].data = NULL;
  ctx->gathered_weight_bytes -= p->bytes;
}

void pprt_zero_gather_weights(pprt_context *ctx, int32_t stage) {
  if (!pprt_zero_weights_sharded(ctx, stage))
    return;
  /* Every replica walks the same ids in the same order, so the
     all-gathers match; all of the stage's run at once. */
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *p = &ctx->buffers[id];
    if (!is_stage_param(p, stage) || p->slots[0].data)
      continue;
    /* Every process defines every param; those of other ranks' stages
       (never gathered here) stay untouched. */
    if (p->zero_weights)
      p->gather_handle = start_gather(ctx, p);
    else if (stage >= 0)
      keep_first_block(ctx, p, id);
  }
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *p = &ctx->buffers[id];
    if (is_stage_param(p, stage) && p->gather_handle >= 0)
      wait_gather(ctx, p);
  }
}

void pprt_zero_release_weights(pprt_context *ctx, int32_t stage) {
  if (!pprt_zero_weights_sharded(ctx, stage))
    return;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *p = &ctx->buffers[id];
    if (is_stage_param(p, stage) && p->slots[0].data && p->zero_weights)
      release_whole(ctx, p, id);
  }
}

static pprt_buffer_desc *lookup_param(pprt_context *ctx, int32_t id,
                                      const char *fn) {
  pprt_buffer_desc *p = pprt_lookup(ctx, id);
  if (p->kind != PPRT_PARAM)
    pprt_fatal(ctx, "%s: buffer %d is not a param", fn, id);
  return p;
}

void *pprt_param_acquire(pprt_context *ctx, int32_t id) {
  pprt_core_enter(ctx);
  pprt_buffer_desc *p = lookup_param(ctx, id, "pprt_param_acquire");
  if (p->holds++ == 0 && pprt_zero_weights_sharded(ctx, p->stage)) {
    if (!p->zero_weights)
      keep_first_block(ctx, p, id);
    else if (!p->slots[0].data) {
      p->gather_handle = start_gather(ctx, p);
      wait_gather(ctx, p);
    }
  }
  void *data = pprt_param_read_version(ctx, p, id);
  pprt_core_leave(ctx);
  return data;
}

void pprt_param_release(pprt_context *ctx, int32_t id) {
  pprt_core_enter(ctx);
  pprt_buffer_desc *p = lookup_param(ctx, id, "pprt_param_release");
  if (p->holds <= 0)
    pprt_fatal(ctx,
               "pprt_param_release of param %d (stage %d), which no "
               "pprt_param_acquire holds",
               p->index, p->stage);
  if (--p->holds == 0 && pprt_zero_weights_sharded(ctx, p->stage) &&
      p->slots[0].data)
    release_whole(ctx, p, id);
  pprt_core_leave(ctx);
}

int64_t pprt_zero_weight_block_bytes(const pprt_context *ctx) {
  int64_t bytes = 0;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *p = &ctx->buffers[id];
    if (!is_stage_param(p, -1) || !p->zero_weights)
      continue;
    int64_t first = 0, mine = 0;
    pprt_zero_block(ctx, p->numel, &first, &mine);
    bytes += mine * p->elem_size;
  }
  return bytes;
}
