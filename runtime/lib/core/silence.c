/* Waits that do not complete: ending the job with the rank that stopped. */
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>

/* " (replica R, pipeline rank P)" for world rank `rank` when there are
   several replicas of `ranks` pipeline ranks each, ", tensor index I" added
   with `tp` > 1 processes per pipeline rank; "" otherwise. */
static void describe_rank(char *out, size_t size, int32_t rank, int32_t ranks,
                          int32_t tp, int32_t world_size) {
  out[0] = '\0';
  if (ranks <= 0 || rank < 0)
    return;
  int32_t group = ranks * (tp > 1 ? tp : 1);
  if (tp > 1)
    snprintf(out, size, " (replica %d, pipeline rank %d, tensor index %d)",
             rank / group, rank / tp % ranks, rank % tp);
  else if (world_size > ranks)
    snprintf(out, size, " (replica %d, pipeline rank %d)", rank / ranks,
             rank % ranks);
}

_Noreturn void pprt_transport_fatal_silent(pprt_transport *t, int32_t ranks,
                                           int32_t tp, int32_t peer,
                                           double timeout_s, const char *what) {
  pprt_silence s = {0};
  t->ops->find_silent(t, peer, timeout_s, &s);
  char who[80], waits[256] = "";
  describe_rank(who, sizeof who, s.rank, ranks, tp, t->world_size);
  /* The chain of waits it followed; none after a collective. */
  size_t used = 0;
  if (s.length > 0)
    used = (size_t)snprintf(waits, sizeof waits, " (waits: %d", t->world_rank);
  for (int32_t i = 0; i < s.length && used < sizeof waits; ++i)
    used += (size_t)snprintf(waits + used, sizeof waits - used, " -> %d",
                             s.chain[i]);
  if (s.length > 0 && used < sizeof waits)
    snprintf(waits + used, sizeof waits - used, ")");
  if (s.rank < 0)
    fprintf(stderr,
            "pprt: rank %d: no rank stopped answering, but waiting for %s "
            "timed out after %.1f s: the ranks wait for each other%s\n",
            t->world_rank, what, s.waited_s, waits);
  else if (s.found_by != t->world_rank)
    fprintf(stderr,
            "pprt: rank %d: rank %d%s stopped answering (found by rank %d); "
            "gave up after %.1f s waiting for %s\n",
            t->world_rank, s.rank, who, s.found_by, s.waited_s, what);
  else
    fprintf(stderr,
            "pprt: rank %d: rank %d%s stopped answering: timed out after "
            "%.1f s waiting for %s%s\n",
            t->world_rank, s.rank, who, s.waited_s, what, waits);
  fflush(stderr);
  t->ops->abort(t, 1);
  exit(1); /* abort does not return */
}

_Noreturn void pprt_fatal_silent(const pprt_context *ctx, int32_t peer,
                                 const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  pprt_transport_fatal_silent(ctx->transport, ctx->num_ranks,
                              ctx->tensor_parallel, peer, ctx->opts.timeout_s,
                              what);
}

void pprt_min_everywhere(pprt_context *ctx, int32_t *vals, int32_t n,
                         const char *what) {
  pprt_transport *t = ctx->transport;
  if (!t->ops->allreduce_world_min_i32(t, vals, n, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, PPRT_EVERYONE, "every rank to agree on %s", what);
}

void pprt_sum_to_rank0(pprt_context *ctx, double *vals, int32_t n,
                       const char *what) {
  pprt_transport *t = ctx->transport;
  if (!t->ops->reduce_world_f64(t, vals, n, ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, PPRT_EVERYONE, "every rank's %s", what);
}
