/* Internal interface between the runtime core and its communication backend. */
#ifndef PPRT_TRANSPORT_H
#define PPRT_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pp-abi/pprt_abi.h"

/* Keeps the core free of MPI so that e.g. an NCCL backend moving device
   memory can replace it. Ranks here are world ranks. */
typedef struct pprt_transport pprt_transport;

typedef enum pprt_recv_status {
  PPRT_RECV_OK,
  PPRT_RECV_TIMEOUT,
  PPRT_RECV_SIZE_MISMATCH,
} pprt_recv_status;

/* find_silent's `peer` after a collective did not complete: any rank may
   be the one that stopped. */
enum { PPRT_EVERYONE = -2 };

/* The most groups split_groups makes (the data-parallel and the
   tensor-parallel group, with room to spare). */
#define PPRT_MAX_GROUPS 4

/* The longest chain of waits a pprt_silence records. */
#define PPRT_MAX_CHAIN 16

/* Who stopped answering, after a wait did not complete (find_silent). */
typedef struct pprt_silence {
  int32_t rank;     /* the silent rank; -1 when every rank still answers */
  int32_t found_by; /* the rank that found it: this one, or one that said */
  double waited_s;  /* how long this rank's wait lasted */
  int32_t length;   /* the ranks asked along the chain of waits, in order */
  int32_t chain[PPRT_MAX_CHAIN];
} pprt_silence;

/* Every wait is bounded by `timeout_s`: a wait that does not complete in
   time, or that learns from another rank that the job is over, returns
   false (or PPRT_RECV_TIMEOUT) with its transfer still posted, and the
   caller ends the job naming find_silent's rank. */
typedef struct pprt_transport_ops {
  /* Groups the processes with equal `color`, ordered by `key`, and
     returns the group's id for the group collectives (0 for the first
     split, 1 for the second, ...). Collective over the world: every
     process splits the same number of times, in the same order. */
  int32_t (*split_groups)(pprt_transport *t, int32_t color, int32_t key);
  /* Starts a send of `bytes` bytes and returns a handle for wait_for(). */
  int32_t (*isend)(pprt_transport *t, const void *buf, int64_t bytes,
                   int32_t peer, int32_t tag);
  /* Completes every outstanding send and collective within `timeout_s`;
     invalidates all handles. */
  bool (*wait_all)(pprt_transport *t, double timeout_s);
  /* Receives exactly `bytes` bytes. */
  pprt_recv_status (*recv)(pprt_transport *t, void *buf, int64_t bytes,
                           int32_t peer, int32_t tag, double timeout_s);
  /* Starts a receive of exactly `bytes` bytes and returns a handle for
     wait_recv (only), which must complete it before wait_all. */
  int32_t (*irecv)(pprt_transport *t, void *buf, int64_t bytes, int32_t peer,
                   int32_t tag);
  /* Completes an irecv handle within `timeout_s`; after a timeout the
     receive stays posted (the caller ends the job). */
  pprt_recv_status (*wait_recv)(pprt_transport *t, int32_t handle,
                                double timeout_s);
  /* An exchange group: the isends and irecvs started between group_begin
     and group_end are issued together, in that order (one NCCL group), so
     a send that waits for its receive cannot deadlock the group. None of
     their handles may be waited on before group_end; groups do not nest. */
  void (*group_begin)(pprt_transport *t);
  void (*group_end)(pprt_transport *t);
  /* Starts an in-place element-wise `op` (sum, max or min) over the
     caller's group `group` (split_groups' id) and returns a handle for
     wait_for(); the buffer must stay untouched until then. */
  int32_t (*iallreduce_group_f32)(pprt_transport *t, int32_t group, void *buf,
                                  int64_t count, pprt_reduction op);
  /* Starts a sum over `group` of `blocks` (the group's size) blocks of
     `count` f32 at `send`, leaving block k of the sum in `recv` (`count`
     f32) of the group's k-th process (split_groups' key order); returns a
     handle for wait_for(). Both buffers stay untouched until then. */
  int32_t (*ireduce_scatter_group_f32)(pprt_transport *t, int32_t group,
                                       const void *send, void *recv,
                                       int64_t count, int32_t blocks);
  /* Starts an in-place gather over `group`: `buf` holds `blocks` blocks of
     `count` f32, the k-th process's own block at k; afterwards every block
     everywhere. Returns a handle for wait_for(). */
  int32_t (*iallgather_group_f32)(pprt_transport *t, int32_t group, void *buf,
                                  int64_t count, int32_t blocks);
  /* Completes a send or collective handle within `timeout_s`; false if it
     did not. */
  bool (*wait_for)(pprt_transport *t, int32_t handle, double timeout_s);
  /* In-place sum over the world into rank 0 (others' results undefined);
     false if it did not complete within `timeout_s`. */
  bool (*reduce_world_f64)(pprt_transport *t, double *vals, int32_t n,
                           double timeout_s);
  /* In-place element-wise minimum over the world, result on every rank;
     false if it did not complete within `timeout_s`. */
  bool (*allreduce_world_min_i32)(pprt_transport *t, int32_t *vals, int32_t n,
                                  double timeout_s);
  /* After a wait on `peer` (PPRT_EVERYONE for a collective) did not
     complete: the rank that stopped answering, found by following the
     chain of waits from `peer` (whom is it waiting for, and whom is that
     one waiting for, ...) to the first rank that does not answer within
     half of `timeout_s`, or that waits for nobody; every rank asking finds
     the same one. The MPI transport asks while the wait is still running,
     so the answer is known when it ends. */
  void (*find_silent)(pprt_transport *t, int32_t peer, double timeout_s,
                      pprt_silence *out);
  /* Ends every process of the job with `code`; does not return. */
  void (*abort)(pprt_transport *t, int code);
  /* Releases the transport and shuts the communication layer down. */
  void (*destroy)(pprt_transport *t);
} pprt_transport_ops;

