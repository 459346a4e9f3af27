/* A transport that moves device memory through host staging buffers over
   another (host-memory) transport. */
#include "backends/backend.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * Every transfer copies device memory to a host buffer (sends,
 * all-reduces) or from one (receives, all-reduce results) with the
 * backend's ops, and hands only host buffers to the inner transport, so
 * that transport need not reach device memory: several ranks can share one
 * GPU, and clusters without NCCL work. A send's or all-reduce's buffer
 * stays in use until its handle completes; released buffers are kept for
 * reuse, since pinned host memory is slow to allocate.
 */
typedef struct staging_buffer {
  void *host;
  int64_t capacity;
  bool busy;
} staging_buffer;

/* An outstanding send or all-reduce; index = our handle - first_pending. */
typedef struct pending {
  int32_t inner;  /* the inner transport's handle */
  int32_t buffer; /* index into buffers */
  void *device;   /* where a collective's result goes; NULL for sends */
  int64_t offset; /* of the result in the host buffer */
  int64_t bytes;  /* of the result (sends: of the data) */
  bool done;
} pending;

/* A receive irecv started: the inner handle, its buffer and where the
   data goes; index = our irecv handle. */
typedef struct staged_recv {
  int32_t inner;
  int32_t buffer;
  void *device;
  int64_t bytes;
} staged_recv;

typedef struct staged_transport {
  pprt_forwarding_transport fwd; /* first, so the pointers convert */
  pprt_backend *be;
  pprt_host_memory host;
  staging_buffer *buffers;
  int32_t num_buffers;
  pending *pendings;
  int32_t num_pendings;
  int32_t cap_pendings;
  int32_t first_pending; /* handle of pendings[0] (pprt_drop_done) */
  staged_recv *recvs;
  int32_t num_recvs; /* reset once none is open */
  int32_t open_recvs;
  int32_t cap_recvs;
} staged_transport;

static staged_transport *as_staged(pprt_transport *t) {
  return (staged_transport *)t;
}

static _Noreturn void staged_fatal(staged_transport *s, const char *what) {
  fprintf(stderr, "pprt: rank %d: host-staged transport: %s\n",
          s->fwd.base.world_rank, what);
  fflush(stderr);
  pprt_forwarding_ops.abort(&s->fwd.base, 1);
  abort(); /* abort() above does not return */
}

/* A free buffer of at least `bytes` bytes (its index). */
static int32_t acquire(staged_transport *s, int64_t bytes) {
  int32_t best = -1;
  for (int32_t i = 0; i < s->num_buffers; ++i)
    if (!s->buffers[i].busy && s->buffers[i].capacity >= bytes &&
        (best < 0 || s->buffers[i].capacity < s->buffers[best].capacity))
      best = i;
  if (best < 0) {
    staging_buffer *b =
        realloc(s->buffers, (size_t)(s->num_buffers + 1) * sizeof *b);
    if (!b)
      staged_fatal(s, "out of memory");
    s->buffers = b;
    void *host = s->host.alloc(s->host.ctx, bytes ? (size_t)bytes : 1);
    if (!host)
      staged_fatal(s, "out of host memory for a staging buffer");
    best = s->num_buffers++;
    s->buffers[best] = (staging_buffer){host, bytes, false};
  }
  s->buffers[best].busy = true;
  return best;
}

static void *host_of(staged_transport *s, int32_t buffer) {
  return s->buffers[buffer].host;
}

static int32_t add_pending(staged_transport *s, pending p) {
  pending *q = pprt_reserve_one(s->pendings, &s->cap_pendings, s->num_pendings,
                                sizeof *q);
  if (!q)
    staged_fatal(s, "out of memory");
  s->pendings = q;
  s->pendings[s->num_pendings] = p;
  return s->first_pending + s->num_pendings++;
}

/* The pending of `handle`. */
static pending *pending_of(staged_transport *s, int32_t handle) {
  return &s->pendings[handle - s->first_pending];
}

/* Drops the finished pendings at the front (pprt_drop_done). */
static void drop_finished(staged_transport *s) {
  int32_t done = 0;
  while (done < s->num_pendings && s->pendings[done].done)
    ++done;
  pprt_drop_done(s->pendings, &s->num_pendings, &s->first_pending, done,
                 sizeof *s->pendings);
}

/* After the inner handle completed: an all-reduce's result goes back to
   the device, and the buffer is free again. */
static void finish(staged_transport *s, pending *p) {
  if (p->done)
    return;
  if (p->device)
    s->be->ops->copy_to_device(s->be, p->device,
                               (char *)host_of(s, p->buffer) + p->offset,
                               (size_t)p->bytes);
  s->buffers[p->buffer].busy = false;
  p->done = true;
}

static int32_t st_isend(pprt_transport *t, const void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  staged_transport *s = as_staged(t);
  int32_t b = acquire(s, bytes);
  s->be->ops->copy_to_host(s->be, host_of(s, b), buf, (size_t)bytes);
  int32_t h = pprt_forwarding_ops.isend(t, host_of(s, b), bytes, peer, tag);
  return add_pending(s, (pending){h, b, NULL, 0, bytes, false});
}

