/* Step plans chosen at run time (--choose-plans): each step of an index the
   program was not planned for runs the compiled plan that holds its
   samples with the fewest token slots (rows x positions of its
   micro-batches). */
#include "driver/plan_choice.h"

#include <stdio.h>
#include <stdlib.h>

/* Positions of variant `v`'s data buffers (their dimension 1); every rank
   defines a data buffer of each variant its plans run
   (pprt_variant_rows). */
static int64_t variant_positions(const pprt_context *ctx, int32_t v) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->variant == v && b->ndims >= 2 &&
        (b->kind == PPRT_INPUT || b->kind == PPRT_TARGET))
      return b->dims[1];
  }
  return 0;
}

/* Fills plan `p`'s micro-batches with the `n` sorted lengths in order,
   each taking as many as its rows hold and its positions fit (the most
   any cut of sorted samples into its micro-batches in order can place);
   the samples of each into `counts`. Its token slots, or -1 if some
   sample is left over. */
static int64_t fill_plan(const pprt_context *ctx, const pprt_plan *p,
                         const int64_t *sorted, int64_t n, int32_t *counts) {
  int64_t at = 0, slots = 0;
  for (int32_t mb = 0; mb < p->num_microbatches; ++mb) {
    int64_t rows = p->rows_before[mb + 1] - p->rows_before[mb];
    int64_t positions = variant_positions(ctx, p->variant[mb]);
    int64_t first = at;
    while (at < n && at - first < rows && sorted[at] <= positions)
      ++at;
    counts[mb] = (int32_t)(at - first);
    slots += rows * positions;
  }
  return at == n ? slots : -1;
}

/* The plan holding the `n` sorted lengths with the fewest token slots
   (then the fewest micro-batches, then the first), its counts in
   `counts`; -1 if none holds them. */
static int32_t choose_plan(const pprt_context *ctx, const int64_t *sorted,
                           int64_t n, int32_t *counts) {
  int32_t best = -1;
  int64_t best_slots = 0;
  int32_t *trial =
      pprt_xcalloc(ctx, (size_t)ctx->num_microbatches, sizeof *trial);
  for (int32_t k = 0; k < ctx->num_plans; ++k) {
    const pprt_plan *p = &ctx->plans[k];
    int64_t slots = fill_plan(ctx, p, sorted, n, trial);
    if (slots < 0 || (best >= 0 && (slots > best_slots ||
                                    (slots == best_slots &&
                                     p->num_microbatches >=
                                         ctx->plans[best].num_microbatches))))
      continue;
    best = k;
    best_slots = slots;
    for (int32_t mb = 0; mb < p->num_microbatches; ++mb)
      counts[mb] = trial[mb];
  }
  free(trial);
  return best;
}

bool pprt_choose_step_plans(pprt_context *ctx, int64_t num_steps,
                            const int64_t *const *sorted,
                            const int64_t *num_samples, int64_t *failed_step,
                            int32_t *failed_replica) {
  int32_t replicas = pprt_num_data_replicas(ctx);
  int64_t most = 0, capacity = 2;
  for (int64_t i = 0; i < num_steps; ++i) {
    most = num_samples[i] > most ? num_samples[i] : most;
    capacity += (int64_t)replicas * (2 + ctx->num_microbatches);
  }
  int32_t *table = pprt_xcalloc(ctx, (size_t)capacity, sizeof *table);
  int64_t *own = pprt_xcalloc(ctx, (size_t)most, sizeof *own);
  int32_t size = 2;
  table[0] = (int32_t)num_steps;
  table[1] = replicas;
  bool ok = true;
  for (int64_t i = 0; ok && i < num_steps; ++i)
    for (int32_t r = 0; ok && r < replicas; ++r) {
      /* Replica r's samples: the sorted ones at r, r + D, r + 2D, ... */
      int64_t n = 0;
      for (int64_t k = r; k < num_samples[i]; k += replicas)
        own[n++] = sorted[i][k];
      int32_t plan = choose_plan(ctx, own, n, table + size + 2);
      *failed_step = i;
      *failed_replica = r;
      ok = plan >= 0;
      table[size] = plan;
      table[size + 1] = ok ? ctx->plans[plan].num_microbatches : 0;
      size += 2 + table[size + 1];
    }
  if (ok)
    pprt_set_step_plans(ctx, table, size);
  free(own);
  free(table);
  return ok;
}

void pprt_report_step_plans(const pprt_context *ctx, const char *path) {
  enum { SHOWN = 32 };
  if (ctx->transport->world_rank != 0)
    return;
  printf("pprt: --choose-plans: the %d steps of %s run plans", ctx->plan_lines,
         path);
  for (int32_t i = 0; i < ctx->plan_lines && i < SHOWN; ++i)
    for (int32_t r = 0; r < ctx->plan_replicas; ++r)
      printf("%s%d", r ? "/" : " ", pprt_plan_entry(ctx, i, r)[0]);
  printf("%s\n", ctx->plan_lines > SHOWN ? " ..." : "");
  fflush(stdout);
}
