/* Per-step plans: a program compiled with one schedule per distinct step
   shape (pp-compile --step-plans) declares each plan's micro-batch
   variants and a table choosing a plan per step and replica; each step
   then runs its plan's schedule and loads its plan's rows. */
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

void pprt_set_plan_microbatch_variant(pprt_context *ctx, int32_t plan,
                                      int32_t mb, int32_t variant) {
  if (!ctx->program_set)
    pprt_fatal(ctx, "pprt_set_plan_microbatch_variant before pprt_set_program");
  if (plan < 0 || plan > ctx->num_plans || mb < 0 ||
      mb >= ctx->num_microbatches || variant < 0)
    pprt_fatal(ctx,
               "pprt_set_plan_microbatch_variant: plan %d (after %d), "
               "micro-batch %d (of %d), variant %d",
               plan, ctx->num_plans, mb, ctx->num_microbatches, variant);
  if (plan == ctx->num_plans) {
    pprt_plan *grown = pprt_xcalloc(ctx, (size_t)plan + 1, sizeof *ctx->plans);
    if (plan)
      memcpy(grown, ctx->plans, (size_t)plan * sizeof *grown);
    free(ctx->plans);
    ctx->plans = grown;
    ctx->plans[plan].variant =
        pprt_xcalloc(ctx, (size_t)ctx->num_microbatches, sizeof(int32_t));
    ctx->num_plans = plan + 1;
  }
  pprt_plan *p = &ctx->plans[plan];
  if (mb != p->num_microbatches)
    pprt_fatal(ctx,
               "pprt_set_plan_microbatch_variant: plan %d declares "
               "micro-batch %d after %d",
               plan, mb, p->num_microbatches);
  p->variant[mb] = variant;
  p->num_microbatches = mb + 1;
}

void pprt_set_step_plans(pprt_context *ctx, const int32_t *table,
                         int32_t size) {
  if (!ctx->num_plans || size < 2 || table[0] < 1 || table[1] < 1)
    pprt_fatal(ctx,
               "pprt_set_step_plans: no plans, or a table of %d entries "
               "without lines and replicas",
               size);
  int32_t lines = table[0], replicas = table[1];
  free(ctx->plan_entry); /* a later table replaces the compiled one */
  free(ctx->step_table);
  ctx->plan_entry = pprt_xcalloc(ctx, (size_t)lines * (size_t)replicas,
                                 sizeof *ctx->plan_entry);
  int64_t at = 2;
  for (int64_t e = 0; e < (int64_t)lines * replicas; ++e) {
    int32_t plan = at + 1 < size ? table[at] : -1;
    if (plan < 0 || plan >= ctx->num_plans ||
        table[at + 1] != ctx->plans[plan].num_microbatches ||
        at + 2 + table[at + 1] > size)
      pprt_fatal(ctx,
                 "pprt_set_step_plans: entry %lld (line %lld, replica %lld) "
                 "names no declared plan",
                 (long long)e, (long long)(e / replicas),
                 (long long)(e % replicas));
    ctx->plan_entry[e] = at;
    at += 2 + table[at + 1];
  }
  ctx->step_table = pprt_xcalloc(ctx, (size_t)size, sizeof *ctx->step_table);
  memcpy(ctx->step_table, table, (size_t)size * sizeof *table);
  ctx->plan_lines = lines;
  ctx->plan_replicas = replicas;
}

void pprt_set_packing(pprt_context *ctx, int32_t row) {
  if (!ctx->plan_lines || row < 1)
    pprt_fatal(ctx, "pprt_set_packing: rows of %d tokens, %s", row,
               ctx->plan_lines ? "not positive" : "before the step plans");
  ctx->packed_row = row;
}

void pprt_count_plan_rows(pprt_context *ctx) {
  for (int32_t k = 0; k < ctx->num_plans; ++k) {
    pprt_plan *p = &ctx->plans[k];
    if (p->rows_before)
      continue;
    p->rows_before = pprt_xcalloc(ctx, (size_t)p->num_microbatches + 1,
                                  sizeof *p->rows_before);
    for (int32_t j = 0; j < p->num_microbatches; ++j)
      p->rows_before[j + 1] =
          p->rows_before[j] + pprt_variant_rows(ctx, p->variant[j], j);
  }
}

void pprt_free_plans(pprt_context *ctx) {
  for (int32_t k = 0; k < ctx->num_plans; ++k) {
    free(ctx->plans[k].variant);
    free(ctx->plans[k].rows_before);
  }
  free(ctx->plans);
  free(ctx->step_table);
  free(ctx->plan_entry);
}

int32_t pprt_plan_line(const pprt_context *ctx, int64_t step) {
  return (int32_t)(step % ctx->plan_lines);
}

const int32_t *pprt_plan_entry(const pprt_context *ctx, int32_t line,
                               int32_t replica) {
  return ctx->step_table +
         ctx->plan_entry[(int64_t)line * ctx->plan_replicas + replica];
}

int64_t pprt_plan_first_row(const pprt_context *ctx, int32_t line,
                            int32_t replica, int32_t mb) {
  int64_t row = 0;
  for (int32_t r = 0; r < replica; ++r) {
    const pprt_plan *p = &ctx->plans[pprt_plan_entry(ctx, line, r)[0]];
    row += p->rows_before[p->num_microbatches];
  }
  return row +
         ctx->plans[pprt_plan_entry(ctx, line, replica)[0]].rows_before[mb];
}

int32_t pprt_step_plan(pprt_context *ctx) {
  if (!ctx->plan_lines)
    pprt_fatal(ctx, "pprt_step_plan: the program declared no step plans");
  if (ctx->plan_replicas != pprt_num_data_replicas(ctx))
    pprt_fatal(ctx,
               "the program's step plans are for %d data-parallel replicas; "
               "it runs on %d",
               ctx->plan_replicas, pprt_num_data_replicas(ctx));
  int32_t line = pprt_plan_line(ctx, ctx->step);
  int32_t plan = pprt_plan_entry(ctx, line, pprt_data_replica(ctx))[0];
  pprt_pool_unplanned_slots(ctx, &ctx->plans[plan]);
  ctx->microbatch_variant = ctx->plans[plan].variant;
  ctx->microbatch_rows_before = ctx->plans[plan].rows_before;
  return plan;
}