static bool st_wait_all(pprt_transport *t, double timeout_s) {
  staged_transport *s = as_staged(t);
  if (!pprt_forwarding_ops.wait_all(t, timeout_s))
    return false;
  for (int32_t i = 0; i < s->num_pendings; ++i)
    finish(s, &s->pendings[i]);
  s->num_pendings = 0;
  s->first_pending = 0;
  return true;
}

static int32_t st_irecv(pprt_transport *t, void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  staged_transport *s = as_staged(t);
  staged_recv *r =
      pprt_reserve_one(s->recvs, &s->cap_recvs, s->num_recvs, sizeof *r);
  if (!r)
    staged_fatal(s, "out of memory");
  s->recvs = r;
  int32_t b = acquire(s, bytes);
  int32_t h = pprt_forwarding_ops.irecv(t, host_of(s, b), bytes, peer, tag);
  s->recvs[s->num_recvs] = (staged_recv){h, b, buf, bytes};
  ++s->open_recvs;
  return s->num_recvs++;
}

static pprt_recv_status st_wait_recv(pprt_transport *t, int32_t handle,
                                     double timeout_s) {
  staged_transport *s = as_staged(t);
  staged_recv r = s->recvs[handle];
  pprt_recv_status st = pprt_forwarding_ops.wait_recv(t, r.inner, timeout_s);
  /* After a timeout the receive is still posted (the caller aborts the
     job), so the buffer stays busy. */
  if (st == PPRT_RECV_TIMEOUT)
    return st;
  if (st == PPRT_RECV_OK)
    s->be->ops->copy_to_device(s->be, r.device, host_of(s, r.buffer),
                               (size_t)r.bytes);
  s->buffers[r.buffer].busy = false;
  if (--s->open_recvs == 0)
    s->num_recvs = 0;
  return st;
}

static pprt_recv_status st_recv(pprt_transport *t, void *buf, int64_t bytes,
                                int32_t peer, int32_t tag, double timeout_s) {
  return st_wait_recv(t, st_irecv(t, buf, bytes, peer, tag), timeout_s);
}

static int32_t st_iallreduce_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       pprt_reduction op) {
  staged_transport *s = as_staged(t);
  int64_t bytes = count * (int64_t)sizeof(float);
  int32_t b = acquire(s, bytes);
  s->be->ops->copy_to_host(s->be, host_of(s, b), buf, (size_t)bytes);
  int32_t h = pprt_forwarding_ops.iallreduce_group_f32(t, group, host_of(s, b),
                                                       count, op);
  return add_pending(s, (pending){h, b, buf, 0, bytes, false});
}

/* The host buffer holds the send blocks, then the received block. */
static int32_t st_ireduce_scatter_group_f32(pprt_transport *t, int32_t group,
                                            const void *send, void *recv,
                                            int64_t count, int32_t blocks) {
  staged_transport *s = as_staged(t);
  int64_t block = count * (int64_t)sizeof(float);
  int64_t sent = block * blocks;
  int32_t b = acquire(s, sent + block);
  char *host = host_of(s, b);
  s->be->ops->copy_to_host(s->be, host, send, (size_t)sent);
  int32_t h = pprt_forwarding_ops.ireduce_scatter_group_f32(
      t, group, host, host + sent, count, blocks);
  return add_pending(s, (pending){h, b, recv, sent, block, false});
}

static int32_t st_iallgather_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       int32_t blocks) {
  staged_transport *s = as_staged(t);
  int64_t bytes = count * blocks * (int64_t)sizeof(float);
  int32_t b = acquire(s, bytes);
  s->be->ops->copy_to_host(s->be, host_of(s, b), buf, (size_t)bytes);
  int32_t h = pprt_forwarding_ops.iallgather_group_f32(t, group, host_of(s, b),
                                                       count, blocks);
  return add_pending(s, (pending){h, b, buf, 0, bytes, false});
}

static bool st_wait_for(pprt_transport *t, int32_t handle, double timeout_s) {
  staged_transport *s = as_staged(t);
  pending *p = pending_of(s, handle);
  if (!p->done && !pprt_forwarding_ops.wait_for(t, p->inner, timeout_s))
    return false;
  finish(s, p);
  drop_finished(s);
  return true;
}

static void st_destroy(pprt_transport *t) {
  staged_transport *s = as_staged(t);
  for (int32_t i = 0; i < s->num_buffers; ++i)
    s->host.free(s->host.ctx, s->buffers[i].host);
  free(s->buffers);
  free(s->pendings);
  free(s->recvs);
  pprt_forwarding_ops.destroy(t);
}

pprt_transport *pprt_staged_transport_create(pprt_transport *inner,
                                             pprt_backend *be,
                                             const pprt_host_memory *host) {
  staged_transport *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  pprt_forwarding_init(&s->fwd, inner);
  pprt_transport_ops *ops = &s->fwd.ops;
  ops->isend = st_isend;
  ops->wait_all = st_wait_all;
  ops->recv = st_recv;
  ops->irecv = st_irecv;
  ops->wait_recv = st_wait_recv;
  ops->iallreduce_group_f32 = st_iallreduce_group_f32;
  ops->ireduce_scatter_group_f32 = st_ireduce_scatter_group_f32;
  ops->iallgather_group_f32 = st_iallgather_group_f32;
  ops->wait_for = st_wait_for;
  ops->destroy = st_destroy;
  s->be = be;
  s->host = *host;
  return &s->fwd.base;
}
