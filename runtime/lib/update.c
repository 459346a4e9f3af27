/* Gradient accumulation, loss recording and the optimizer step (SGD, Adam). */
#include "internal.h"
#include "pprt_math.h"

#include <string.h>

void pprt_accumulate(pprt_context *ctx, int32_t dst_id, int32_t src_id,
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
  const float *s =
      pprt_slot_data(ctx, src, src_id, pprt_slot_index(ctx, src, src_id, mb));
  float *d = pprt_slot_data(ctx, dst, dst_id, 0);
  pprt_wait_slot_sends(ctx, dst_id, 0);
  for (int64_t i = 0; i < dst->numel; ++i)
    d[i] += s[i];
}

void pprt_record_loss(pprt_context *ctx, int32_t id, int32_t mb) {
  pprt_buffer_desc *b = pprt_lookup(ctx, id);
  if (b->numel != 1)
    pprt_fatal(ctx, "pprt_record_loss: buffer %d is not a scalar", id);
  int32_t slot = pprt_slot_index(ctx, b, id, mb);
  ctx->step_loss += pprt_slot_data(ctx, b, id, slot)[0];
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
  memset(g->slots[0].data, 0, (size_t)g->numel * sizeof(float));
}

/* param -= lr * grad. */
static void sgd(const pprt_context *ctx, pprt_buffer_desc *p, float *w,
                const float *dw) {
  float lr = ctx->opts.lr;
  for (int64_t i = 0; i < p->numel; ++i)
    w[i] -= lr * dw[i];
}

/* Bias-corrected Adam; p->num_updates is already this update's t. */
static void adam(const pprt_context *ctx, pprt_buffer_desc *p, float *w,
                 const float *dw) {
  if (!p->moments)
    p->moments = pprt_xcalloc(ctx, 2 * (size_t)p->numel, sizeof(float));
  float *m = p->moments, *v = p->moments + p->numel;
  const pprt_options *o = &ctx->opts;
  double b1t = pprt_powi(o->beta1, p->num_updates);
  double b2t = pprt_powi(o->beta2, p->num_updates);
  double step = o->lr / (1.0 - b1t), v_scale = 1.0 / (1.0 - b2t);
  for (int64_t i = 0; i < p->numel; ++i) {
    m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * dw[i];
    v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * dw[i] * dw[i];
    w[i] -= (float)(step * m[i] / (pprt_sqrt(v[i] * v_scale) + o->eps));
  }
}

/* Applies the gradient of param `pid` and zeroes it. */
static void update_param(pprt_context *ctx, pprt_buffer_desc *p, int32_t pid) {
  int32_t gid = -1;
  pprt_buffer_desc *g = pprt_grad_of(ctx, p, &gid);
  /* An untouched gradient is all zeros: SGD keeps the param as it is, and
     so does Adam before the param's first gradient. */
  if (!g || (!g->slots[0].data && !p->moments))
    return;
  if (g->numel != p->numel)
    pprt_fatal(ctx, "param %d and its gradient %d differ in size", pid, gid);
  float *w = pprt_slot_data(ctx, p, pid, 0);
  pprt_wait_slot_sends(ctx, pid, 0);
  const float *dw = pprt_slot_data(ctx, g, gid, 0);
  ++p->num_updates;
  if (ctx->opts.optimizer == PPRT_ADAM)
    adam(ctx, p, w, dw);
  else
    sgd(ctx, p, w, dw);
  zero_grad(ctx, g, gid);
}

void pprt_optimizer_step(pprt_context *ctx, int32_t stage) {
  if (stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "pprt_optimizer_step: stage %d out of range 0..%d", stage,
               ctx->num_stages - 1);
  pprt_wait_reductions(ctx, stage);
  if (ctx->freeze_params || ctx->defer_update)
    return;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == PPRT_PARAM && b->stage == stage)
      update_param(ctx, b, id);
  }
}

void pprt_zero_grads(pprt_context *ctx) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == PPRT_PARAM_GRAD)
      zero_grad(ctx, b, id);
  }
}
