/* NCCL implementation of the runtime's transport interface (device memory). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/nccl/nccl_transport.h"
#include "backends/awake_clock.h"
#include "backends/mpi/unpolled.h"

#include <nccl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Transfers run on a stream of their own: each group of them waits for the
 * compute stream's work so far (an event), and the compute stream waits
 * for a receive or all-reduce (its handle's event) before its later work,
 * so transfers overlap the compute that does not need them. One exchange
 * group of the core is one NCCL group: its sends and receives are issued
 * between one ncclGroupStart/End pair in the core's order, and a transfer
 * outside a group is a group of its own. NCCL has no tags: the transfers
 * between two ranks match in the order both issue them, and a receive of
 * the wrong size is not detected (it times out or corrupts). A handle is
 * an event recorded after its group; waits poll it, so a lost peer becomes
 * a timeout. While polling here a rank does not answer the MPI transport's
 * find_silent questions.
 */
typedef struct nccl_transport {
  pprt_transport base; /* first, so the two pointers convert */
  pprt_transport *inner;
  ncclComm_t world;
  ncclComm_t groups[PPRT_MAX_GROUPS]; /* split_groups' communicators, by id */
  int32_t num_groups;
  cudaStream_t compute, comm;
  cudaEvent_t *events; /* index = handle */
  int32_t num_events, cap_events;
  /* The open exchange group's first handle; -1 outside a group. */
  int32_t group_first;
  double waited_s; /* how long the last wait lasted */
} nccl_transport;

/* What crosses MPI from rank 0: whether it has an id, and the id. */
typedef struct id_message {
  int32_t ok;
  ncclUniqueId id;
} id_message;

enum { ID_TAG = 1 };
static const double ID_TIMEOUT_S = 120.0;

static nccl_transport *as_nccl(pprt_transport *t) {
  return (nccl_transport *)t;
}

static _Noreturn void nccl_fatal(nccl_transport *n, const char *what,
                                 const char *detail) {
  fprintf(stderr, "pprt: rank %d: NCCL transport: %s: %s\n", n->base.world_rank,
          what, detail);
  fflush(stderr);
  if (n->world)
    ncclCommAbort(n->world);
  n->inner->ops->abort(n->inner, 1);
  abort(); /* abort() above does not return */
}

static void check_nccl(nccl_transport *n, ncclResult_t rc, const char *what) {
  if (rc != ncclSuccess)
    nccl_fatal(n, what, ncclGetErrorString(rc));
}

static void check_cuda(nccl_transport *n, cudaError_t rc, const char *what) {
  if (rc != cudaSuccess)
    nccl_fatal(n, what, cudaGetErrorString(rc));
}

/* The comm stream waits for the compute stream's work so far. */
static void after_compute(nccl_transport *n) {
  cudaEvent_t ev;
  check_cuda(n, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming),
             "cudaEventCreate");
  check_cuda(n, cudaEventRecord(ev, n->compute), "cudaEventRecord");
  check_cuda(n, cudaStreamWaitEvent(n->comm, ev, 0), "cudaStreamWaitEvent");
  cudaEventDestroy(ev); /* released once the wait is done */
}

/* A new handle: an event recorded on the comm stream once its group has
   been issued (nc_group_end). */
static int32_t new_handle(nccl_transport *n) {
  cudaEvent_t *e =
      pprt_reserve_one(n->events, &n->cap_events, n->num_events, sizeof *e);
  if (!e)
    nccl_fatal(n, "handles", "out of memory");
  n->events = e;
  check_cuda(n,
             cudaEventCreateWithFlags(&n->events[n->num_events],
                                      cudaEventDisableTiming),
             "cudaEventCreate");
  return n->num_events++;
}

/* An unrecorded event counts as complete: a wait inside its group would
   return at once, before the transfer even started. */
static void check_issued(nccl_transport *n, int32_t handle) {
  if (n->group_first >= 0 && handle >= n->group_first)
    nccl_fatal(n, "wait", "a transfer of the open group waited on");
}

/* Polls `ev` (or, when NULL, the comm stream) until it completes (true)
   or `timeout_s` passes (false) on an awake clock (a job suspended as a
   whole is not late); NCCL's asynchronous errors end the job. */
