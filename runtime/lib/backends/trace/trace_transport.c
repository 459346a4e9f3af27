/* A transport that writes one line per transfer it forwards to another:
   the order a rank issues its transfers and exchange groups in. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * PPRT_TRANSPORT_TRACE=PREFIX makes the driver wrap the transport in this
 * one, which appends to PREFIX.<rank> a line for each transfer started
 * ("send|irecv|recv peer=P tag=T bytes=B"), each group bracket
 * ("group_begin", "group_end") and each group collective ("allreduce
 * group=G count=N", "reduce_scatter ...", "all_gather ..."): what the core
 * asked for, in order, before any backend transport reorders or stages it.
 * Waits are not traced.
 */
typedef struct trace_transport {
  pprt_forwarding_transport fwd; /* first, so the pointers convert */
  FILE *out;
  char path[4096];
} trace_transport;

static FILE *out_of(pprt_transport *t) { return ((trace_transport *)t)->out; }

static void note(pprt_transport *t, const char *what, int32_t peer, int32_t tag,
                 int64_t bytes) {
  fprintf(out_of(t), "%s peer=%d tag=%d bytes=%lld\n", what, peer, tag,
          (long long)bytes);
}

static int32_t tr_isend(pprt_transport *t, const void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  note(t, "send", peer, tag, bytes);
  return pprt_forwarding_ops.isend(t, buf, bytes, peer, tag);
}

static pprt_recv_status tr_recv(pprt_transport *t, void *buf, int64_t bytes,
                                int32_t peer, int32_t tag, double timeout_s) {
  note(t, "recv", peer, tag, bytes);
  return pprt_forwarding_ops.recv(t, buf, bytes, peer, tag, timeout_s);
}

static int32_t tr_irecv(pprt_transport *t, void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  note(t, "irecv", peer, tag, bytes);
  return pprt_forwarding_ops.irecv(t, buf, bytes, peer, tag);
}

static void tr_group_begin(pprt_transport *t) {
  fputs("group_begin\n", out_of(t));
  pprt_forwarding_ops.group_begin(t);
}

static void tr_group_end(pprt_transport *t) {
  fputs("group_end\n", out_of(t));
  pprt_forwarding_ops.group_end(t);
}

static int32_t tr_iallreduce_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       pprt_reduction op) {
  /* A sum, the usual reduction, goes unnamed. */
  fprintf(out_of(t), "allreduce group=%d count=%lld%s\n", group,
          (long long)count,
          op == PPRT_REDUCE_MAX   ? " op=max"
          : op == PPRT_REDUCE_MIN ? " op=min"
                                  : "");
  return pprt_forwarding_ops.iallreduce_group_f32(t, group, buf, count, op);
}

static int32_t tr_ireduce_scatter_group_f32(pprt_transport *t, int32_t group,
                                            const void *send, void *recv,
                                            int64_t count, int32_t blocks) {
  fprintf(out_of(t), "reduce_scatter group=%d count=%lld blocks=%d\n", group,
          (long long)count, blocks);
  return pprt_forwarding_ops.ireduce_scatter_group_f32(t, group, send, recv,
                                                       count, blocks);
}

static int32_t tr_iallgather_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       int32_t blocks) {
  fprintf(out_of(t), "all_gather group=%d count=%lld blocks=%d\n", group,
          (long long)count, blocks);
  return pprt_forwarding_ops.iallgather_group_f32(t, group, buf, count, blocks);
}

static void tr_abort(pprt_transport *t, int code) {
  fflush(out_of(t));
  pprt_forwarding_ops.abort(t, code);
}

/* A trace that could not be written whole is reported, and the process
   exits 1 once the inner transport is shut down. */
static void tr_destroy(pprt_transport *t) {
  trace_transport *tr = (trace_transport *)t;
  bool failed = ferror(tr->out) != 0;
  failed = fclose(tr->out) != 0 || failed;
  int rank = t->world_rank;
  if (failed)
    fprintf(stderr,
            "pprt: rank %d: PPRT_TRANSPORT_TRACE: cannot write '%s': "
            "%s\n",
            rank, tr->path, strerror(errno));
  pprt_forwarding_ops.destroy(t);
  if (failed)
    exit(1);
}

pprt_transport *pprt_trace_transport_create(pprt_transport *inner,
                                            const char *prefix, char *err,
                                            size_t err_size) {
  trace_transport *tr = calloc(1, sizeof *tr);
  if (!tr) {
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  snprintf(tr->path, sizeof tr->path, "%s.%d", prefix, inner->world_rank);
  /* Without blocking on a FIFO, and only into a regular file. */
  int fd = open(tr->path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0666);
  struct stat st;
  bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  FILE *out = regular && fcntl(fd, F_SETFL, 0) == 0 ? fdopen(fd, "w") : NULL;
  if (!out) {
    snprintf(err, err_size, "cannot write the transport trace '%s': %s",
             tr->path,
             (fd >= 0 && !regular) || errno == ENXIO ? "not a regular file"
                                                     : strerror(errno));
    if (fd >= 0)
      close(fd);
    free(tr);
    return NULL;
  }
  pprt_forwarding_init(&tr->fwd, inner);
  pprt_transport_ops *ops = &tr->fwd.ops;
  ops->isend = tr_isend;
  ops->recv = tr_recv;
  ops->irecv = tr_irecv;
  ops->group_begin = tr_group_begin;
  ops->group_end = tr_group_end;
  ops->iallreduce_group_f32 = tr_iallreduce_group_f32;
  ops->ireduce_scatter_group_f32 = tr_ireduce_scatter_group_f32;
  ops->iallgather_group_f32 = tr_iallgather_group_f32;
  ops->abort = tr_abort;
  ops->destroy = tr_destroy;
  tr->out = out;
  return &tr->fwd.base;
}
