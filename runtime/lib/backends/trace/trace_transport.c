/* A transport that writes one line per transfer it forwards to another:
   the order a rank issues its transfers and exchange groups in. */
#include "backends/transport.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * PPRT_TRANSPORT_TRACE=PREFIX makes the driver wrap the transport in this
 * one, which appends to PREFIX.<rank> a line for each transfer started
 * ("send|irecv|recv peer=P tag=T bytes=B"), each group bracket
 * ("group_begin", "group_end") and each group all-reduce ("allreduce
 * count=N"): what the core asked for, in order, before any backend
 * transport reorders or stages it. Waits are not traced.
 */
typedef struct trace_transport {
  pprt_transport base; /* first, so the two pointers convert */
  pprt_transport *inner;
  FILE *out;
} trace_transport;

static trace_transport *as_trace(pprt_transport *t) {
  return (trace_transport *)t;
}

static pprt_transport *inner_of(pprt_transport *t) {
  return as_trace(t)->inner;
}

#define INNER(t, op, ...) inner_of(t)->ops->op(inner_of(t), __VA_ARGS__)

static void note(pprt_transport *t, const char *what, int32_t peer, int32_t tag,
                 int64_t bytes) {
  fprintf(as_trace(t)->out, "%s peer=%d tag=%d bytes=%lld\n", what, peer, tag,
          (long long)bytes);
}

static void tr_split_groups(pprt_transport *t, int32_t color, int32_t key) {
  INNER(t, split_groups, color, key);
}

static int32_t tr_isend(pprt_transport *t, const void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  note(t, "send", peer, tag, bytes);
  return INNER(t, isend, buf, bytes, peer, tag);
}

static void tr_wait(pprt_transport *t, int32_t handle) {
  INNER(t, wait, handle);
}

static void tr_wait_all(pprt_transport *t) {
  inner_of(t)->ops->wait_all(inner_of(t));
}

static pprt_recv_status tr_recv(pprt_transport *t, void *buf, int64_t bytes,
                                int32_t peer, int32_t tag, double timeout_s) {
  note(t, "recv", peer, tag, bytes);
  return INNER(t, recv, buf, bytes, peer, tag, timeout_s);
}

static int32_t tr_irecv(pprt_transport *t, void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  note(t, "irecv", peer, tag, bytes);
  return INNER(t, irecv, buf, bytes, peer, tag);
}

static pprt_recv_status tr_wait_recv(pprt_transport *t, int32_t handle,
                                     double timeout_s) {
  return INNER(t, wait_recv, handle, timeout_s);
}

static void tr_group_begin(pprt_transport *t) {
  fputs("group_begin\n", as_trace(t)->out);
  inner_of(t)->ops->group_begin(inner_of(t));
}

static void tr_group_end(pprt_transport *t) {
  fputs("group_end\n", as_trace(t)->out);
  inner_of(t)->ops->group_end(inner_of(t));
}

static int32_t tr_iallreduce_group_f32(pprt_transport *t, void *buf,
                                       int64_t count) {
  fprintf(as_trace(t)->out, "allreduce count=%lld\n", (long long)count);
  return INNER(t, iallreduce_group_f32, buf, count);
}

static bool tr_wait_for(pprt_transport *t, int32_t handle, double timeout_s) {
  return INNER(t, wait_for, handle, timeout_s);
}

static void tr_reduce_world_f64(pprt_transport *t, double *vals, int32_t n) {
  INNER(t, reduce_world_f64, vals, n);
}

static void tr_allreduce_world_min_i32(pprt_transport *t, int32_t *vals,
                                       int32_t n) {
  INNER(t, allreduce_world_min_i32, vals, n);
}

static int32_t tr_find_silent(pprt_transport *t, int32_t peer, double timeout_s,
                              int32_t *chain, int32_t *length) {
  return INNER(t, find_silent, peer, timeout_s, chain, length);
}

static void tr_abort(pprt_transport *t, int code) {
  fflush(as_trace(t)->out);
  INNER(t, abort, code);
}

static void tr_destroy(pprt_transport *t) {
  trace_transport *tr = as_trace(t);
  pprt_transport *inner = tr->inner;
  fclose(tr->out);
  free(tr);
  inner->ops->destroy(inner);
}

static const pprt_transport_ops trace_ops = {
    .split_groups = tr_split_groups,
    .isend = tr_isend,
    .wait = tr_wait,
    .wait_all = tr_wait_all,
    .recv = tr_recv,
    .irecv = tr_irecv,
    .wait_recv = tr_wait_recv,
    .group_begin = tr_group_begin,
    .group_end = tr_group_end,
    .iallreduce_group_f32 = tr_iallreduce_group_f32,
    .wait_for = tr_wait_for,
    .reduce_world_f64 = tr_reduce_world_f64,
    .allreduce_world_min_i32 = tr_allreduce_world_min_i32,
    .find_silent = tr_find_silent,
    .abort = tr_abort,
    .destroy = tr_destroy,
};

pprt_transport *pprt_trace_transport_create(pprt_transport *inner,
                                            const char *prefix, char *err,
                                            size_t err_size) {
  char path[4096];
  snprintf(path, sizeof path, "%s.%d", prefix, inner->world_rank);
  trace_transport *tr = calloc(1, sizeof *tr);
  FILE *out = tr ? fopen(path, "w") : NULL;
  if (!out) {
    snprintf(err, err_size, "cannot write the transport trace '%s'", path);
    free(tr);
    return NULL;
  }
  tr->base = *inner;
  tr->base.ops = &trace_ops;
  tr->inner = inner;
  tr->out = out;
  return &tr->base;
}