static bool poll_event(nccl_transport *n, cudaEvent_t ev, double timeout_s) {
  pprt_awake_clock clock = {.stall_s = PPRT_AWAKE_STALL_S};
  double start = pprt_awake_now(&clock);
  struct timespec pause = {0, 20 * 1000};
  for (;;) {
    cudaError_t rc = ev ? cudaEventQuery(ev) : cudaStreamQuery(n->comm);
    n->waited_s = pprt_awake_now(&clock) - start;
    if (rc == cudaSuccess)
      return true;
    if (rc != cudaErrorNotReady)
      check_cuda(n, rc, ev ? "cudaEventQuery" : "cudaStreamQuery");
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(n->world, &async);
    check_nccl(n, async, "asynchronous error");
    if (n->waited_s >= timeout_s)
      return false;
    nanosleep(&pause, NULL);
  }
}

static int32_t nc_split_groups(pprt_transport *t, int32_t color, int32_t key) {
  nccl_transport *n = as_nccl(t);
  if (n->num_groups == PPRT_MAX_GROUPS)
    nccl_fatal(n, "ncclCommSplit", "too many groups");
  /* Blocking and collective, like MPI_Comm_split: bounded the same way
     (untested on a GPU). */
  pprt_unpolled_begin("ncclCommSplit", pprt_unpolled_timeout(),
                      n->base.world_rank);
  check_nccl(
      n, ncclCommSplit(n->world, color, key, &n->groups[n->num_groups], NULL),
      "ncclCommSplit");
  pprt_unpolled_end();
  return n->num_groups++;
}

static void nc_group_begin(pprt_transport *t) {
  nccl_transport *n = as_nccl(t);
  if (n->group_first >= 0)
    nccl_fatal(n, "group_begin", "inside a group");
  after_compute(n);
  check_nccl(n, ncclGroupStart(), "ncclGroupStart");
  n->group_first = n->num_events;
}

/* Issues the group and records the events of its handles after it. */
static void nc_group_end(pprt_transport *t) {
  nccl_transport *n = as_nccl(t);
  if (n->group_first < 0)
    nccl_fatal(n, "group_end", "no open group");
  check_nccl(n, ncclGroupEnd(), "ncclGroupEnd");
  for (int32_t h = n->group_first; h < n->num_events; ++h)
    check_cuda(n, cudaEventRecord(n->events[h], n->comm), "cudaEventRecord");
  n->group_first = -1;
}

/* Starts a send of `from` or a receive into `to` in the open group, or in
   a group of its own. */
static int32_t transfer(nccl_transport *n, const void *from, void *to,
                        int64_t bytes, int32_t peer) {
  bool alone = n->group_first < 0;
  if (alone)
    nc_group_begin(&n->base);
  if (from)
    check_nccl(
        n, ncclSend(from, (size_t)bytes, ncclUint8, peer, n->world, n->comm),
        "ncclSend");
  else
    check_nccl(n,
               ncclRecv(to, (size_t)bytes, ncclUint8, peer, n->world, n->comm),
               "ncclRecv");
  int32_t h = new_handle(n);
  if (alone)
    nc_group_end(&n->base);
  return h;
}

static int32_t nc_isend(pprt_transport *t, const void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  (void)tag;
  return transfer(as_nccl(t), buf, NULL, bytes, peer);
}

static bool nc_wait_all(pprt_transport *t, double timeout_s) {
  nccl_transport *n = as_nccl(t);
  if (n->group_first >= 0)
    nccl_fatal(n, "wait_all", "inside a group");
  if (!poll_event(n, NULL, timeout_s))
    return false;
  for (int32_t i = 0; i < n->num_events; ++i)
    cudaEventDestroy(n->events[i]);
  n->num_events = 0;
  return true;
}

/* The compute stream's later work waits for handle's transfer. */
static void before_compute(nccl_transport *n, int32_t handle) {
  check_cuda(n, cudaStreamWaitEvent(n->compute, n->events[handle], 0),
             "cudaStreamWaitEvent");
}

static int32_t nc_irecv(pprt_transport *t, void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  (void)tag;
  return transfer(as_nccl(t), NULL, buf, bytes, peer);
}

static pprt_recv_status nc_wait_recv(pprt_transport *t, int32_t handle,
                                     double timeout_s) {
  nccl_transport *n = as_nccl(t);
  check_issued(n, handle);
  if (!poll_event(n, n->events[handle], timeout_s))
    return PPRT_RECV_TIMEOUT;
  before_compute(n, handle);
  return PPRT_RECV_OK;
}

static pprt_recv_status nc_recv(pprt_transport *t, void *buf, int64_t bytes,
                                int32_t peer, int32_t tag, double timeout_s) {
  return nc_wait_recv(t, nc_irecv(t, buf, bytes, peer, tag), timeout_s);
}

/* Group `group`'s communicator, after checking that a collective may
   start on it. */
