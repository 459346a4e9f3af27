/* MPI implementation of the runtime's transport interface (host memory). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/awake_clock.h"
#include "backends/mpi/unpolled.h"
#include "backends/transport.h"

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

/* A send or group all-reduce, and whom it waits for (a rank, or
   PPRT_EVERYONE). */
typedef struct mpi_send_request {
  MPI_Request req;
  int32_t peer;
} mpi_send_request;

/* A receive irecv started, for wait_recv. */
typedef struct mpi_recv_request {
  MPI_Request req;
  int32_t peer;
  int64_t bytes;
} mpi_recv_request;

/* The questions of one wait that has lasted half its timeout: whom each
   asked rank waits for, to find the one that stopped answering. Arrays are
   indexed by world rank. */
typedef struct search {
  bool active;
  int32_t seq;       /* this search's number, echoed by the answers */
  int32_t target;    /* the rank waited on, or PPRT_EVERYONE */
  double *asked_at;  /* when a rank was asked; < 0 if not */
  bool *answered;    /* whether its answer to this search arrived */
  int32_t *answers;  /* 3 per rank: {seq, waits for, silent rank known} */
  MPI_Request *reqs; /* the receive of each asked rank's answer */
} search;

typedef struct mpi_transport {
  pprt_transport base; /* first, so the two pointers convert */
  MPI_Comm comm;       /* private dup of MPI_COMM_WORLD */
  MPI_Comm probe_comm; /* questions about waits (find_silent), apart */
  int32_t waiting_for; /* rank a wait waits for, PPRT_EVERYONE, or NOBODY */
  /* Once a wait has ended the job: who stopped answering (NOBODY when
     every rank still answers), who found it, and how it was found. */
  bool concluded;
  int32_t silent;
  int32_t found_by;
  int32_t chain[PPRT_MAX_CHAIN];
  int32_t chain_length;
  int32_t verdict[2];     /* {silent, found_by}, sent to every rank */
  double waited_s;        /* how long the last wait lasted */
  pprt_awake_clock clock; /* of waits: stops while this process is stopped */
  double timeout_s;       /* and its timeout */
  bool *acked;            /* the ranks that printed the verdict (finder only) */
  int32_t num_acked;
  search search;
  MPI_Comm groups[PPRT_MAX_GROUPS]; /* split_groups' communicators, by id */
  int32_t num_groups;
  double unpolled_timeout_s; /* bounds MPI_Comm_split and MPI_Finalize */
  mpi_send_request *reqs;    /* outstanding sends; index = handle - first_req */
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

_Noreturn static void end_job(int code) {
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
  end_job(1);
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

static int32_t mpi_split_groups(pprt_transport *t, int32_t color, int32_t key) {
  mpi_transport *m = as_mpi(t);
  if (m->num_groups == PPRT_MAX_GROUPS)
    fail(m, "MPI_Comm_split", "too many groups");
  MPI_Comm *c = &m->groups[m->num_groups];
  pprt_unpolled_begin("MPI_Comm_split", m->unpolled_timeout_s,
                      m->base.world_rank);
  check(m, MPI_Comm_split(m->comm, color, key, c), "MPI_Comm_split");
  pprt_unpolled_end();
  MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
  return m->num_groups++;
}

/* The communicator of group `group`, which split_groups made. */
static MPI_Comm group_comm(mpi_transport *m, int32_t group, const char *what) {
  if (group < 0 || group >= m->num_groups)
    fail(m, what, "no such group (split_groups was not called)");
  return m->groups[group];
}

/* A free request slot; its index is the handle. */
static mpi_send_request *new_request(mpi_transport *m, const char *what) {
  mpi_send_request *r =
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
  while (done < m->num_reqs && m->reqs[done].req == MPI_REQUEST_NULL)
    ++done;
  pprt_drop_done(m->reqs, &m->num_reqs, &m->first_req, done, sizeof *m->reqs);
}

static int32_t mpi_isend(pprt_transport *t, const void *buf, int64_t bytes,
                         int32_t peer, int32_t tag) {
  mpi_transport *m = as_mpi(t);
  mpi_send_request *r = new_request(m, "MPI_Isend");
  r->peer = peer;
  check(
      m,
      MPI_Isend(buf, count_of(m, bytes), MPI_BYTE, peer, tag, m->comm, &r->req),
      "MPI_Isend");
  return push_request(m);
}

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

/* ---- Finding the rank that stopped answering. ----

   A rank answers questions only while it polls in a wait, so a rank that
   does not answer for half a timeout is stopped or stuck. A wait that has
   lasted half its timeout asks the rank it waits for whom that one waits
   for, then that one, and so on (a collective asks every rank), while it
   goes on polling; when the timeout passes without the transfer, the end
   of that chain is the silent rank, and the rank that found it tells every
   other rank (a verdict), whose waits then end too. So every rank names
   the same one about one timeout after it stopped. */

/* Messages on probe_comm: a question {seq}, its answer {seq, rank the
   answerer waits for, silent rank it knows of}, and a verdict {silent,
   found_by}. */
enum { NOBODY = -1, UNDECIDED = -3 };
enum { QUESTION_TAG = 1, ANSWER_TAG = 2, VERDICT_TAG = 3, ACK_TAG = 4 };

static void count_ack(mpi_transport *m, int32_t rank) {
  if (!m->acked[rank])
    ++m->num_acked;
  m->acked[rank] = true;
}

/* Counts the ranks that said they printed a verdict (an acknowledgement). */
static void take_acks(mpi_transport *m) {
  for (;;) {
    int pending = 0, ack = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, ACK_TAG, m->probe_comm, &pending, &status) !=
            MPI_SUCCESS ||
        !pending)
      return;
    MPI_Recv(&ack, 1, MPI_INT, status.MPI_SOURCE, ACK_TAG, m->probe_comm,
             MPI_STATUS_IGNORE);
    count_ack(m, status.MPI_SOURCE);
  }
}

