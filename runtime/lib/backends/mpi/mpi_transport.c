/* MPI implementation of the runtime's transport interface (host memory). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/transport.h"

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

/* A receive irecv started, for wait_recv. */
typedef struct mpi_recv_request {
  MPI_Request req;
  int32_t peer;
  int64_t bytes;
} mpi_recv_request;

typedef struct mpi_transport {
  pprt_transport base; /* first, so the two pointers convert */
  MPI_Comm comm;       /* private dup of MPI_COMM_WORLD */
  MPI_Comm probe_comm; /* questions about waits (find_silent), apart */
  int32_t waiting_for; /* rank a receive waits for; NOBODY otherwise */
  int32_t silent;      /* the silent rank once found; NOBODY before */
  MPI_Comm group_comm; /* data-parallel group, MPI_COMM_NULL until split */
  MPI_Request *reqs;   /* outstanding sends; index = handle - first_req */
  int32_t num_reqs;
  int32_t first_req; /* handle of reqs[0]; completed leading ones go */
  int32_t cap_reqs;
  mpi_recv_request *recvs; /* receives; index = irecv handle */
  int32_t num_recvs;       /* reset once none is open */
  int32_t open_recvs;
  int32_t cap_recvs;
} mpi_transport;

static mpi_transport *as_mpi(pprt_transport *t) { return (mpi_transport *)t; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_for_ns(long ns) {
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&ts, NULL);
}

_Noreturn static void mpi_abort(pprt_transport *t, int code) {
  (void)t;
  /* The launcher kills the job without draining its output pipes, so give
     it a moment to forward the message just printed. */
  fflush(NULL);
  sleep_for_ns(300L * 1000 * 1000);
  /* MPI_COMM_WORLD, not our dup: MPICH 4 only ends the calling process
     when aborting any other communicator, leaving the job hung. */
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code); /* MPI_Abort does not return; keep the promise anyway */
}

_Noreturn static void fail(mpi_transport *m, const char *what,
                           const char *detail) {
  fprintf(stderr, "pprt: rank %d: %s: %s\n", m->base.world_rank, what, detail);
  fflush(stderr);
  mpi_abort(&m->base, 1);
}

/* Errors return to us (MPI_ERRORS_RETURN) so they can be reported here. */
static void check(mpi_transport *m, int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail(m, what, text);
}

static int count_of(mpi_transport *m, int64_t count) {
  if (count > INT_MAX)
    fail(m, "transfer", "message too large for one MPI call");
  return (int)count;
}

static void mpi_split_groups(pprt_transport *t, int32_t color, int32_t key) {
  mpi_transport *m = as_mpi(t);
  check(m, MPI_Comm_split(m->comm, color, key, &m->group_comm),
        "MPI_Comm_split");
  MPI_Comm_set_errhandler(m->group_comm, MPI_ERRORS_RETURN);
}

/* A free request slot; its index is the handle. */
static MPI_Request *new_request(mpi_transport *m, const char *what) {
  MPI_Request *r =
      pprt_reserve_one(m->reqs, &m->cap_reqs, m->num_reqs, sizeof *r);
  if (!r)
    fail(m, what, "out of memory");
  m->reqs = r;
  return &m->reqs[m->num_reqs];
}

/* The handle of the request new_request returned. */
static int32_t push_request(mpi_transport *m) {
  return m->first_req + m->num_reqs++;
}

/* Drops the completed requests at the front (pprt_drop_done). */
static void drop_completed(mpi_transport *m) {
  int32_t done = 0;
  while (done < m->num_reqs && m->reqs[done] == MPI_REQUEST_NULL)
    ++done;
  pprt_drop_done(m->reqs, &m->num_reqs, &m->first_req, done, sizeof *m->reqs);
}

static int32_t mpi_isend(pprt_transport *t, const void *buf, int64_t bytes,
                         int32_t peer, int32_t tag) {
  mpi_transport *m = as_mpi(t);
  MPI_Request *req = new_request(m, "MPI_Isend");
  check(m,
        MPI_Isend(buf, count_of(m, bytes), MPI_BYTE, peer, tag, m->comm, req),
        "MPI_Isend");
  return push_request(m);
}

