/* The NCCL transport against a fake NCCL and CUDA runtime that log every
   call, without a GPU: one exchange group is one ncclGroupStart/End pair
   holding its sends and receives in the order they were started, each
   group waits for the compute stream (an event) and each receive makes the
   compute stream wait for it (an event recorded after its group). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/nccl/nccl_transport.h"

#include <nccl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void fail(const char *what) {
  fprintf(stderr, "%s\n", what);
  ++failures;
}

/* ---- The fakes: every call appends one line to `calls`. ---- */

static char calls[8192];
static size_t used;
static int num_events; /* events created so far; event i is (i + 1) */
static bool recorded[64];
static bool complete = true; /* whether recorded events have completed */

/* Keeps what fits: a polling wait may log more. */
static void log_call(const char *fmt, ...) {
  char line[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t len = strlen(line);
  if (used + len + 2 > sizeof calls)
    return;
  memcpy(calls + used, line, len);
  used += len;
  calls[used++] = '\n';
  calls[used] = '\0';
}

static cudaStream_t const compute = (cudaStream_t)(uintptr_t)0x100;
static cudaStream_t const comm = (cudaStream_t)(uintptr_t)0x200;

static const char *stream_name(cudaStream_t s) {
  return s == compute ? "compute" : s == comm ? "comm" : "?";
}

static int event_id(cudaEvent_t e) { return (int)(uintptr_t)e; }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  (void)flags;
  *s = comm;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  (void)s;
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s) {
  log_call("StreamQuery %s", stream_name(s));
  return complete ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
  (void)flags;
  *e = (cudaEvent_t)(uintptr_t)++num_events;
  log_call("EventCreate e%d", num_events);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  recorded[event_id(e)] = true;
  log_call("EventRecord e%d %s", event_id(e), stream_name(s));
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f) {
  (void)f;
  log_call("StreamWaitEvent %s e%d", stream_name(s), event_id(e));
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  log_call("EventQuery e%d", event_id(e));
  /* As CUDA: an event never recorded counts as complete. */
  return !recorded[event_id(e)] || complete ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  (void)e;
  return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t rc) {
  return rc == cudaSuccess ? "no error" : "fake error";
}

static ncclComm_t const world = (ncclComm_t)(uintptr_t)0x300;
static ncclComm_t const replicas = (ncclComm_t)(uintptr_t)0x400;
static ncclComm_t const tensor = (ncclComm_t)(uintptr_t)0x500;

static const char *comm_name(ncclComm_t c) {
  return c == replicas ? "replicas" : c == tensor ? "tensor" : "?";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0, sizeof *id);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *c, int nranks, ncclUniqueId id,
                              int rank) {
  (void)nranks, (void)id, (void)rank;
  *c = world;
  return ncclSuccess;
}

/* The first split makes the replicas' communicator, the second the
   tensor-parallel one. */
ncclResult_t ncclCommSplit(ncclComm_t c, int color, int key, ncclComm_t *out,
                           ncclConfig_t *config) {
  static int splits;
  (void)config;
  *out = splits++ == 0 ? replicas : tensor;
  log_call("CommSplit %s color %d key %d into %s", c == world ? "world" : "?",
           color, key, comm_name(*out));
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t c) {
  (void)c;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c) {
  (void)c;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *rc) {
  (void)c;
  *rc = ncclSuccess;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t rc) {
  return rc == ncclSuccess ? "no error" : "fake error";
}

ncclResult_t ncclGroupStart(void) {
  log_call("GroupStart");
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  log_call("GroupEnd");
  return ncclSuccess;
}

ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t type,
                      int peer, ncclComm_t c, cudaStream_t s) {
  (void)type, (void)c;
  log_call("Send %s %zu to %d on %s", (const char *)buf, count, peer,
           stream_name(s));
  return ncclSuccess;
}

ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t c, cudaStream_t s) {
  (void)type, (void)c;
  log_call("Recv %s %zu from %d on %s", (const char *)buf, count, peer,
           stream_name(s));
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *in, void *out, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t c,
                           cudaStream_t s) {
  (void)in, (void)type;
  log_call("AllReduce %s %s %zu over %s on %s",
           op == ncclSum   ? "sum"
           : op == ncclMax ? "max"
           : op == ncclMin ? "min"
                           : "?",
           (const char *)out, count, comm_name(c), stream_name(s));
  return ncclSuccess;
}