/* Records a verdict another rank sent, unless this rank has one (then the
   sender printed one too, which counts as its acknowledgement). A verdict
   from the rank this one blames wins: that rank is alive, and found the
   silent one further down the chain of waits (with equal timeouts, a rank
   that waits on a waiting rank can conclude first). */
static void take_verdicts(mpi_transport *m) {
  for (;;) {
    int pending = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, VERDICT_TAG, m->probe_comm, &pending,
                   &status) != MPI_SUCCESS ||
        !pending)
      return;
    int verdict[2];
    MPI_Recv(verdict, 2, MPI_INT, status.MPI_SOURCE, VERDICT_TAG, m->probe_comm,
             MPI_STATUS_IGNORE);
    if (m->concluded) {
      count_ack(m, status.MPI_SOURCE);
      if (status.MPI_SOURCE != m->silent || verdict[0] == m->base.world_rank)
        continue;
    }
    m->concluded = true;
    m->silent = verdict[0];
    m->found_by = verdict[1];
    m->chain_length = 0;
  }
}

/* Answers the questions that have arrived, and takes in verdicts. */
static void answer_questions(mpi_transport *m) {
  for (;;) {
    int pending = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, QUESTION_TAG, m->probe_comm, &pending,
                   &status) != MPI_SUCCESS ||
        !pending)
      break;
    int question = 0;
    MPI_Recv(&question, 1, MPI_INT, status.MPI_SOURCE, QUESTION_TAG,
             m->probe_comm, MPI_STATUS_IGNORE);
    int answer[3] = {question, m->waiting_for,
                     m->concluded ? m->silent : NOBODY};
    /* Eager-sized: completes without the asker's help. */
    MPI_Send(answer, 3, MPI_INT, status.MPI_SOURCE, ANSWER_TAG, m->probe_comm);
  }
  take_verdicts(m);
}

static void post_answer_recv(mpi_transport *m, int32_t rank) {
  search *s = &m->search;
  MPI_Irecv(&s->answers[3 * rank], 3, MPI_INT, rank, ANSWER_TAG, m->probe_comm,
            &s->reqs[rank]);
}