static void mpi_wait(pprt_transport *t, int32_t handle) {
  mpi_transport *m = as_mpi(t);
  /* Leaves MPI_REQUEST_NULL behind, which the final Waitall skips. */
  check(m, MPI_Wait(&m->reqs[handle - m->first_req], MPI_STATUS_IGNORE),
        "MPI_Wait");
  drop_completed(m);
}

/* GCC 12 mistakes MPICH's MPI_STATUSES_IGNORE sentinel for an array. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static void mpi_wait_all(pprt_transport *t) {
  mpi_transport *m = as_mpi(t);
  check(m, MPI_Waitall(m->num_reqs, m->reqs, MPI_STATUSES_IGNORE),
        "MPI_Waitall");
  m->num_reqs = 0;
  m->first_req = 0;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* How a wait polls, in three phases: spin on MPI_Test (a message that is
   already on its way arrives within the MPI latency), then yield the core
   between polls (peers sharing the core run; with nobody waiting,
   sched_yield returns at once and this is still a spin), then sleep with a
   backoff up to 100 us so that a long wait (a pipeline bubble) does not
   steal cores from busy ranks. The clock is read every POLLS_PER_CLOCK
   polls only: reading it costs about as much as one MPI_Test. */
enum {
  POLLS_PER_CLOCK = 32,
  SPIN_NS = 20 * 1000,
  YIELD_NS = 200 * 1000,
  MIN_SLEEP_NS = 2 * 1000,
  MAX_SLEEP_NS = 100 * 1000,
};

/* find_silent's messages on probe_comm: a question (any int) and its
   answer {rank the answerer waits for, silent rank it knows of}. */
enum { NOBODY = -1, QUESTION_TAG = 1, ANSWER_TAG = 2 };

/* Answers the questions that have arrived: a rank waits only in
   poll_request, so a rank that never answers there is stopped or stuck. */
static void answer_questions(mpi_transport *m) {
  for (;;) {
    int pending = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, QUESTION_TAG, m->probe_comm, &pending,
                   &status) != MPI_SUCCESS ||
        !pending)
      return;
    int question = 0;
    MPI_Recv(&question, 1, MPI_INT, status.MPI_SOURCE, QUESTION_TAG,
             m->probe_comm, MPI_STATUS_IGNORE);
    int answer[2] = {m->waiting_for, m->silent};
    /* Eager-sized: completes without the asker's help. */
    MPI_Send(answer, 2, MPI_INT, status.MPI_SOURCE, ANSWER_TAG, m->probe_comm);
  }
}

/* Polls `req` until it completes (MPI_SUCCESS), fails (the MPI error) or
   `timeout_s` passes (MPI_ERR_PENDING), answering find_silent's questions
   meanwhile. Polling instead of blocking turns a lost peer into a
   timeout. */
static int poll_request(mpi_transport *m, MPI_Request *req, MPI_Status *status,
                        double timeout_s) {
  double start = now_s(), deadline = start + timeout_s;
  long sleep_ns = MIN_SLEEP_NS;
  for (;;) {
    for (int i = 0; i < POLLS_PER_CLOCK; ++i) {
      int done = 0;
      int rc = MPI_Test(req, &done, status);
      if (rc != MPI_SUCCESS || done)
        return rc;
    }
    answer_questions(m);
    double now = now_s();
    if (now >= deadline)
      return MPI_ERR_PENDING;
    double waited_ns = (now - start) * 1e9;
    if (waited_ns < SPIN_NS)
      continue;
    if (waited_ns < YIELD_NS) {
      sched_yield();
      continue;
    }
    sleep_for_ns(sleep_ns);
    sleep_ns = sleep_ns * 2 > MAX_SLEEP_NS ? MAX_SLEEP_NS : sleep_ns * 2;
  }
}

