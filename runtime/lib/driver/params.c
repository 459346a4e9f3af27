/* The end-of-run param report (--print-params) and the replicas' check
   (also before each checkpoint). */
#include "driver/driver.h"
#include "driver/safetensors.h"

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

/* Whether this rank's copy of PARAM `b` stands for block `k` of it: its
   own block if the param is split, block 0 (the whole) otherwise. */
static bool holds_block(const pprt_context *ctx, const pprt_buffer_desc *b,
                        int32_t k) {
  return pprt_is_split(b) ? ctx->tp_index == k : k == 0;
}

void pprt_elect_owners(pprt_context *ctx, const int32_t *ids, int32_t n,
                       int32_t *owner) {
  int32_t me = ctx->transport->world_rank, tp = ctx->tensor_parallel;
  for (int32_t i = 0; i < n; ++i) {
    const pprt_buffer_desc *b = &ctx->buffers[ids[i]];
    for (int32_t k = 0; k < tp; ++k)
      owner[i * tp + k] =
          ctx->replica == 0 && b->slots[0].data && holds_block(ctx, b, k)
              ? me
              : INT32_MAX;
  }
  pprt_min_everywhere(ctx, owner, n * tp, "which rank holds each weight");
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
  if (b->moment1 && !pprt_zero_sharded(ctx, b->stage)) {
    h = pprt_fnv1a(h, pprt_to_host(ctx, b->moment1, (size_t)b->bytes),
                   (size_t)b->bytes);
    h = pprt_fnv1a(h, pprt_to_host(ctx, b->moment2, (size_t)b->bytes),
                   (size_t)b->bytes);
  }
  h = pprt_fnv1a(h, &b->num_updates, sizeof b->num_updates);
  return (int32_t)(h % INT32_MAX);
}

/* Data-parallel replicas apply the same summed gradients to the same
   state, so they hold bit-identical weights and optimizer state; so do the
   tensor-parallel ranks of a replicated (not split) param. A split param's
   blocks are compared per tp index. */
int32_t pprt_find_diverged_param(pprt_context *ctx, const int32_t *ids,
                                 int32_t n) {
  int32_t tp = ctx->tensor_parallel, m = n * tp;
  if (ctx->num_replicas == 1 && tp == 1)
    return -1;
  /* min over the holders of h and of ~h: they agree iff min h == max h. */
  int32_t *lo = pprt_xcalloc(ctx, 2 * (size_t)m, sizeof *lo);
  int32_t *not_hi = lo + m;
  for (int32_t i = 0; i < m; ++i) {
    const pprt_buffer_desc *b = &ctx->buffers[ids[i / tp]];
    lo[i] = holds_block(ctx, b, i % tp) ? state_fingerprint(ctx, ids[i / tp])
                                        : INT32_MAX;
    not_hi[i] = lo[i] == INT32_MAX ? INT32_MAX : ~lo[i];
  }
  pprt_min_everywhere(ctx, lo, 2 * m, "the replicas' weight fingerprints");
  int32_t diverged = -1;
  for (int32_t i = 0; i < m && diverged < 0; ++i)
    if (lo[i] != INT32_MAX && lo[i] != ~not_hi[i])
      diverged = ctx->buffers[ids[i / tp]].index;
  free(lo);
  return diverged;
}

/* The sum and sum of squares of param `id`'s global values on world rank
   0 (zeros elsewhere), gathered from its owners. */
static void param_stats(pprt_context *ctx, int32_t id, const int32_t *owners,
                        void *whole, double *stats) {
  pprt_buffer_desc *b = &ctx->buffers[id];
  pprt_require_f32(ctx, b, id, "--print-params");
  const float *w = pprt_param_global_part(ctx, id, owners, PPRT_PART_VALUES,
                                          NULL, "--print-params", whole);
  if (!w)
    return;
  int64_t numel = pprt_global_desc(b).numel;
  for (int64_t k = 0; k < numel; ++k) {
    stats[0] += w[k];
    stats[1] += (double)w[k] * w[k];
  }
}

bool pprt_print_params(pprt_context *ctx) {
  int32_t cap = ctx->num_buffers ? ctx->num_buffers : 1;
  int32_t tp = ctx->tensor_parallel;
  param_report *params = pprt_xcalloc(ctx, (size_t)cap, sizeof *params);
  int32_t *ids = pprt_xcalloc(ctx, (size_t)cap, sizeof *ids);
  int32_t *owner = pprt_xcalloc(ctx, (size_t)cap * (size_t)tp, sizeof *owner);
  int32_t n = collect_params(ctx, params);
  for (int32_t i = 0; i < n; ++i)
    ids[i] = params[i].id;
  int32_t diverged = pprt_find_diverged_param(ctx, ids, n);
  pprt_elect_owners(ctx, ids, n, owner);
  int32_t me = ctx->transport->world_rank;
  void *whole = NULL;
  for (int32_t i = 0; i < n; ++i) {
    double stats[2] = {0.0, 0.0};
    int64_t bytes = pprt_global_desc(&ctx->buffers[ids[i]]).bytes;
    whole = me == 0 ? realloc(whole, (size_t)bytes) : NULL;
    if (me == 0 && !whole)
      pprt_fatal(ctx, "out of memory for --print-params");
    param_stats(ctx, ids[i], owner + i * tp, whole, stats);
    params[i].sum = stats[0];
    params[i].sumsq = stats[1];
  }
  free(whole);
  if (me == 0) {
    qsort(params, (size_t)n, sizeof *params, compare_reports);
    for (int32_t i = 0; i < n; ++i)
      printf("param %d sum %.9g sumsq %.9g\n", params[i].index, params[i].sum,
             params[i].sumsq);
    fflush(stdout);
    if (diverged >= 0)
      fprintf(stderr, "pprt: the %s hold different values of param %d\n",
              tp > 1 ? "data-parallel replicas or tensor-parallel ranks"
                     : "data-parallel replicas",
              diverged);
  }
  free(owner);
  free(ids);
  free(params);
  return diverged < 0;
}

void pprt_print_memory(pprt_context *ctx) {
  int64_t weights = 0, grads = 0;
  bool sharded = false; /* a ZeRO-3 stage's weights on this rank */
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == PPRT_PARAM && b->zero_weights)
      sharded = true;
    if (!b->defined || !b->slots || !b->slots[0].data)
      continue;
    /* ZeRO-3 stages count the replica's blocks below. */
    if (b->kind == PPRT_PARAM && !pprt_zero_weights_sharded(ctx, b->stage))
      weights += b->bytes;
    else if (b->kind == PPRT_PARAM_GRAD)
      grads += b->bytes;
  }
  /* ZeRO-3 keeps the replica's blocks between steps, and gathers the
     whole weights for the step. */
  weights += pprt_zero_weight_block_bytes(ctx);
  printf("memory rank %d: weights %lld gradients %lld optimizer %lld bytes\n",
         ctx->transport->world_rank, (long long)weights, (long long)grads,
         (long long)ctx->optimizer_state_bytes);
  if (sharded)
    printf("gathered weights rank %d: peak %lld bytes\n",
           ctx->transport->world_rank,
           (long long)ctx->peak_gathered_weight_bytes);
  printf("activation memory rank %d: peak %lld bytes\n",
         ctx->transport->world_rank,
         (long long)pprt_peak_activation_bytes(ctx));
  printf("micro-batch buffers rank %d: %lld bytes allocated\n",
         ctx->transport->world_rank, (long long)ctx->microbatch_buffer_bytes);
  fflush(stdout);
}
