/* One training step: bookkeeping around pp_run_step and its action brackets. */
#include "core/core.h"
#include "pprt_math.h"

#include <stdio.h>
#include <stdlib.h>

/* The action running on this thread, for pprt_random_seed, which stage
   code calls without a context. */
static _Thread_local pprt_context *running_action;

pprt_context *pprt_running_context(void) { return running_action; }

void pprt_set_run(pprt_context *ctx, int64_t begin, int64_t end) {
  ctx->run_begin = begin;
  ctx->run_end = end;
}

/* Whether every step runs drained, first and last alike: sequential
   replicas replay the step per replica, so a step's forwards cannot run in
   the previous step's call (another replica's), and a transport whose
   transfers complete in order would hold the next step's carried send
   ahead of this step's own transfers until the next call. */
static bool runs_flushed(const pprt_context *ctx) {
  return ctx->opts.sequential_replicas > 1 || ctx->transport->in_order;
}

int32_t pprt_step_is_first(const pprt_context *ctx) {
  return ctx->step == ctx->run_begin || runs_flushed(ctx);
}

int32_t pprt_step_is_last(const pprt_context *ctx) {
  return ctx->step + 1 >= ctx->run_end || runs_flushed(ctx);
}

void pprt_set_step_offset(pprt_context *ctx, int32_t offset) {
  if (offset != 0 && offset != 1)
    pprt_fatal(ctx, "pprt_set_step_offset: offset %d; must be 0 or 1", offset);
  if (offset && (ctx->weight_versions != 2 || pprt_step_is_last(ctx)))
    pprt_fatal(ctx,
               "pipeline rank %d: an action of step %lld runs in step %lld's "
               "call, "
               "which needs two weight versions and a later step",
               ctx->pipeline_rank, (long long)ctx->step + 2,
               (long long)ctx->step + 1);
  ctx->step_offset = offset;
}

int64_t pprt_action_step(const pprt_context *ctx) {
  return ctx->step + ctx->step_offset;
}

void pprt_begin_step(pprt_context *ctx, int64_t step) {
  ctx->step = step;
  ctx->step_loss = 0.0;
  pprt_zero_grads(ctx);
  if (ctx->observer.step_begin)
    ctx->observer.step_begin(ctx->observer.self, ctx, step);
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
  /* The next step's sends stay in flight: their receives may come only in
     the next step's call. */
  pprt_wait_step_sends(ctx, ctx->step);
  /* The tensor-parallel ranks of a stage compute the same loss. */
  double loss = ctx->tp_index == 0 ? ctx->step_loss : 0.0;
  pprt_sum_to_rank0(ctx, &loss, 1, "loss");
  if (ctx->observer.step_end)
    ctx->observer.step_end(ctx->observer.self, ctx, ctx->step);
  return loss;
}

void pprt_action_begin(pprt_context *ctx, int32_t phase, int32_t stage,
                       int32_t mb) {
  if (ctx->in_stage)
    pprt_fatal(ctx, "pprt_action_begin: stage %d is already in an action",
               stage);
  if (ctx->observer.action_begin)
    ctx->observer.action_begin(ctx->observer.self, ctx, phase, stage, mb);
  ctx->in_stage = true;
  ctx->action_phase = phase;
  ctx->action_stage = stage;
  ctx->action_mb = mb;
  running_action = ctx;
  ctx->backend->ops->stage_begin(ctx->backend);
}

/* Counts the saved buffers of `stage` that micro-batch `mb`'s variant uses
   as held from its forward until their `until` phase. */
static void account_held(pprt_context *ctx, int32_t phase, int32_t stage,
                         int32_t mb) {
  int32_t variant = ctx->microbatch_variant ? ctx->microbatch_variant[mb] : 0;
  for (int64_t i = 0; i < ctx->num_saved; ++i) {
    const pprt_saved_buffer *s = &ctx->saved[i];
    const pprt_buffer_desc *b = &ctx->buffers[s->id];
    if (s->stage != stage || b->variant != variant)
      continue;
    /* A fused backward frees all (the program may keep unused B and W
       functions, whose reads set `until`); W what B leaves. */
    bool freed = phase == PPRT_BACKWARD || phase == s->until ||
                 (phase == PPRT_BACKWARD_WEIGHT && s->until == PPRT_BACKWARD);
    if (phase == PPRT_FORWARD)
      ctx->held_activation_bytes += b->bytes;
    else if (freed)
      ctx->held_activation_bytes -= b->bytes;
  }
  if (ctx->held_activation_bytes > ctx->peak_activation_bytes)
    ctx->peak_activation_bytes = ctx->held_activation_bytes;
}

int64_t pprt_peak_activation_bytes(const pprt_context *ctx) {
  return ctx->peak_activation_bytes;
}

void pprt_action_end(pprt_context *ctx) {
  if (!ctx->in_stage)
    pprt_fatal(ctx, "pprt_action_end without pprt_action_begin");
  account_held(ctx, ctx->action_phase, ctx->action_stage, ctx->action_mb);
  ctx->backend->ops->stage_end(ctx->backend);
  ctx->in_stage = false;
  running_action = NULL;
  if (ctx->observer.action_end)
    ctx->observer.action_end(ctx->observer.self, ctx, ctx->action_phase,
                             ctx->action_stage, ctx->action_mb);
}

int64_t pprt_random_seed(int64_t id) {
  const pprt_context *ctx = running_action;
  if (!ctx) {
    fprintf(stderr, "pprt: pprt_random_seed called outside a stage action\n");
    abort();
  }
  enum { TAG_RANDOM = 0x524E4447 /* "RNDG" */ };
  uint64_t keys[] = {TAG_RANDOM, (uint64_t)pprt_step(ctx),
                     (uint32_t)pprt_data_replica(ctx), (uint32_t)ctx->action_mb,
                     (uint64_t)id};
  return (int64_t)pprt_hash(ctx->opts.seed, keys, 5);
}
