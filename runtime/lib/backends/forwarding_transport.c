/* The transport that forwards every call to another: the decorators' base. */
#include "backends/transport.h"

static pprt_transport *inner_of(pprt_transport *t) {
  return ((pprt_forwarding_transport *)t)->inner;
}

#define INNER(t, op, ...) inner_of(t)->ops->op(inner_of(t), __VA_ARGS__)

static int32_t fw_split_groups(pprt_transport *t, int32_t color, int32_t key) {
  return INNER(t, split_groups, color, key);
}

static int32_t fw_isend(pprt_transport *t, const void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  return INNER(t, isend, buf, bytes, peer, tag);
}

static bool fw_wait_all(pprt_transport *t, double timeout_s) {
  return INNER(t, wait_all, timeout_s);
}

static pprt_recv_status fw_recv(pprt_transport *t, void *buf, int64_t bytes,
                                int32_t peer, int32_t tag, double timeout_s) {
  return INNER(t, recv, buf, bytes, peer, tag, timeout_s);
}

static int32_t fw_irecv(pprt_transport *t, void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  return INNER(t, irecv, buf, bytes, peer, tag);
}

static pprt_recv_status fw_wait_recv(pprt_transport *t, int32_t handle,
                                     double timeout_s) {
  return INNER(t, wait_recv, handle, timeout_s);
}

static void fw_group_begin(pprt_transport *t) {
  inner_of(t)->ops->group_begin(inner_of(t));
}

static void fw_group_end(pprt_transport *t) {
  inner_of(t)->ops->group_end(inner_of(t));
}

static int32_t fw_iallreduce_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       pprt_reduction op) {
  return INNER(t, iallreduce_group_f32, group, buf, count, op);
}

static int32_t fw_ireduce_scatter_group_f32(pprt_transport *t, int32_t group,
                                            const void *send, void *recv,
                                            int64_t count, int32_t blocks) {
  return INNER(t, ireduce_scatter_group_f32, group, send, recv, count, blocks);
}

static int32_t fw_iallgather_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       int32_t blocks) {
  return INNER(t, iallgather_group_f32, group, buf, count, blocks);
}

static bool fw_wait_for(pprt_transport *t, int32_t handle, double timeout_s) {
  return INNER(t, wait_for, handle, timeout_s);
}

static bool fw_reduce_world_f64(pprt_transport *t, double *vals, int32_t n,
                                double timeout_s) {
  return INNER(t, reduce_world_f64, vals, n, timeout_s);
}

static bool fw_allreduce_world_min_i32(pprt_transport *t, int32_t *vals,
                                       int32_t n, double timeout_s) {
  return INNER(t, allreduce_world_min_i32, vals, n, timeout_s);
}

static void fw_find_silent(pprt_transport *t, int32_t peer, double timeout_s,
                           pprt_silence *out) {
  INNER(t, find_silent, peer, timeout_s, out);
}

static void fw_abort(pprt_transport *t, int code) { INNER(t, abort, code); }

static void fw_destroy(pprt_transport *t) {
  pprt_transport *inner = inner_of(t);
  free(t);
  inner->ops->destroy(inner);
}

const pprt_transport_ops pprt_forwarding_ops = {
    .split_groups = fw_split_groups,
    .isend = fw_isend,
    .wait_all = fw_wait_all,
    .recv = fw_recv,
    .irecv = fw_irecv,
    .wait_recv = fw_wait_recv,
    .group_begin = fw_group_begin,
    .group_end = fw_group_end,
    .iallreduce_group_f32 = fw_iallreduce_group_f32,
    .ireduce_scatter_group_f32 = fw_ireduce_scatter_group_f32,
    .iallgather_group_f32 = fw_iallgather_group_f32,
    .wait_for = fw_wait_for,
    .reduce_world_f64 = fw_reduce_world_f64,
    .allreduce_world_min_i32 = fw_allreduce_world_min_i32,
    .find_silent = fw_find_silent,
    .abort = fw_abort,
    .destroy = fw_destroy,
};

void pprt_forwarding_init(pprt_forwarding_transport *f, pprt_transport *inner) {
  f->base = *inner;
  f->ops = pprt_forwarding_ops;
  f->base.ops = &f->ops;
  f->inner = inner;
}
