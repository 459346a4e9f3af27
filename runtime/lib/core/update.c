/* Gradient accumulation, loss recording and the optimizer step (SGD, Adam),
   computed by the backend's device ops. */
#include "core/core.h"
#include "pprt_math.h"

#include <math.h>

static void accumulate(pprt_context *ctx, int32_t dst_id, int32_t src_id,
                       int32_t mb) {
  pprt_buffer_desc *dst = pprt_lookup(ctx, dst_id);
  pprt_buffer_desc *src = pprt_lookup(ctx, src_id);
  if (!pprt_kind_is_persistent(dst->kind))
    pprt_fatal(ctx, "pprt_accumulate: destination buffer %d is not persistent",
               dst_id);
  if (dst->reduce_handle >= 0)
    pprt_fatal(ctx,
               "pprt_accumulate: gradient buffer %d of stage %d is being "
               "all-reduced; every weight gradient of a stage must come "
               "before its all-reduce",
               dst_id, dst->stage);
  if (dst->numel != src->numel)
    pprt_fatal(ctx,
               "pprt_accumulate: buffer %d has %lld elements but buffer %d "
               "has %lld",
               dst_id, (long long)dst->numel, src_id, (long long)src->numel);
  pprt_require_f32(ctx, dst, dst_id, "pprt_accumulate");
  pprt_require_f32(ctx, src, src_id, "pprt_accumulate");
  const void *s =
      pprt_slot_data(ctx, src, src_id, pprt_slot_index(ctx, src, src_id, mb));
  void *d = pprt_slot_data(ctx, dst, dst_id, 0);
  pprt_wait_slot_sends(ctx, dst_id, 0);
  ctx->backend->ops->accumulate_f32(ctx->backend, d, s, dst->numel);
}

void pprt_accumulate(pprt_context *ctx, int32_t dst_id, int32_t src_id,
                     int32_t mb) {
  pprt_core_enter(ctx);
  accumulate(ctx, dst_id, src_id, mb);
  pprt_core_leave(ctx);
}

void pprt_update_state(pprt_context *ctx, int32_t state_id, int32_t src_id,
                       int32_t mb) {
  pprt_core_enter(ctx);
  pprt_buffer_desc *state = pprt_lookup(ctx, state_id);
  pprt_buffer_desc *src = pprt_lookup(ctx, src_id);
  if (state->kind != PPRT_STATE)
    pprt_fatal(ctx, "pprt_update_state: buffer %d is not a state", state_id);
  if (state->bytes != src->bytes || state->dtype != src->dtype)
    pprt_fatal(ctx,
               "pprt_update_state: stage %d micro-batch %d: buffer %d "
               "(%lld bytes of %s) cannot replace state buffer %d (%lld "
               "bytes of %s)",
               state->stage, mb, src_id, (long long)src->bytes,
               pprt_dtype_name(src->dtype), state_id, (long long)state->bytes,
               pprt_dtype_name(state->dtype));
  /* The state's storage first: making it may use the staging memory that
     the new value is read into. */
  void *data = pprt_slot_data(ctx, state, state_id, 0);
  const void *value = pprt_to_host(
      ctx,
      pprt_slot_data(ctx, src, src_id, pprt_slot_index(ctx, src, src_id, mb)),
      (size_t)src->bytes);
  ctx->backend->ops->copy_to_device(ctx->backend, data, value,
                                    (size_t)state->bytes);
  pprt_core_leave(ctx);
}

void pprt_record_loss(pprt_context *ctx, int32_t id, int32_t mb) {
  pprt_core_enter(ctx);
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if (b->numel != 1)
    pprt_fatal(ctx, "pprt_record_loss: buffer %d is not a scalar", id);
  pprt_require_f32(ctx, b, id, "pprt_record_loss");
  if (ctx->step_offset)
    pprt_fatal(
        ctx,
        "pipeline rank %d: stage %d micro-batch %d records a loss in the "
        "previous step's call; a no-flush schedule must leave the "
        "loss stage's forwards in their own step",
        ctx->pipeline_rank, b->stage, mb);
  int32_t slot = pprt_slot_index(ctx, b, id, mb);
  const void *loss = pprt_slot_data(ctx, b, id, slot);
  float value = ctx->backend->ops->read_f32(ctx->backend, loss);
  /* A diverging run (too high a learning rate) would otherwise train on
     NaN to the end and exit 0. */
  if (!isfinite(value) && !ctx->opts.allow_non_finite)
    pprt_fatal(ctx,
               "step %lld: the loss of stage %d micro-batch %d is %s; "
               "stopping (--allow-non-finite trains on)",
               (long long)ctx->step + 1, b->stage, mb,
               isnan(value) ? "NaN" : "infinite");
  ctx->step_loss += value;
  pprt_core_leave(ctx);
}