static int32_t mpi_irecv(pprt_transport *t, void *buf, int64_t bytes,
                         int32_t peer, int32_t tag) {
  mpi_transport *m = as_mpi(t);
  mpi_recv_request *recvs =
      pprt_reserve_one(m->recvs, &m->cap_recvs, m->num_recvs, sizeof *recvs);
  if (!recvs)
    fail(m, "MPI_Irecv", "out of memory");
  m->recvs = recvs;
  mpi_recv_request *r = &m->recvs[m->num_recvs];
  check(
      m,
      MPI_Irecv(buf, count_of(m, bytes), MPI_BYTE, peer, tag, m->comm, &r->req),
      "MPI_Irecv");
  r->peer = peer;
  r->bytes = bytes;
  ++m->open_recvs;
  return m->num_recvs++;
}

static pprt_recv_status mpi_wait_recv(pprt_transport *t, int32_t handle,
                                      double timeout_s) {
  mpi_transport *m = as_mpi(t);
  mpi_recv_request *r = &m->recvs[handle];
  MPI_Status status;
  m->waiting_for = r->peer;
  int rc = poll_request(m, &r->req, &status, timeout_s);
  if (rc == MPI_ERR_PENDING)
    return PPRT_RECV_TIMEOUT; /* the caller aborts the job; still waiting */
  m->waiting_for = NOBODY;
  int64_t bytes = r->bytes;
  if (--m->open_recvs == 0)
    m->num_recvs = 0;
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS)
    MPI_Error_class(rc, &cls);
  if (cls == MPI_ERR_TRUNCATE)
    return PPRT_RECV_SIZE_MISMATCH;
  check(m, rc, "MPI_Test");
  int got = 0;
  MPI_Get_count(&status, MPI_BYTE, &got);
  return got == bytes ? PPRT_RECV_OK : PPRT_RECV_SIZE_MISMATCH;
}

static pprt_recv_status mpi_recv(pprt_transport *t, void *buf, int64_t bytes,
                                 int32_t peer, int32_t tag, double timeout_s) {
  return mpi_wait_recv(t, mpi_irecv(t, buf, bytes, peer, tag), timeout_s);
}

/* MPI posts each transfer as it starts: a group needs no more. */
static void mpi_group_begin(pprt_transport *t) { (void)t; }

static void mpi_group_end(pprt_transport *t) { (void)t; }

static int32_t mpi_iallreduce_group_f32(pprt_transport *t, void *buf,
                                        int64_t count) {
  mpi_transport *m = as_mpi(t);
  MPI_Request *req = new_request(m, "MPI_Iallreduce");
  check(m,
        MPI_Iallreduce(MPI_IN_PLACE, buf, count_of(m, count), MPI_FLOAT,
                       MPI_SUM, m->group_comm, req),
        "MPI_Iallreduce");
  return push_request(m);
}

static bool mpi_wait_for(pprt_transport *t, int32_t handle, double timeout_s) {
  mpi_transport *m = as_mpi(t);
  int rc = poll_request(m, &m->reqs[handle - m->first_req], MPI_STATUS_IGNORE,
                        timeout_s);
  if (rc == MPI_ERR_PENDING)
    return false;
  check(m, rc, "MPI_Test");
  drop_completed(m);
  return true;
}

/* Asks `rank` whom it waits for; false if it does not answer in time. */
static bool ask(mpi_transport *m, int32_t rank, double timeout_s,
                int answer[2]) {
  int question = 0;
  MPI_Request req;
  if (MPI_Send(&question, 1, MPI_INT, rank, QUESTION_TAG, m->probe_comm) !=
          MPI_SUCCESS ||
      MPI_Irecv(answer, 2, MPI_INT, rank, ANSWER_TAG, m->probe_comm, &req) !=
          MPI_SUCCESS)
    return false;
  if (poll_request(m, &req, MPI_STATUS_IGNORE, timeout_s) == MPI_SUCCESS)
    return true;
  MPI_Cancel(&req);
  return false;
}