/* The replicas' communicator has two processes, this one the second; the
   tensor group four, this one the third. */
ncclResult_t ncclCommCount(ncclComm_t c, int *count) {
  *count = c == replicas ? 2 : c == tensor ? 4 : 0;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(ncclComm_t c, int *rank) {
  *rank = c == replicas ? 1 : c == tensor ? 2 : 0;
  return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void *in, void *out, size_t count,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t c, cudaStream_t s) {
  (void)type, (void)op;
  log_call("ReduceScatter %s to %s %zu over %s on %s", (const char *)in,
           (const char *)out, count, comm_name(c), stream_name(s));
  return ncclSuccess;
}

ncclResult_t ncclAllGather(const void *in, void *out, size_t count,
                           ncclDataType_t type, ncclComm_t c, cudaStream_t s) {
  (void)type;
  log_call("AllGather +%td %zu over %s on %s",
           (const char *)in - (const char *)out, count, comm_name(c),
           stream_name(s));
  return ncclSuccess;
}

/* ---- The MPI side: one of two ranks; only what start-up needs. ---- */

static int32_t inner_isend(pprt_transport *t, const void *buf, int64_t bytes,
                           int32_t peer, int32_t tag) {
  (void)t, (void)buf, (void)bytes, (void)peer, (void)tag;
  return 0;
}

static bool inner_wait_all(pprt_transport *t, double timeout_s) {
  (void)t, (void)timeout_s;
  return true;
}

static bool inner_min_i32(pprt_transport *t, int32_t *vals, int32_t n,
                          double timeout_s) {
  (void)t, (void)vals, (void)n, (void)timeout_s;
  return true;
}

/* A death test's exit status. */
static void inner_abort(pprt_transport *t, int code) {
  (void)t;
  fflush(NULL);
  _exit(40 + code);
}

static void inner_destroy(pprt_transport *t) { (void)t; }

static const pprt_transport_ops inner_ops = {
    .isend = inner_isend,
    .wait_all = inner_wait_all,
    .allreduce_world_min_i32 = inner_min_i32,
    .abort = inner_abort,
    .destroy = inner_destroy,
};

/* ---- The tests. ---- */

static void expect_calls(const char *what, const char *want) {
  if (strcmp(calls, want) != 0) {
    fprintf(stderr, "%s: calls were\n%s-- expected\n%s--\n", what, calls, want);
    ++failures;
  }
  used = 0;
  calls[0] = '\0';
}

static char a[] = "A", b[] = "B", c[] = "C", g[] = "G";

/* Sends and receives of one group: one NCCL group, in the caller's order,
   after the compute stream's work; a receive's event before later
   compute. */
static void test_group(pprt_transport *n) {
  n->ops->group_begin(n);
  n->ops->isend(n, a, 16, 1, 0);
  int32_t r = n->ops->irecv(n, b, 32, 1, 0);
  n->ops->isend(n, c, 8, 1, 0);
  n->ops->group_end(n);
  if (n->ops->wait_recv(n, r, 1.0) != PPRT_RECV_OK)
    fail("group receive failed");
  expect_calls("group", "EventCreate e1\n"
                        "EventRecord e1 compute\n"
                        "StreamWaitEvent comm e1\n"
                        "GroupStart\n"
                        "Send A 16 to 1 on comm\n"
                        "EventCreate e2\n"
                        "Recv B 32 from 1 on comm\n"
                        "EventCreate e3\n"
                        "Send C 8 to 1 on comm\n"
                        "EventCreate e4\n"
                        "GroupEnd\n"
                        "EventRecord e2 comm\n"
                        "EventRecord e3 comm\n"
                        "EventRecord e4 comm\n"
                        "EventQuery e3\n"
                        "StreamWaitEvent compute e3\n");
}

/* A transfer outside a group is a group of its own. */
static void test_alone(pprt_transport *n) {
  int32_t s = n->ops->isend(n, a, 4, 1, 0);
  if (!n->ops->wait_for(n, s, 1.0))
    fail("lone send timed out");
  if (n->ops->recv(n, b, 4, 1, 0, 1.0) != PPRT_RECV_OK)
    fail("lone receive failed");
  if (!n->ops->wait_all(n, 1.0))
    fail("wait_all timed out");
  expect_calls("alone", "EventCreate e5\n"
                        "EventRecord e5 compute\n"
                        "StreamWaitEvent comm e5\n"
                        "GroupStart\n"
                        "Send A 4 to 1 on comm\n"
                        "EventCreate e6\n"
                        "GroupEnd\n"
                        "EventRecord e6 comm\n"
                        "EventQuery e6\n"
                        "EventCreate e7\n"
                        "EventRecord e7 compute\n"
                        "StreamWaitEvent comm e7\n"
                        "GroupStart\n"
                        "Recv B 4 from 1 on comm\n"
                        "EventCreate e8\n"
                        "GroupEnd\n"
                        "EventRecord e8 comm\n"
                        "EventQuery e8\n"
                        "StreamWaitEvent compute e8\n"
                        "StreamQuery comm\n");
}

/* An all-reduce after the compute stream's work, before its later work. */
static void test_all_reduce(pprt_transport *n) {
  if (n->ops->split_groups(n, 3, 1) != 0)
    fail("the first group's id is not 0");
  int32_t h = n->ops->iallreduce_group_f32(n, 0, g, 5, PPRT_REDUCE_SUM);
  if (!n->ops->wait_for(n, h, 1.0))
    fail("all-reduce timed out");
  expect_calls("all-reduce", "CommSplit world color 3 key 1 into replicas\n"
                             "EventCreate e9\n"
                             "EventRecord e9 compute\n"
                             "StreamWaitEvent comm e9\n"
                             "AllReduce sum G 5 over replicas on comm\n"
                             "EventCreate e10\n"
                             "EventRecord e10 comm\n"
                             "StreamWaitEvent compute e10\n"
                             "EventQuery e10\n");
}

/* A reduce-scatter and an in-place all-gather over the replicas, ordered
   against the compute stream like the all-reduce; the all-gather sends
   this process's block (the second, 3 floats = 12 bytes in). */
static void test_shard_collectives(pprt_transport *n) {
  float whole[6];
  int32_t h = n->ops->ireduce_scatter_group_f32(n, 0, g, b, 3, 2);
  if (!n->ops->wait_for(n, h, 1.0))
    fail("reduce-scatter timed out");
  h = n->ops->iallgather_group_f32(n, 0, whole, 3, 2);
  if (!n->ops->wait_for(n, h, 1.0))
    fail("all-gather timed out");
  expect_calls("shard collectives", "EventCreate e11\n"
                                    "EventRecord e11 compute\n"
                                    "StreamWaitEvent comm e11\n"
                                    "ReduceScatter G to B 3 over replicas on "
                                    "comm\n"
                                    "EventCreate e12\n"
                                    "EventRecord e12 comm\n"
                                    "StreamWaitEvent compute e12\n"
                                    "EventQuery e12\n"
                                    "EventCreate e13\n"
                                    "EventRecord e13 compute\n"
                                    "StreamWaitEvent comm e13\n"
                                    "AllGather +12 3 over replicas on comm\n"
                                    "EventCreate e14\n"
                                    "EventRecord e14 comm\n"
                                    "StreamWaitEvent compute e14\n"
                                    "EventQuery e14\n");
}

/* A second group (the tensor-parallel one) gets its own communicator:
   its all-reduce and all-gather go there, not to the replicas', and the
   all-gather sends this process's block (the third of four, 2 floats = 16
   bytes in). */
static void test_second_group(pprt_transport *n) {
  float whole[8];
  if (n->ops->split_groups(n, 5, 2) != 1)
    fail("the second group's id is not 1");
  int32_t h = n->ops->iallreduce_group_f32(n, 1, g, 7, PPRT_REDUCE_SUM);
  if (!n->ops->wait_for(n, h, 1.0))
    fail("tensor all-reduce timed out");
  h = n->ops->iallreduce_group_f32(n, 1, g, 3, PPRT_REDUCE_MAX);
  if (!n->ops->wait_for(n, h, 1.0))
    fail("tensor max all-reduce timed out");
  h = n->ops->iallreduce_group_f32(n, 1, g, 2, PPRT_REDUCE_MIN);
  if (!n->ops->wait_for(n, h, 1.0))
    fail("tensor min all-reduce timed out");
  h = n->ops->iallgather_group_f32(n, 1, whole, 2, 4);
  if (!n->ops->wait_for(n, h, 1.0))
    fail("tensor all-gather timed out");
  expect_calls("second group", "CommSplit world color 5 key 2 into tensor\n"
                               "EventCreate e15\n"
                               "EventRecord e15 compute\n"
                               "StreamWaitEvent comm e15\n"
                               "AllReduce sum G 7 over tensor on comm\n"
                               "EventCreate e16\n"
                               "EventRecord e16 comm\n"
                               "StreamWaitEvent compute e16\n"
                               "EventQuery e16\n"
                               "EventCreate e17\n"
                               "EventRecord e17 compute\n"
                               "StreamWaitEvent comm e17\n"
                               "AllReduce max G 3 over tensor on comm\n"
                               "EventCreate e18\n"
                               "EventRecord e18 comm\n"
                               "StreamWaitEvent compute e18\n"
                               "EventQuery e18\n"
                               "EventCreate e19\n"
                               "EventRecord e19 compute\n"
                               "StreamWaitEvent comm e19\n"
                               "AllReduce min G 2 over tensor on comm\n"
                               "EventCreate e20\n"
                               "EventRecord e20 comm\n"
                               "StreamWaitEvent compute e20\n"
                               "EventQuery e20\n"
                               "EventCreate e21\n"
                               "EventRecord e21 compute\n"
                               "StreamWaitEvent comm e21\n"
                               "AllGather +16 2 over tensor on comm\n"
                               "EventCreate e22\n"
                               "EventRecord e22 comm\n"
                               "StreamWaitEvent compute e22\n"
                               "EventQuery e22\n");
}

/* A collective on a group that was never split, or with a block count
   other than the group's size, ends the job. */
static void test_bad_group(pprt_transport *n, int32_t group, int32_t blocks) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr))
      _exit(2);
    float whole[8];
    n->ops->iallgather_group_f32(n, group, whole, 1, blocks);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 41)
    fail("a collective on a bad group did not end the job");
}

