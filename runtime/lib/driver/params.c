/* The end-of-run param report (--print-params) and the replicas' check
   (also before each checkpoint). */
#include "driver/driver.h"

#include <stdio.h>
#include <stdlib.h>

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

void pprt_elect_owners(pprt_context *ctx, const int32_t *ids, int32_t n,
                       int32_t *owner) {
  int32_t me = ctx->transport->world_rank;
  for (int32_t i = 0; i < n; ++i) {
    const pprt_slot *s = &ctx->buffers[ids[i]].slots[0];
    owner[i] = ctx->replica == 0 && s->data ? me : INT32_MAX;
  }
  pprt_min_everywhere(ctx, owner, n, "which rank holds each weight");
}

uint64_t pprt_fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *bytes = data;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ bytes[i]) * 0x100000001B3ull;
  return h;
}

/* A 31-bit fingerprint of every part of param `id`'s state on this rank,
   or INT32_MAX if this rank does not hold the param. */
static int32_t state_fingerprint(pprt_context *ctx, int32_t id) {
  pprt_buffer_desc *b = &ctx->buffers[id];
  if (!b->slots[0].data)
    return INT32_MAX;
  uint64_t h = PPRT_FNV_OFFSET;
  h = pprt_fnv1a(h, pprt_to_host(ctx, b->slots[0].data, (size_t)b->bytes),
                 (size_t)b->bytes);
  /* Under ZeRO-1 each replica holds its own block of the moments. */
  if (b->moment1 && !pprt_zero_sharded(ctx)) {
    h = pprt_fnv1a(h, pprt_to_host(ctx, b->moment1, (size_t)b->bytes),
                   (size_t)b->bytes);
    h = pprt_fnv1a(h, pprt_to_host(ctx, b->moment2, (size_t)b->bytes),
                   (size_t)b->bytes);
  }
  h = pprt_fnv1a(h, &b->num_updates, sizeof b->num_updates);
  return (int32_t)(h % INT32_MAX);
}

/* Data-parallel replicas apply the same summed gradients to the same
   state, so they hold bit-identical weights and optimizer state. */
int32_t pprt_find_diverged_param(pprt_context *ctx, const int32_t *ids,
                                 int32_t n) {
  if (ctx->num_replicas == 1)
    return -1;
  /* min over the holders of h and of ~h: they agree iff min h == max h. */
  int32_t *lo = pprt_xcalloc(ctx, 2 * (size_t)n, sizeof *lo);
  int32_t *not_hi = lo + n;
  for (int32_t i = 0; i < n; ++i) {
    lo[i] = state_fingerprint(ctx, ids[i]);
    not_hi[i] = lo[i] == INT32_MAX ? INT32_MAX : ~lo[i];
  }
  pprt_min_everywhere(ctx, lo, 2 * n, "the replicas' weight fingerprints");
  int32_t diverged = -1;
  for (int32_t i = 0; i < n && diverged < 0; ++i)
    if (lo[i] != INT32_MAX && lo[i] != ~not_hi[i])
      diverged = ctx->buffers[ids[i]].index;
  free(lo);
  return diverged;
}

bool pprt_print_params(pprt_context *ctx) {
  int32_t cap = ctx->num_buffers ? ctx->num_buffers : 1;
  param_report *params = pprt_xcalloc(ctx, (size_t)cap, sizeof *params);
  int32_t *owner = pprt_xcalloc(ctx, 2 * (size_t)cap, sizeof *owner);
  int32_t *ids = owner + cap;
  double *stats = pprt_xcalloc(ctx, 2 * (size_t)cap, sizeof *stats);
  int32_t n = collect_params(ctx, params);
  for (int32_t i = 0; i < n; ++i)
    ids[i] = params[i].id;
  int32_t diverged = pprt_find_diverged_param(ctx, ids, n);
  pprt_elect_owners(ctx, ids, n, owner);
  int32_t me = ctx->transport->world_rank;
  for (int32_t i = 0; i < n; ++i) {
    /* A param nobody touched still has its initial values; rank 0 makes
       them so that the report is complete. */
    bool mine = owner[i] == me || (owner[i] == INT32_MAX && me == 0);
    if (!mine)
      continue;
    pprt_buffer_desc *b = &ctx->buffers[params[i].id];
    pprt_require_f32(ctx, b, params[i].id, "--print-params");
    const float *w = pprt_to_host(ctx, pprt_slot_data(ctx, b, params[i].id, 0),
                                  (size_t)b->bytes);
    for (int64_t k = 0; k < b->numel; ++k) {
      stats[2 * i] += w[k];
      stats[2 * i + 1] += (double)w[k] * w[k];
    }
  }
  pprt_sum_to_rank0(ctx, stats, 2 * n, "weight sums");
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
    if (diverged >= 0)
      fprintf(stderr,
              "pprt: the data-parallel replicas hold different values of "
              "param %d\n",
              diverged);
  }
  free(stats);
  free(owner);
  free(params);
  return diverged < 0;
}

void pprt_print_memory(pprt_context *ctx) {
  int64_t weights = 0, grads = 0;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!b->defined || !b->slots || !b->slots[0].data)
      continue;
    if (b->kind == PPRT_PARAM)
      weights += b->bytes;
    else if (b->kind == PPRT_PARAM_GRAD)
      grads += b->bytes;
  }
  printf("memory rank %d: weights %lld gradients %lld optimizer %lld bytes\n",
         ctx->transport->world_rank, (long long)weights, (long long)grads,
         (long long)ctx->optimizer_state_bytes);
  fflush(stdout);
}
