/* Per-step bookkeeping around pp_run_step and the end-of-run param report. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

void pprt_begin_step(pprt_context *ctx, int64_t step) {
  ctx->step = step;
  ctx->step_loss = 0.0;
  pprt_zero_grads(ctx);
  /* INPUT/TARGET slots refill themselves on first touch in this step (see
     pprt_slot_data), so ranks only generate the data they use. */
}

double pprt_end_step(pprt_context *ctx) {
  pprt_wait_all_sends(ctx);
  double loss = ctx->step_loss;
  ctx->transport->ops->reduce_world_f64(ctx->transport, &loss, 1);
  return loss;
}

/* One line of the --print-params report. */
typedef struct param_report {
  int32_t id;
  int32_t index;
  double sum;
  double sumsq;
} param_report;

static int compare_reports(const void *a, const void *b) {
  const param_report *x = a, *y = b;
  if (x->index != y->index)
    return x->index < y->index ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Lists PARAM buffers by increasing id; identical on every rank. */
static int32_t collect_params(pprt_context *ctx, param_report *out) {
  int32_t n = 0;
  for (int32_t id = 0; id < ctx->num_buffers; ++id)
    if (ctx->buffers[id].defined && ctx->buffers[id].kind == PPRT_PARAM)
      out[n++] = (param_report){id, ctx->buffers[id].index, 0.0, 0.0};
  return n;
}

/* Picks, per param, the lowest world rank of replica 0 that holds it. */
static void elect_owners(pprt_context *ctx, const param_report *params,
                         int32_t n, int32_t *owner) {
  int32_t me = ctx->transport->world_rank;
  for (int32_t i = 0; i < n; ++i) {
    const pprt_slot *s = &ctx->buffers[params[i].id].slots[0];
    owner[i] = ctx->replica == 0 && s->data ? me : INT32_MAX;
  }
  ctx->transport->ops->allreduce_world_min_i32(ctx->transport, owner, n);
}

void pprt_print_params(pprt_context *ctx) {
  int32_t cap = ctx->num_buffers ? ctx->num_buffers : 1;
  param_report *params = pprt_xcalloc(ctx, (size_t)cap, sizeof *params);
  int32_t *owner = pprt_xcalloc(ctx, (size_t)cap, sizeof *owner);
  double *stats = pprt_xcalloc(ctx, 2 * (size_t)cap, sizeof *stats);
  int32_t n = collect_params(ctx, params);
  elect_owners(ctx, params, n, owner);
  int32_t me = ctx->transport->world_rank;
  for (int32_t i = 0; i < n; ++i) {
    /* A param nobody touched still has its initial values; rank 0 makes
       them so that the report is complete. */
    bool mine = owner[i] == me || (owner[i] == INT32_MAX && me == 0);
    if (!mine)
      continue;
    pprt_buffer_desc *b = &ctx->buffers[params[i].id];
    const float *w = pprt_slot_data(ctx, b, params[i].id, 0);
    for (int64_t k = 0; k < b->numel; ++k) {
      stats[2 * i] += w[k];
      stats[2 * i + 1] += (double)w[k] * w[k];
    }
  }
  ctx->transport->ops->reduce_world_f64(ctx->transport, stats, 2 * n);
  if (me == 0) {
    for (int32_t i = 0; i < n; ++i) {
      params[i].sum = stats[2 * i];
      params[i].sumsq = stats[2 * i + 1];
    }
    qsort(params, (size_t)n, sizeof *params, compare_reports);
    for (int32_t i = 0; i < n; ++i)
      printf("param %d sum %.9g sumsq %.9g\n", params[i].index, params[i].sum,
             params[i].sumsq);
    fflush(stdout);
  }
  free(stats);
  free(owner);
  free(params);
}
