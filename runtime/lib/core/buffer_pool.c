/* Per-micro-batch buffers reused across shape variants: under step plans a
   rank would otherwise hold a buffer for every (variant, micro-batch) pair
   any of its plans runs. When a step's plan is chosen, the slots it does
   not run give their memory to a pool (their micro-batches' last readers
   ran in an earlier, flushed step), and a slot touched first takes the
   smallest pooled buffer that holds it. Every per-micro-batch buffer is
   written whole before it is read in a step, so what a reused buffer held
   is never seen. */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct pprt_pooled_buffer {
  void *data;
  int64_t bytes;
} pprt_pooled_buffer;

/* Index of the smallest pooled buffer of at least `bytes`, or -1. */
static int64_t best_fit(const pprt_context *ctx, int64_t bytes) {
  int64_t best = -1;
  for (int64_t i = 0; i < ctx->pool_size; ++i)
    if (ctx->pool[i].bytes >= bytes &&
        (best < 0 || ctx->pool[i].bytes < ctx->pool[best].bytes))
      best = i;
  return best;
}

void pprt_microbatch_alloc(pprt_context *ctx, pprt_buffer_desc *b, int32_t id,
                           int32_t slot) {
  pprt_slot *s = &b->slots[slot];
  int64_t i = best_fit(ctx, b->bytes);
  if (i >= 0) {
    s->data = ctx->pool[i].data;
    s->capacity = ctx->pool[i].bytes;
    ctx->pool[i] = ctx->pool[--ctx->pool_size];
    return;
  }
  char what[64];
  snprintf(what, sizeof what, "buffer %d", id);
  s->data = pprt_device_alloc(ctx, (size_t)b->bytes, what);
  s->capacity = b->bytes;
  ctx->microbatch_buffer_bytes += b->bytes;
}

static void give_back(pprt_context *ctx, pprt_slot *s) {
  pprt_reserve(ctx, (void **)&ctx->pool, &ctx->pool_cap, ctx->pool_size,
               sizeof *ctx->pool, "the buffer pool");
  ctx->pool[ctx->pool_size++] = (pprt_pooled_buffer){s->data, s->capacity};
  s->data = NULL;
  s->capacity = 0;
  s->data_step = -1;
}

/* Whether buffer `b` has slots of a micro-batch's own variant: the loss is
   one per micro-batch whatever its variant. */
static bool is_variant_buffer(const pprt_buffer_desc *b) {
  return b->defined && !pprt_kind_is_persistent(b->kind) &&
         b->kind != PPRT_LOSS;
}

void pprt_pool_unplanned_slots(pprt_context *ctx, const pprt_plan *plan) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *b = &ctx->buffers[id];
    if (!is_variant_buffer(b))
      continue;
    for (int32_t mb = 0; mb < b->num_slots; ++mb) {
      bool runs =
          mb < plan->num_microbatches && plan->variant[mb] == b->variant;
      if (runs || !b->slots[mb].data)
        continue;
      /* A send from it may still be in flight (an earlier replica's pass). */
      pprt_wait_slot_sends(ctx, id, mb);
      give_back(ctx, &b->slots[mb]);
    }
  }
}

void pprt_free_pool(pprt_context *ctx) {
  for (int64_t i = 0; i < ctx->pool_size; ++i)
    ctx->backend->ops->free(ctx->backend, ctx->pool[i].data);
  free(ctx->pool);
}