static ncclComm_t group_comm(nccl_transport *n, int32_t group,
                             const char *what) {
  if (group < 0 || group >= n->num_groups)
    nccl_fatal(n, what, "no such group (split_groups was not called)");
  if (n->group_first >= 0)
    nccl_fatal(n, what, "inside an exchange group");
  return n->groups[group];
}

/* The size of group `group`, checked against a collective's `blocks`. */
static ncclComm_t sized_group(nccl_transport *n, int32_t group, int32_t blocks,
                              const char *what) {
  ncclComm_t c = group_comm(n, group, what);
  int size = 0;
  check_nccl(n, ncclCommCount(c, &size), "ncclCommCount");
  if (size != blocks)
    nccl_fatal(n, what, "the block count differs from the group");
  return c;
}

/* The handle of a collective just issued on the communication stream. */
static int32_t collective_handle(nccl_transport *n) {
  int32_t h = new_handle(n);
  check_cuda(n, cudaEventRecord(n->events[h], n->comm), "cudaEventRecord");
  before_compute(n, h);
  return h;
}

static ncclRedOp_t nccl_op_of(pprt_reduction op) {
  return op == PPRT_REDUCE_MAX   ? ncclMax
         : op == PPRT_REDUCE_MIN ? ncclMin
                                 : ncclSum;
}

static int32_t nc_iallreduce_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       pprt_reduction op) {
  nccl_transport *n = as_nccl(t);
  ncclComm_t c = group_comm(n, group, "all-reduce");
  after_compute(n);
  check_nccl(n,
             ncclAllReduce(buf, buf, (size_t)count, ncclFloat32, nccl_op_of(op),
                           c, n->comm),
             "ncclAllReduce");
  return collective_handle(n);
}

static int32_t nc_ireduce_scatter_group_f32(pprt_transport *t, int32_t group,
                                            const void *send, void *recv,
                                            int64_t count, int32_t blocks) {
  nccl_transport *n = as_nccl(t);
  ncclComm_t c = sized_group(n, group, blocks, "reduce-scatter");
  after_compute(n);
  check_nccl(n,
             ncclReduceScatter(send, recv, (size_t)count, ncclFloat32, ncclSum,
                               c, n->comm),
             "ncclReduceScatter");
  return collective_handle(n);
}

static int32_t nc_iallgather_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       int32_t blocks) {
  nccl_transport *n = as_nccl(t);
  ncclComm_t c = sized_group(n, group, blocks, "all-gather");
  int rank = 0;
  check_nccl(n, ncclCommUserRank(c, &rank), "ncclCommUserRank");
  after_compute(n);
  /* In place: this process's block is already where it goes. */
  const float *own = (const float *)buf + (int64_t)rank * count;
  check_nccl(n, ncclAllGather(own, buf, (size_t)count, ncclFloat32, c, n->comm),
             "ncclAllGather");
  return collective_handle(n);
}

static bool nc_wait_for(pprt_transport *t, int32_t handle, double timeout_s) {
  nccl_transport *n = as_nccl(t);
  check_issued(n, handle);
  return poll_event(n, n->events[handle], timeout_s);
}

static bool nc_reduce_world_f64(pprt_transport *t, double *vals, int32_t n,
                                double timeout_s) {
  pprt_transport *in = as_nccl(t)->inner;
  return in->ops->reduce_world_f64(in, vals, n, timeout_s);
}

static bool nc_allreduce_world_min_i32(pprt_transport *t, int32_t *vals,
                                       int32_t n, double timeout_s) {
  pprt_transport *in = as_nccl(t)->inner;
  return in->ops->allreduce_world_min_i32(in, vals, n, timeout_s);
}

/* A wait on an event that timed out ran outside MPI: the MPI transport
   asks whom the ranks wait for now. */
static void nc_find_silent(pprt_transport *t, int32_t peer, double timeout_s,
                           pprt_silence *out) {
  nccl_transport *n = as_nccl(t);
  n->inner->ops->find_silent(n->inner, peer, timeout_s, out);
  out->waited_s = n->waited_s;
}

static void nc_abort(pprt_transport *t, int code) {
  nccl_transport *n = as_nccl(t);
  ncclCommAbort(n->world);
  n->inner->ops->abort(n->inner, code);
}

static void nc_destroy(pprt_transport *t) {
  nccl_transport *n = as_nccl(t);
  pprt_transport *in = n->inner;
  /* Transfers still running after a timeout would hold ncclCommDestroy up:
     abort the communicators then. */
  ncclResult_t (*end)(ncclComm_t) =
      nc_wait_all(t, ID_TIMEOUT_S) ? ncclCommDestroy : ncclCommAbort;
  for (int32_t g = 0; g < n->num_groups; ++g)
    end(n->groups[g]);
  end(n->world);
  cudaStreamDestroy(n->comm);
  free(n->events);
  free(n);
  in->ops->destroy(in);
}