/* A receive that never arrives times out; the compute stream does not
   wait for it. */
static void test_timeout(pprt_transport *n) {
  complete = false;
  n->ops->group_begin(n);
  int32_t r = n->ops->irecv(n, b, 4, 1, 0);
  n->ops->group_end(n);
  if (n->ops->wait_recv(n, r, 0.01) != PPRT_RECV_TIMEOUT)
    fail("expected a timeout");
  /* Nor does wait_all block on a stream that never drains. */
  if (n->ops->wait_all(n, 0.01))
    fail("expected wait_all to time out");
  complete = true;
  if (strstr(calls, "StreamWaitEvent compute"))
    fail("compute waits for a lost receive");
  used = 0;
  calls[0] = '\0';
}

/* Waiting on a transfer of the open group (it has not been issued, and
   its unrecorded event reads as complete) ends the job. */
static void test_wait_in_group(pprt_transport *n) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr))
      _exit(2);
    n->ops->group_begin(n);
    n->ops->wait_recv(n, n->ops->irecv(n, b, 4, 1, 0), 1.0);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 41)
    fail("a wait inside its group did not end the job");
}

int main(void) {
  pprt_transport inner = {&inner_ops, 0, 2, 0, 1 << 20};
  char err[256];
  pprt_transport *n =
      pprt_nccl_transport_create(&inner, compute, err, sizeof err);
  if (!n) {
    fprintf(stderr, "NCCL transport: %s\n", err);
    return 1;
  }
  /* Weight files and checkpoints move host buffers: over MPI, not NCCL. */
  if (pprt_host_transport(n) != &inner)
    fail("host buffers go through the NCCL transport");
  used = 0;
  calls[0] = '\0';
  test_group(n);
  test_alone(n);
  test_all_reduce(n);
  test_shard_collectives(n);
  test_second_group(n);
  test_bad_group(n, 2, 4);
  test_bad_group(n, 1, 3);
  test_timeout(n);
  test_wait_in_group(n);
  if (!n->ops->wait_all(n, 1.0))
    fail("the final wait_all timed out");
  n->ops->destroy(n);
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  else
    printf("nccl groups: ok\n");
  return failures != 0;
}
