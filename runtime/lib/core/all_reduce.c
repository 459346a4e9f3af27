/* Data-parallel gradient all-reduce: started by pp.all_reduce, completed by
   the stage's optimizer step, so it overlaps with the rest of the step. */
#include "core/core.h"

/* Completes the in-flight reduction of gradient buffer `id`. */
static void wait_reduction(pprt_context *ctx, pprt_buffer_desc *g, int32_t id) {
  if (g->reduce_handle < 0)
    return;
  pprt_transport *t = ctx->transport;
  if (!t->ops->wait_for(t, g->reduce_handle, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, PPRT_EVERYONE,
                      "the %s of gradient buffer %d (stage %d) over "
                      "%d replicas",
                      pprt_zero_sharded(ctx, g->stage) ? "reduce-scatter"
                                                       : "all-reduce",
                      id, g->stage, ctx->num_replicas);
  g->reduce_handle = -1;
}

void pprt_wait_reductions(pprt_context *ctx, int32_t stage) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *g = &ctx->buffers[id];
    if (g->defined && g->kind == PPRT_PARAM_GRAD &&
        (stage < 0 || g->stage == stage))
      wait_reduction(ctx, g, id);
  }
}

/* Starts the reduction of one gradient buffer. */
static void start_reduction(pprt_context *ctx, pprt_buffer_desc *g,
                            int32_t id) {
  if (g->reduced_step == ctx->step)
    pprt_fatal(ctx,
               "pprt_all_reduce: the gradients of stage %d are reduced twice "
               "in step %lld",
               g->stage, (long long)ctx->step + 1);
  g->reduced_step = ctx->step;
  /* Untouched gradients are allocated (as zeros) so that every replica
     takes part in the same collectives. */
  pprt_require_f32(ctx, g, id, "pprt_all_reduce");
  void *data = pprt_slot_data(ctx, g, id, 0);
  pprt_wait_slot_sends(ctx, id, 0);
  if (pprt_zero_sharded(ctx, g->stage)) {
    pprt_zero_reduce_scatter(ctx, g, id);
    return;
  }
  pprt_transport *t = ctx->transport;
  g->reduce_handle = t->ops->iallreduce_group_f32(t, ctx->dp_group, data,
                                                  g->numel, PPRT_REDUCE_SUM);
}

/* Starts the gradient reduction of `stage`: all-reduces, or ZeRO-1's
   reduce-scatters. `action` names the caller. */
static void reduce_stage(pprt_context *ctx, int32_t stage, const char *action) {
  if (stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "%s: stage %d out of range 0..%d", action, stage,
               ctx->num_stages - 1);
  /* Sequential replicas accumulate locally; only the sum of all of a
     process's passes is reduced across processes. */
  if (ctx->num_replicas == 1 || ctx->pass + 1 < ctx->opts.sequential_replicas)
    return;
  /* Every replica walks the same ids in the same order, so the collectives
     match. */
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    pprt_buffer_desc *g = &ctx->buffers[id];
    if (g->defined && g->kind == PPRT_PARAM_GRAD && g->stage == stage)
      start_reduction(ctx, g, id);
  }
}

void pprt_all_reduce(pprt_context *ctx, int32_t stage) {
  if (ctx->zero_in_schedule && pprt_stage_zero(ctx, stage) != 0)
    pprt_fatal(ctx,
               "pprt_all_reduce of stage %d in a ZeRO-%d program, whose "
               "schedule reduce-scatters",
               stage, pprt_stage_zero(ctx, stage));
  reduce_stage(ctx, stage, "pprt_all_reduce");
}

void pprt_reduce_scatter(pprt_context *ctx, int32_t stage) {
  if (!ctx->zero_in_schedule || pprt_stage_zero(ctx, stage) == 0)
    pprt_fatal(ctx,
               "pprt_reduce_scatter of stage %d in a program without "
               "ZeRO-1 or -3 for it (compile with --zero 1)",
               stage);
  reduce_stage(ctx, stage, "pprt_reduce_scatter");
}