/* Asks `rank` whom it waits for, once per search. */
static void ask(mpi_transport *m, int32_t rank, double now) {
  search *s = &m->search;
  if (rank < 0 || rank >= m->base.world_size || rank == m->base.world_rank ||
      s->asked_at[rank] >= 0)
    return;
  MPI_Request req;
  if (MPI_Isend(&s->seq, 1, MPI_INT, rank, QUESTION_TAG, m->probe_comm, &req) !=
      MPI_SUCCESS)
    return;
  MPI_Request_free(&req);
  post_answer_recv(m, rank);
  s->asked_at[rank] = now;
}

static void ask_everyone(mpi_transport *m, double now) {
  for (int32_t r = 0; r < m->base.world_size; ++r)
    ask(m, r, now);
}

static void search_begin(mpi_transport *m, int32_t target, double now) {
  search *s = &m->search;
  s->active = true;
  ++s->seq;
  s->target = target;
  for (int32_t r = 0; r < m->base.world_size; ++r) {
    s->asked_at[r] = -1.0;
    s->answered[r] = false;
  }
  if (target == PPRT_EVERYONE)
    ask_everyone(m, now);
  else
    ask(m, target, now);
}

/* Takes in the answers that arrived and asks whom they wait for. An answer
   of an earlier search (its seq) is dropped and the receive posted again. */