static const pprt_transport_ops nccl_ops = {
    .split_groups = nc_split_groups,
    .isend = nc_isend,
    .wait_all = nc_wait_all,
    .recv = nc_recv,
    .irecv = nc_irecv,
    .wait_recv = nc_wait_recv,
    .group_begin = nc_group_begin,
    .group_end = nc_group_end,
    .iallreduce_group_f32 = nc_iallreduce_group_f32,
    .ireduce_scatter_group_f32 = nc_ireduce_scatter_group_f32,
    .iallgather_group_f32 = nc_iallgather_group_f32,
    .wait_for = nc_wait_for,
    .reduce_world_f64 = nc_reduce_world_f64,
    .allreduce_world_min_i32 = nc_allreduce_world_min_i32,
    .find_silent = nc_find_silent,
    .abort = nc_abort,
    .destroy = nc_destroy,
};

/* True on every rank iff `ok` is on every rank. */
static bool all_agree(pprt_transport *in, bool ok) {
  int32_t v = ok;
  return in->ops->allreduce_world_min_i32(in, &v, 1, ID_TIMEOUT_S) && v != 0;
}

/* Rank 0's id (or its failure) to every rank, over MPI. */
static bool share_id(pprt_transport *in, id_message *msg) {
  if (in->world_rank == 0) {
    for (int32_t r = 1; r < in->world_size; ++r)
      in->ops->isend(in, msg, (int64_t)sizeof *msg, r, ID_TAG);
    return in->ops->wait_all(in, ID_TIMEOUT_S);
  }
  return in->ops->recv(in, msg, (int64_t)sizeof *msg, 0, ID_TAG,
                       ID_TIMEOUT_S) == PPRT_RECV_OK;
}

/* The local half of starting: the comm stream and, on rank 0, the id. */
static bool start_locally(nccl_transport *n, id_message *msg, char *err,
                          size_t err_size) {
  cudaError_t rc = cudaStreamCreateWithFlags(&n->comm, cudaStreamNonBlocking);
  if (rc != cudaSuccess) {
    snprintf(err, err_size, "cudaStreamCreate: %s", cudaGetErrorString(rc));
    n->comm = NULL;
    return false;
  }
  if (n->base.world_rank != 0)
    return true;
  ncclResult_t nr = ncclGetUniqueId(&msg->id);
  if (nr != ncclSuccess) {
    snprintf(err, err_size, "ncclGetUniqueId: %s", ncclGetErrorString(nr));
    return false;
  }
  msg->ok = 1;
  return true;
}

static pprt_transport *fail_create(nccl_transport *n, char *err,
                                   size_t err_size) {
  if (!err[0])
    snprintf(err, err_size, "another rank could not start NCCL");
  if (n->comm)
    cudaStreamDestroy(n->comm);
  free(n);
  return NULL;
}

pprt_transport *pprt_nccl_transport_create(pprt_transport *inner,
                                           cudaStream_t compute, char *err,
                                           size_t err_size) {
  err[0] = '\0';
  nccl_transport *n = calloc(1, sizeof *n);
  if (!n) {
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  n->base = *inner;
  n->base.ops = &nccl_ops;
  n->inner = inner;
  n->base.host = pprt_host_transport(inner); /* NCCL takes device memory */
  n->base.in_order = true;                   /* one stream */
  n->compute = compute;
  n->group_first = -1;
  id_message msg;
  memset(&msg, 0, sizeof msg);
  /* Every rank agrees before the collective ncclCommInitRank, so that a
     rank that cannot start never leaves the others blocked in it. */
  if (!all_agree(inner, start_locally(n, &msg, err, err_size)))
    return fail_create(n, err, err_size);
  if (!share_id(inner, &msg) || !msg.ok) {
    snprintf(err, err_size, "no NCCL unique id from rank 0");
    return fail_create(n, err, err_size);
  }
  pprt_unpolled_begin("ncclCommInitRank", pprt_unpolled_timeout(),
                      inner->world_rank);
  ncclResult_t rc =
      ncclCommInitRank(&n->world, inner->world_size, msg.id, inner->world_rank);
  pprt_unpolled_end();
  if (rc != ncclSuccess)
    snprintf(err, err_size, "ncclCommInitRank: %s", ncclGetErrorString(rc));
  if (!all_agree(inner, rc == ncclSuccess)) {
    if (rc == ncclSuccess)
      ncclCommDestroy(n->world);
    return fail_create(n, err, err_size);
  }
  return &n->base;
}
