/* One training step: bookkeeping around pp_run_step and its action brackets. */
#include "core/core.h"

void pprt_begin_step(pprt_context *ctx, int64_t step) {
  ctx->step = step;
  ctx->step_loss = 0.0;
  pprt_zero_grads(ctx);
  /* INPUT/TARGET slots refill themselves on first touch in this step (see
     pprt_slot_data), so ranks only generate the data they use. */
}

void pprt_run_step(pprt_context *ctx) {
  int32_t passes = ctx->opts.sequential_replicas;
  for (ctx->pass = 0; ctx->pass < passes; ++ctx->pass) {
    /* Gradients accumulate over the passes; the last one applies them. */
    ctx->defer_update = ctx->pass + 1 < passes;
    pp_run_step(ctx, ctx->pipeline_rank);
  }
  ctx->pass = passes - 1;
  ctx->defer_update = false;
}

double pprt_end_step(pprt_context *ctx) {
  if (ctx->in_group)
    pprt_fatal(ctx, "the step ended inside an exchange group "
                    "(pprt_group_begin without pprt_group_end)");
  pprt_wait_reductions(ctx, -1);
  pprt_wait_all_sends(ctx);
  double loss = ctx->step_loss;
  ctx->transport->ops->reduce_world_f64(ctx->transport, &loss, 1);
  return loss;
}

void pprt_action_begin(pprt_context *ctx, int32_t phase, int32_t stage,
                       int32_t mb) {
  (void)mb;
  if (ctx->in_stage)
    pprt_fatal(ctx, "pprt_action_begin: stage %d is already in an action",
               stage);
  pprt_profile_action_begin(ctx, phase, stage);
  ctx->in_stage = true;
  ctx->backend->ops->stage_begin(ctx->backend);
}

void pprt_action_end(pprt_context *ctx) {
  if (!ctx->in_stage)
    pprt_fatal(ctx, "pprt_action_end without pprt_action_begin");
  ctx->backend->ops->stage_end(ctx->backend);
  ctx->in_stage = false;
  pprt_profile_action_end(ctx);
}