struct pprt_transport {
  const pprt_transport_ops *ops;
  int32_t world_rank;
  int32_t world_size;
  int32_t local_rank; /* among the processes on this node */
  int64_t max_tag;
  /* Transfers complete in the order they were started (NCCL's one
     stream): a send cannot stay in flight while later transfers run, so
     a no-flush program runs each step drained (core/step.c). */
  bool in_order;
  /* The transport for host buffers (weight files, checkpoints): NULL when
     it is this one; the NCCL transport's MPI bootstrap otherwise. */
  pprt_transport *host;
};

static inline pprt_transport *pprt_host_transport(pprt_transport *t) {
  return t->host ? t->host : t;
}

/* `array` (`count` elements of `size` bytes) with room for one more:
   doubled, and `*cap` with it, when full. NULL when out of memory (`array`
   and `*cap` stay as they were). */
static inline void *pprt_reserve_one(void *array, int32_t *cap, int32_t count,
                                     size_t size) {
  if (count < *cap)
    return array;
  int32_t grown = *cap ? 2 * *cap : 16;
  void *p = realloc(array, (size_t)grown * size);
  if (p)
    *cap = grown;
  return p;
}

/* Drops the first `done` of `*count` elements of `size` bytes from `array`,
   a window of handles `*first`, `*first + 1`, ...: a program whose sends
   stay in flight across steps (no wait_all empties the array) keeps only
   its open window, and handles stay valid. Numbering restarts once the
   window is empty. */
static inline void pprt_drop_done(void *array, int32_t *count, int32_t *first,
                                  int32_t done, size_t size) {
  *count -= done;
  memmove(array, (char *)array + (size_t)done * size, (size_t)*count * size);
  *first = *count ? *first + done : 0;
}

/* A transport that forwards every call to `inner`: the base of the
   decorators (guarded, trace, staged), which embed it first, start from
   its forwarding table and override only the slots they change. */
typedef struct pprt_forwarding_transport {
  pprt_transport base; /* first, so the two pointers convert */
  pprt_transport *inner;
  pprt_transport_ops ops; /* base.ops points here */
} pprt_forwarding_transport;

/* Each slot calls the same slot of the inner transport; `destroy` frees
   the decorator (malloc'ed, with the forwarding transport first) and then
   destroys the inner transport. Overrides call these slots to forward. */
extern const pprt_transport_ops pprt_forwarding_ops;

/* Makes `f` forward to `inner`: it takes inner's ranks, tag limit and
   transfer order, and pprt_forwarding_ops as its table. */
void pprt_forwarding_init(pprt_forwarding_transport *f, pprt_transport *inner);

/* The transport a forwarding transport `t` forwards to. */
static inline pprt_transport *pprt_inner_transport(pprt_transport *t) {
  return ((pprt_forwarding_transport *)t)->inner;
}

/* Initialises MPI and returns the MPI transport. MPI_Init, communicator
   set-up and MPI_Finalize cannot be polled: when one lasts longer than
   `timeout_s`, the process names this host's stopped ranks and exits 1
   (backends/mpi/unpolled.h). */
pprt_transport *pprt_mpi_transport_create_within(int *argc, char ***argv,
                                                 double timeout_s);

/* The same with the default timeout, 60 s. */
pprt_transport *pprt_mpi_transport_create(int *argc, char ***argv);

/* `inner` writing each transfer and group it starts to PREFIX.<rank>
   (PPRT_TRANSPORT_TRACE); destroying it destroys `inner`. NULL with the
   reason in `err` when the file cannot be written. */
pprt_transport *pprt_trace_transport_create(pprt_transport *inner,
                                            const char *prefix, char *err,
                                            size_t err_size);

#endif /* PPRT_TRANSPORT_H */