static int32_t mpi_find_silent(pprt_transport *t, int32_t peer,
                               double timeout_s, int32_t *chain,
                               int32_t *length) {
  mpi_transport *m = as_mpi(t);
  int32_t rank = peer;
  *length = 0;
  while (m->silent == NOBODY) {
    chain[(*length)++] = rank;
    int answer[2];
    if (!ask(m, rank, timeout_s, answer)) {
      m->silent = rank;
      break;
    }
    if (answer[1] != NOBODY) {
      m->silent = answer[1]; /* found by a rank further down the chain */
      break;
    }
    int32_t next = answer[0];
    bool seen = next == m->base.world_rank;
    for (int32_t i = 0; i < *length; ++i)
      seen = seen || chain[i] == next;
    /* Waits for nobody (busy) or closes a cycle (a deadlock): it ends the
       chain, and is the rank the others wait on. */
    if (next == NOBODY || seen || next < 0 || next >= m->base.world_size) {
      m->silent = rank;
      break;
    }
    rank = next;
  }
  return m->silent;
}

static void mpi_reduce_world_f64(pprt_transport *t, double *vals, int32_t n) {
  mpi_transport *m = as_mpi(t);
  int rc =
      m->base.world_rank == 0
          ? MPI_Reduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, MPI_SUM, 0, m->comm)
          : MPI_Reduce(vals, NULL, n, MPI_DOUBLE, MPI_SUM, 0, m->comm);
  check(m, rc, "MPI_Reduce");
}

static void mpi_allreduce_world_min_i32(pprt_transport *t, int32_t *vals,
                                        int32_t n) {
  mpi_transport *m = as_mpi(t);
  check(m, MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_INT32_T, MPI_MIN, m->comm),
        "MPI_Allreduce");
}

static void mpi_destroy(pprt_transport *t) {
  mpi_transport *m = as_mpi(t);
  if (m->group_comm != MPI_COMM_NULL)
    MPI_Comm_free(&m->group_comm);
  MPI_Comm_free(&m->probe_comm);
  MPI_Comm_free(&m->comm);
  free(m->reqs);
  free(m->recvs);
  free(m);
  MPI_Finalize();
}

static const pprt_transport_ops mpi_ops = {
    .split_groups = mpi_split_groups,
    .isend = mpi_isend,
    .wait = mpi_wait,
    .wait_all = mpi_wait_all,
    .recv = mpi_recv,
    .irecv = mpi_irecv,
    .wait_recv = mpi_wait_recv,
    .group_begin = mpi_group_begin,
    .group_end = mpi_group_end,
    .iallreduce_group_f32 = mpi_iallreduce_group_f32,
    .wait_for = mpi_wait_for,
    .reduce_world_f64 = mpi_reduce_world_f64,
    .allreduce_world_min_i32 = mpi_allreduce_world_min_i32,
    .find_silent = mpi_find_silent,
    .abort = mpi_abort,
    .destroy = mpi_destroy,
};

static int64_t tag_upper_bound(void) {
  int *ub = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  return flag && ub ? *ub : 32767; /* 32767: the minimum MPI guarantees */
}

/* The rank among the processes sharing this node (GPU selection). */
static int32_t local_rank(void) {
  MPI_Comm node;
  int rank = 0;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

pprt_transport *pprt_mpi_transport_create(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  mpi_transport *m = calloc(1, sizeof *m);
  if (!m) {
    fprintf(stderr, "pprt: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
  }
  /* A private communicator keeps our tags apart from any other MPI user. */
  MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
  MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &m->probe_comm);
  MPI_Comm_set_errhandler(m->probe_comm, MPI_ERRORS_RETURN);
  m->waiting_for = NOBODY;
  m->silent = NOBODY;
  m->group_comm = MPI_COMM_NULL;
  m->base.ops = &mpi_ops;
  int rank = 0, size = 1;
  MPI_Comm_rank(m->comm, &rank);
  MPI_Comm_size(m->comm, &size);
  m->base.world_rank = rank;
  m->base.world_size = size;
  m->base.local_rank = local_rank();
  m->base.max_tag = tag_upper_bound();
#ifdef __linux__
  /* Linux lets a sleep overrun by the timer slack, 50 us by default, which
     would make every backoff sleep of a receive several times too long. */
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
  return &m->base;
}