/* Returns the PARAM_GRAD belonging to param `p`, preferring its stage. */
pprt_buffer_desc *pprt_grad_of(pprt_context *ctx, const pprt_buffer_desc *p,
                               int32_t *gid) {
  pprt_buffer_desc *found = NULL;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *g = &ctx->buffers[id];
    if (!g->defined || g->kind != PPRT_PARAM_GRAD || g->index != p->index)
      continue;
    if (!found || g->stage == p->stage) {
      found = g;
      if (gid)
        *gid = id;
    }
    if (g->stage == p->stage)
      break;
  }
  return found;
}

/* Zeroes the gradient's storage if this rank ever touched it. */
static void zero_grad(pprt_context *ctx, pprt_buffer_desc *g, int32_t id) {
  if (!g->slots[0].data)
    return;
  pprt_wait_slot_sends(ctx, id, 0);
  ctx->backend->ops->zero(ctx->backend, g->slots[0].data, (size_t)g->bytes);
}

/* Bias-corrected Adam over `n` weights; p->num_updates is already this
   update's t. */
static void adam(pprt_context *ctx, pprt_buffer_desc *p, void *w,
                 const void *dw, int64_t n) {
  if (!p->moment1) {
    p->moment_bytes = n * (int64_t)sizeof(float);
    p->moment1 =
        pprt_device_alloc(ctx, (size_t)p->moment_bytes, "Adam's moments");
    p->moment2 =
        pprt_device_alloc(ctx, (size_t)p->moment_bytes, "Adam's moments");
    ctx->optimizer_state_bytes += 2 * p->moment_bytes;
  }
  if (p->moment_bytes != n * (int64_t)sizeof(float))
    pprt_fatal(ctx, "Adam's moments of param %d hold %lld bytes, not %lld",
               p->index, (long long)p->moment_bytes,
               (long long)(n * (int64_t)sizeof(float)));
  const pprt_options *o = &ctx->opts;
  double b1t = pprt_powi(o->beta1, p->num_updates);
  double b2t = pprt_powi(o->beta2, p->num_updates);
  pprt_adam_update u = {o->beta1, o->beta2, o->eps, o->lr / (1.0 - b1t),
                        1.0 / (1.0 - b2t)};
  ctx->backend->ops->adam_f32(ctx->backend, w, dw, p->moment1, p->moment2, n,
                              &u);
}

void pprt_apply_update(pprt_context *ctx, pprt_buffer_desc *p, void *w,
                       const void *dw, int64_t n) {
  if (ctx->opts.optimizer == PPRT_ADAM)
    adam(ctx, p, w, dw, n);
  else
    ctx->backend->ops->sgd_f32(ctx->backend, w, dw, n, ctx->opts.lr);
}

/* Through the backend's ops (exact: 0 + x is x). */
void pprt_copy_f32(pprt_context *ctx, void *dst, const void *src, int64_t n) {
  ctx->backend->ops->zero(ctx->backend, dst, (size_t)n * sizeof(float));
  ctx->backend->ops->accumulate_f32(ctx->backend, dst, src, n);
}

void *pprt_param_read_version(pprt_context *ctx, pprt_buffer_desc *p,
                              int32_t id) {
  void *newest = pprt_slot_data(ctx, p, id, 0);
  /* The next step's forwards read W(t), the newer version until this
     step's update. */
  if (ctx->weight_versions != 2 || ctx->step_offset)
    return newest;
  if (!p->older) {
    /* Step 1 reads W(-1) = W(0). */
    pprt_require_f32(ctx, p, id, "a second weight version");
    p->older =
        pprt_device_alloc(ctx, (size_t)p->bytes, "a second weight version");
    pprt_copy_f32(ctx, p->older, newest, p->numel);
  }
  return p->older;
}