static void collect_answers(mpi_transport *m, double now) {
  search *s = &m->search;
  for (int32_t r = 0; r < m->base.world_size; ++r) {
    if (s->asked_at[r] < 0 || s->answered[r])
      continue;
    int done = 0;
    if (MPI_Test(&s->reqs[r], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done)
      continue;
    const int32_t *a = &s->answers[3 * r];
    if (a[0] != s->seq) {
      post_answer_recv(m, r);
      continue;
    }
    s->answered[r] = true;
    if (a[1] == PPRT_EVERYONE)
      ask_everyone(m, now);
    else
      ask(m, a[1], now);
  }
}

/* Cancels the receives of answers still out; a late answer is dropped by
   the next search. */
static void search_end(mpi_transport *m) {
  search *s = &m->search;
  if (!s->active)
    return;
  for (int32_t r = 0; r < m->base.world_size; ++r)
    if (s->asked_at[r] >= 0 && !s->answered[r]) {
      MPI_Cancel(&s->reqs[r]);
      MPI_Wait(&s->reqs[r], MPI_STATUS_IGNORE);
    }
  s->active = false;
}

/* Whether `rank`, asked and unanswered, has had `grace` seconds to answer:
   1 if so, 0 if it had not, -1 if it answered or was not asked. */
static int silent_for(const search *s, int32_t rank, double now, double grace) {
  if (s->asked_at[rank] < 0 || s->answered[rank])
    return -1;
  return now - s->asked_at[rank] >= grace;
}

/* Among the asked ranks, the lowest that has not answered for `grace`;
   UNDECIDED while one has not had that long; NOBODY if all answered. */
static int32_t first_unanswered(const search *s, int32_t size, double now,
                                double grace) {
  int32_t found = NOBODY;
  for (int32_t r = 0; r < size; ++r) {
    int silent = silent_for(s, r, now, grace);
    if (silent == 0)
      return UNDECIDED;
    if (silent == 1 && found == NOBODY)
      found = r;
  }
  return found;
}

/* The silent rank the answers so far point to, following the chain from
   the target (recorded in m->chain); UNDECIDED while a rank on it has not
   had `grace` seconds to answer. */
static int32_t silent_rank(mpi_transport *m, double now, double grace) {
  search *s = &m->search;
  int32_t size = m->base.world_size;
  for (int32_t r = 0; r < size; ++r)
    if (s->answered[r] && s->answers[3 * r + 2] != NOBODY)
      return s->answers[3 * r + 2]; /* found by a rank further on */
  m->chain_length = 0;
  int32_t rank = s->target;
  while (rank != PPRT_EVERYONE) {
    if (m->chain_length < PPRT_MAX_CHAIN)
      m->chain[m->chain_length++] = rank;
    int silent = silent_for(s, rank, now, grace);
    if (silent >= 0)
      return silent ? rank : UNDECIDED;
    int32_t next = s->answers[3 * rank + 1];
    bool seen = next == m->base.world_rank;
    for (int32_t i = 0; i < m->chain_length; ++i)
      seen = seen || m->chain[i] == next;
    /* A cycle of ranks that all answer is a deadlock: nobody stopped. */
    if (seen) {
      if (m->chain_length < PPRT_MAX_CHAIN)
        m->chain[m->chain_length++] = next;
      return NOBODY;
    }
    /* Waits for nobody: it ends the chain, the rank the others wait on. */
    if (next != PPRT_EVERYONE &&
        (next < 0 || next >= size || s->asked_at[next] < 0))
      return rank;
    rank = next;
  }
  return first_unanswered(s, size, now, grace);
}

/* Settles who is silent once the answers allow (or `force`), and tells
   every other rank; false while undecided. */
static bool conclude(mpi_transport *m, double now, double grace, bool force) {
  int32_t silent = silent_rank(m, now, force ? 0.0 : grace);
  if (silent == UNDECIDED)
    return false;
  search_end(m);
  m->concluded = true;
  m->silent = silent;
  m->found_by = m->base.world_rank;
  m->verdict[0] = silent;
  m->verdict[1] = m->found_by;
  for (int32_t r = 0; r < m->base.world_size; ++r) {
    MPI_Request req;
    if (r != m->base.world_rank && r != silent &&
        MPI_Isend(m->verdict, 2, MPI_INT, r, VERDICT_TAG, m->probe_comm,
                  &req) == MPI_SUCCESS)
      MPI_Request_free(&req);
  }
  return true;
}

/* One look at the search of a wait that began at `start`: starts it at
   half the timeout and concludes from the timeout on, giving ranks asked
   late up to half a timeout more. True once the wait must end. */
static bool watch(mpi_transport *m, int32_t target, double start, double now,
                  double timeout_s) {
  answer_questions(m);
  if (m->concluded)
    return true; /* a verdict came in */
  double grace = 0.5 * timeout_s;
  if (now < start + grace)
    return false;
  if (!m->search.active)
    search_begin(m, target, now);
  collect_answers(m, now);
  return now >= start + timeout_s &&
         conclude(m, now, grace, now >= start + timeout_s + grace);
}

/* Tests `req` POLLS_PER_CLOCK times; true once it completed or failed
   (`*rc` says which). */
static bool test_a_while(MPI_Request *req, MPI_Status *status, int *rc) {
  for (int i = 0; i < POLLS_PER_CLOCK; ++i) {
    int done = 0;
    *rc = MPI_Test(req, &done, status);
    if (*rc != MPI_SUCCESS || done)
      return true;
  }
  return false;
}

/* Polls `req`, waited on since `start` for `target` (a rank or
   PPRT_EVERYONE), until it completes (MPI_SUCCESS), fails (the MPI error)
   or the job must end (MPI_ERR_PENDING): the timeout passed and the
   silent rank is known, or another rank found it. Polling instead of
   blocking turns a lost peer into a timeout. */
static int poll_request(mpi_transport *m, MPI_Request *req, MPI_Status *status,
                        int32_t target, double start, double timeout_s) {
  long sleep_ns = MIN_SLEEP_NS;
  m->timeout_s = timeout_s;
  int rc = MPI_SUCCESS;
  m->waiting_for = target;
  while (!test_a_while(req, status, &rc)) {
    double now = pprt_awake_now(&m->clock);
    if (watch(m, target, start, now, timeout_s)) {
      rc = MPI_ERR_PENDING;
      break;
    }
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
  m->waiting_for = NOBODY;
  m->waited_s = pprt_awake_now(&m->clock) - start;
  search_end(m);
  return rc;
}

/* Completes send request `r` by `start` + `timeout_s`; false if the job
   must end. */
static bool wait_send(mpi_transport *m, mpi_send_request *r, double start,
                      double timeout_s) {
  if (r->req == MPI_REQUEST_NULL)
    return true;
  /* Leaves MPI_REQUEST_NULL behind, which later waits skip. */
  int rc =
      poll_request(m, &r->req, MPI_STATUS_IGNORE, r->peer, start, timeout_s);
  if (rc == MPI_ERR_PENDING)
    return false;
  check(m, rc, "MPI_Test");
  return true;
}

/* Before a verdict ends the job, every rank prints its line. The finder
   waits (up to half a timeout) until each rank but the silent one has
   said it printed; a rank that was told says so and waits for the finder
   to end the job, ending it itself only if the finder does not. */
static void settle_verdict(mpi_transport *m) {
  double grace = 0.5 * m->timeout_s, start = now_s();
  int32_t me = m->base.world_rank;
  if (m->found_by != me) {
    int ack = 1;
    MPI_Request req;
    if (MPI_Isend(&ack, 1, MPI_INT, m->found_by, ACK_TAG, m->probe_comm,
                  &req) == MPI_SUCCESS)
      MPI_Request_free(&req);
    while (now_s() < start + grace + 1.0) {
      answer_questions(m);
      sleep_for_ns(1000 * 1000);
    }
    return;
  }
  int32_t others = m->base.world_size - 1;
  if (m->silent >= 0 && m->silent != me)
    --others;
  while (m->num_acked < others && now_s() < start + grace) {
    answer_questions(m);
    take_acks(m);
    sleep_for_ns(MAX_SLEEP_NS);
  }
}

_Noreturn static void mpi_abort(pprt_transport *t, int code) {
  mpi_transport *m = as_mpi(t);
  fflush(NULL);
  if (m->concluded)
    settle_verdict(m);
  end_job(code);
}

static bool mpi_wait_for(pprt_transport *t, int32_t handle, double timeout_s) {
  mpi_transport *m = as_mpi(t);
  if (!wait_send(m, &m->reqs[handle - m->first_req],
                 pprt_awake_resume(&m->clock), timeout_s))
    return false;
  drop_completed(m);
  return true;
}

static bool mpi_wait_all(pprt_transport *t, double timeout_s) {
  mpi_transport *m = as_mpi(t);
  double start = pprt_awake_resume(&m->clock);
  for (int32_t i = 0; i < m->num_reqs; ++i)
    if (!wait_send(m, &m->reqs[i], start, timeout_s))
      return false;
  m->num_reqs = 0;
  m->first_req = 0;
  return true;
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
  int rc = poll_request(m, &r->req, &status, r->peer,
                        pprt_awake_resume(&m->clock), timeout_s);
  if (rc == MPI_ERR_PENDING)
    return PPRT_RECV_TIMEOUT; /* the caller aborts the job; still waiting */
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

static MPI_Op mpi_op_of(pprt_reduction op) {
  return op == PPRT_REDUCE_MAX   ? MPI_MAX
         : op == PPRT_REDUCE_MIN ? MPI_MIN
                                 : MPI_SUM;
}

static int32_t mpi_iallreduce_group_f32(pprt_transport *t, int32_t group,
                                        void *buf, int64_t count,
                                        pprt_reduction op) {
  mpi_transport *m = as_mpi(t);
  MPI_Comm comm = group_comm(m, group, "MPI_Iallreduce");
  mpi_send_request *r = new_request(m, "MPI_Iallreduce");
  r->peer = PPRT_EVERYONE;
  check(m,
        MPI_Iallreduce(MPI_IN_PLACE, buf, count_of(m, count), MPI_FLOAT,
                       mpi_op_of(op), comm, &r->req),
        "MPI_Iallreduce");
  return push_request(m);
}

/* Group `group`'s communicator, after failing unless it has `blocks`
   processes. */
static MPI_Comm check_blocks(mpi_transport *m, int32_t group, int32_t blocks,
                             const char *what) {
  MPI_Comm comm = group_comm(m, group, what);
  int size = 0;
  check(m, MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (size != blocks)
    fail(m, what, "the block count differs from the group's size");
  return comm;
}

static int32_t mpi_ireduce_scatter_group_f32(pprt_transport *t, int32_t group,
                                             const void *send, void *recv,
                                             int64_t count, int32_t blocks) {
  mpi_transport *m = as_mpi(t);
  MPI_Comm comm = check_blocks(m, group, blocks, "MPI_Ireduce_scatter_block");
  count_of(m, count * blocks);
  mpi_send_request *r = new_request(m, "MPI_Ireduce_scatter_block");
  r->peer = PPRT_EVERYONE;
  check(m,
        MPI_Ireduce_scatter_block(send, recv, count_of(m, count), MPI_FLOAT,
                                  MPI_SUM, comm, &r->req),
        "MPI_Ireduce_scatter_block");
  return push_request(m);
}

static int32_t mpi_iallgather_group_f32(pprt_transport *t, int32_t group,
                                        void *buf, int64_t count,
                                        int32_t blocks) {
  mpi_transport *m = as_mpi(t);
  MPI_Comm comm = check_blocks(m, group, blocks, "MPI_Iallgather");
  count_of(m, count * blocks);
  mpi_send_request *r = new_request(m, "MPI_Iallgather");
  r->peer = PPRT_EVERYONE;
  check(m,
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf,
                       count_of(m, count), MPI_FLOAT, comm, &r->req),
        "MPI_Iallgather");
  return push_request(m);
}

/* Completes a collective that `rc` started in `req`; false if the job
   must end. */
static bool finish_collective(mpi_transport *m, int rc, MPI_Request *req,
                              double timeout_s, const char *what) {
  check(m, rc, what);
  rc = poll_request(m, req, MPI_STATUS_IGNORE, PPRT_EVERYONE,
                    pprt_awake_resume(&m->clock), timeout_s);
  if (rc == MPI_ERR_PENDING)
    return false;
  check(m, rc, what);
  return true;
}

static bool mpi_reduce_world_f64(pprt_transport *t, double *vals, int32_t n,
                                 double timeout_s) {
  mpi_transport *m = as_mpi(t);
  MPI_Request req;
  int rc =
      m->base.world_rank == 0
          ? MPI_Ireduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, MPI_SUM, 0, m->comm,
                        &req)
          : MPI_Ireduce(vals, NULL, n, MPI_DOUBLE, MPI_SUM, 0, m->comm, &req);
  return finish_collective(m, rc, &req, timeout_s, "MPI_Ireduce");
}

static bool mpi_allreduce_world_min_i32(pprt_transport *t, int32_t *vals,
                                        int32_t n, double timeout_s) {
  mpi_transport *m = as_mpi(t);
  MPI_Request req;
  int rc = MPI_Iallreduce(MPI_IN_PLACE, vals, n, MPI_INT32_T, MPI_MIN, m->comm,
                          &req);
  return finish_collective(m, rc, &req, timeout_s, "MPI_Iallreduce");
}

/* Before naming a rank that another may still show alive, listens a
   while (a tenth of the timeout, at most a second) for a verdict from it. */
static void hear_the_blamed(mpi_transport *m) {
  int32_t blamed = m->silent;
  double window = 0.1 * m->timeout_s, start = now_s();
  if (window > 1.0)
    window = 1.0;
  while (m->silent == blamed && blamed >= 0 && blamed != m->base.world_rank &&
         now_s() < start + window) {
    answer_questions(m);
    sleep_for_ns(MAX_SLEEP_NS);
  }
}

/* The search already ran in the wait that ended; a caller whose wait ran
   elsewhere (the NCCL transport's) searches now, for up to `timeout_s`. */
static void mpi_find_silent(pprt_transport *t, int32_t peer, double timeout_s,
                            pprt_silence *out) {
  mpi_transport *m = as_mpi(t);
  /* Ask at once. */
  double start = pprt_awake_resume(&m->clock) - 0.5 * timeout_s;
  m->timeout_s = timeout_s;
  while (!m->concluded) {
    double now = pprt_awake_now(&m->clock);
    if (!watch(m, peer, start, now, timeout_s))
      sleep_for_ns(MAX_SLEEP_NS);
  }
  search_end(m);
  hear_the_blamed(m);
  out->rank = m->silent;
  out->found_by = m->found_by;
  out->waited_s = m->waited_s;
  out->length = m->chain_length;
  memcpy(out->chain, m->chain, sizeof m->chain);
}

static void mpi_destroy(pprt_transport *t) {
  mpi_transport *m = as_mpi(t);
  search_end(m);
  for (int32_t g = 0; g < m->num_groups; ++g)
    MPI_Comm_free(&m->groups[g]);
  MPI_Comm_free(&m->probe_comm);
  MPI_Comm_free(&m->comm);
  free(m->reqs);
  free(m->recvs);
  free(m->search.asked_at);
  free(m->search.answered);
  free(m->search.answers);
  free(m->search.reqs);
  free(m->acked);
  double timeout_s = m->unpolled_timeout_s;
  int32_t rank = m->base.world_rank;
  free(m);
  pprt_unpolled_begin("MPI_Finalize", timeout_s, rank);
  MPI_Finalize();
  pprt_unpolled_end();
}

static const pprt_transport_ops mpi_ops = {
    .split_groups = mpi_split_groups,
    .isend = mpi_isend,
    .wait_all = mpi_wait_all,
    .recv = mpi_recv,
    .irecv = mpi_irecv,
    .wait_recv = mpi_wait_recv,
    .group_begin = mpi_group_begin,
    .group_end = mpi_group_end,
    .iallreduce_group_f32 = mpi_iallreduce_group_f32,
    .ireduce_scatter_group_f32 = mpi_ireduce_scatter_group_f32,
    .iallgather_group_f32 = mpi_iallgather_group_f32,
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

/* The world rank the launcher gave this process, before MPI_Init; -1. */
static int32_t launcher_rank(void) {
  const char *vars[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; ++i)
    if (getenv(vars[i]))
      return atoi(getenv(vars[i]));
  return -1;
}

pprt_transport *pprt_mpi_transport_create(int *argc, char ***argv) {
  return pprt_mpi_transport_create_within(argc, argv, 60.0);
}

pprt_transport *pprt_mpi_transport_create_within(int *argc, char ***argv,
                                                 double timeout_s) {
  /* MPI_Init waits for every rank to start; MPI_Comm_dup and the node
     split below for every rank too. */
  pprt_unpolled_begin("MPI_Init", timeout_s, launcher_rank());
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
  m->clock.stall_s = PPRT_AWAKE_STALL_S;
  m->base.ops = &mpi_ops;
  int rank = 0, size = 1;
  MPI_Comm_rank(m->comm, &rank);
  MPI_Comm_size(m->comm, &size);
  m->base.world_rank = rank;
  m->base.world_size = size;
  m->base.local_rank = local_rank();
  pprt_unpolled_end();
  m->unpolled_timeout_s = timeout_s;
  m->base.max_tag = tag_upper_bound();
  search *s = &m->search;
  s->asked_at = calloc((size_t)size, sizeof *s->asked_at);
  s->answered = calloc((size_t)size, sizeof *s->answered);
  s->answers = calloc(3 * (size_t)size, sizeof *s->answers);
  s->reqs = calloc((size_t)size, sizeof *s->reqs);
  m->acked = calloc((size_t)size, sizeof *m->acked);
  if (!s->asked_at || !s->answered || !s->answers || !s->reqs || !m->acked)
    fail(m, "starting", "out of memory");
#ifdef __linux__
  /* Linux lets a sleep overrun by the timer slack, 50 us by default, which
     would make every backoff sleep of a receive several times too long. */
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
  return &m->base;
}