/* Applies the gradient of param `pid` and zeroes it. With two versions the
   gradient, computed with W(t - 1), goes onto W(t), which the next step's
   stage functions then read: W(t + 1) = W(t) - lr * grad(W(t - 1)). */
static void update_param(pprt_context *ctx, pprt_buffer_desc *p, int32_t pid) {
  if (ctx->weight_versions == 2) {
    void *older = pprt_param_read_version(ctx, p, pid);
    pprt_wait_slot_sends(ctx, pid, 0);
    pprt_copy_f32(ctx, older, pprt_slot_data(ctx, p, pid, 0), p->numel);
  }
  int32_t gid = -1;
  pprt_buffer_desc *g = pprt_grad_of(ctx, p, &gid);
  /* An untouched gradient is all zeros: SGD keeps the param as it is, and
     so does Adam before the param's first gradient. */
  if (!g || (!g->slots[0].data && !p->moment1))
    return;
  if (g->numel != p->numel)
    pprt_fatal(ctx, "param %d and its gradient %d differ in size", pid, gid);
  pprt_require_f32(ctx, p, pid, "the optimizer");
  pprt_require_f32(ctx, g, gid, "the optimizer");
  /* ZeRO-3 updates the replica's block: gathered per param, the whole
     weights are gone by now. */
  void *w = NULL;
  if (!pprt_zero_weights_sharded(ctx, p->stage)) {
    w = pprt_slot_data(ctx, p, pid, 0);
    pprt_wait_slot_sends(ctx, pid, 0);
  }
  const void *dw = pprt_slot_data(ctx, g, gid, 0);
  ++p->num_updates;
  if (pprt_zero_sharded(ctx, p->stage))
    pprt_zero_update(ctx, p, pid, g, gid);
  else
    pprt_apply_update(ctx, p, w, dw, p->numel);
  zero_grad(ctx, g, gid);
}

void pprt_optimizer_step(pprt_context *ctx, int32_t stage) {
  if (stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "pprt_optimizer_step: stage %d out of range 0..%d", stage,
               ctx->num_stages - 1);
  pprt_wait_reductions(ctx, stage);
  if (ctx->freeze_params || ctx->defer_update)
    return;
  const pprt_observer *o = &ctx->observer;
  if (o->update_begin)
    o->update_begin(o->self, ctx, stage);
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == PPRT_PARAM && b->stage == stage)
      update_param(ctx, b, id);
  }
  if (o->update_end)
    o->update_end(o->self, ctx, stage);
  if (pprt_zero_sharded(ctx, stage) && !ctx->zero_in_schedule)
    pprt_zero_wait_gathers(ctx, stage);
  /* ZeRO-3: the stage's last use of its whole weights this step. */
  pprt_zero_release_weights(ctx, stage);
}

void pprt_all_gather(pprt_context *ctx, int32_t stage) {
  if (stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "pprt_all_gather: stage %d out of range 0..%d", stage,
               ctx->num_stages - 1);
  int32_t zero = pprt_stage_zero(ctx, stage);
  if (!ctx->zero_in_schedule || (zero != 1 && zero != 3))
    pprt_fatal(ctx,
               "pprt_all_gather of stage %d in a program without "
               "ZeRO for it (compile with --zero 1 or 3)",
               stage);
  /* ZeRO-3 gathers before the stage's first compute, whole weights that
     a frozen step keeps. */
  if (pprt_zero_weights_sharded(ctx, stage)) {
    pprt_zero_gather_weights(ctx, stage);
    return;
  }
  if (!pprt_zero_sharded(ctx, stage) || ctx->freeze_params || ctx->defer_update)
    return;
  pprt_zero_start_gathers(ctx, stage);
  pprt_zero_wait_gathers(ctx, stage);
}

void pprt_zero_grads(pprt_context *ctx) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == PPRT_PARAM_GRAD)
      zero_grad(ctx, b, id);
  }
}
