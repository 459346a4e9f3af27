/* A test backend whose memory faults when anything but its own ops, the
   stage functions or the transport touches it (PPRT_BACKEND=guarded). */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#endif

#include "backends/backend.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Every allocation comes from one reserved arena, so that opening and
 * closing all device memory is one mprotect each. The arena is closed
 * (PROT_NONE) except while `depth` > 0: inside an op, a stage function or
 * a transport call; an access outside faults, and the SIGSEGV handler names
 * the offending address before the process dies. The CPU ops compute.
 * Freed memory is not reused: a test backend needs no allocator.
 */
typedef struct guarded_backend {
  pprt_backend base; /* first, so the two pointers convert */
  char *arena;
  size_t reserved;
  size_t used; /* page-aligned bump pointer */
  size_t page;
  int depth;
  bool staged; /* transfers through host staging buffers */
} guarded_backend;

/* One per process: the signal handler and the transport need it. */
static guarded_backend the_backend;

static _Noreturn void guarded_fatal(const char *what) {
  fprintf(stderr, "pprt: guarded backend: %s\n", what);
  fflush(stderr);
  abort();
}

static void protect(guarded_backend *g, int prot) {
  if (g->used && mprotect(g->arena, g->used, prot) != 0)
    guarded_fatal("mprotect failed");
}

static void open_memory(guarded_backend *g) {
  if (g->depth++ == 0)
    protect(g, PROT_READ | PROT_WRITE);
}

static void close_memory(guarded_backend *g) {
  if (--g->depth == 0)
    protect(g, PROT_NONE);
}

static guarded_backend *as_guarded(pprt_backend *be) {
  return (guarded_backend *)be;
}

static void on_segv(int sig, siginfo_t *info, void *uctx) {
  (void)uctx;
  guarded_backend *g = &the_backend;
  char *addr = info->si_addr;
  if (addr >= g->arena && addr < g->arena + g->used) {
    char msg[200];
    int n = snprintf(msg, sizeof msg,
                     "pprt: guarded backend: device memory at arena offset "
                     "%zu touched outside a backend op, stage function or "
                     "transfer\n",
                     (size_t)(addr - g->arena));
    if (n > 0)
      (void)!write(STDERR_FILENO, msg, (size_t)n);
  }
  /* Returning re-runs the access, which now kills the process. */
  signal(sig, SIG_DFL);
}

static void *guarded_alloc(pprt_backend *be, size_t bytes) {
  guarded_backend *g = as_guarded(be);
  size_t rounded = (bytes + g->page) / g->page * g->page;
  if (rounded > g->reserved - g->used)
    return NULL;
  char *p = g->arena + g->used;
  g->used += rounded;
  /* Fresh anonymous pages are zero; open them if memory is open now. */
  if (g->depth > 0 && mprotect(p, rounded, PROT_READ | PROT_WRITE) != 0)
    guarded_fatal("mprotect failed");
  return p;
}

static void guarded_free(pprt_backend *be, void *p) {
  (void)be;
  (void)p;
}

/* Runs one CPU op with the memory open. */
#define GUARDED(be, call)                                                      \
  do {                                                                         \
    open_memory(as_guarded(be));                                               \
    call;                                                                      \
    close_memory(as_guarded(be));                                              \
  } while (0)

static void guarded_copy_to_device(pprt_backend *be, void *dst, const void *src,
                                   size_t bytes) {
  GUARDED(be, pprt_cpu_device_ops.copy_to_device(be, dst, src, bytes));
}

static void guarded_copy_to_host(pprt_backend *be, void *dst, const void *src,
                                 size_t bytes) {
  GUARDED(be, pprt_cpu_device_ops.copy_to_host(be, dst, src, bytes));
}

static void guarded_zero(pprt_backend *be, void *p, size_t bytes) {
  GUARDED(be, pprt_cpu_device_ops.zero(be, p, bytes));
}

static void guarded_accumulate_f32(pprt_backend *be, void *dst, const void *src,
                                   int64_t n) {
  GUARDED(be, pprt_cpu_device_ops.accumulate_f32(be, dst, src, n));
}

static void guarded_sgd_f32(pprt_backend *be, void *w, const void *g, int64_t n,
                            float lr) {
  GUARDED(be, pprt_cpu_device_ops.sgd_f32(be, w, g, n, lr));
}

static void guarded_adam_f32(pprt_backend *be, void *w, const void *g, void *m,
                             void *v, int64_t n, const pprt_adam_update *u) {
  GUARDED(be, pprt_cpu_device_ops.adam_f32(be, w, g, m, v, n, u));
}

static float guarded_read_f32(pprt_backend *be, const void *p) {
  float x;
  GUARDED(be, x = pprt_cpu_device_ops.read_f32(be, p));
  return x;
}

static void guarded_gemm(pprt_backend *be, int32_t ab_type, int32_t c_type,
                         int32_t trans_a, int32_t trans_b, int64_t batch,
                         int64_t m, int64_t n, int64_t k, float alpha,
                         const void *a, int64_t lda, int64_t stride_a,
                         const void *b, int64_t ldb, int64_t stride_b,
                         float beta, void *c, int64_t ldc, int64_t stride_c) {
  GUARDED(be, pprt_cpu_device_ops.gemm(
                  be, ab_type, c_type, trans_a, trans_b, batch, m, n, k, alpha,
                  a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c));
}

static void guarded_stage_begin(pprt_backend *be) {
  open_memory(as_guarded(be));
}

static void guarded_stage_end(pprt_backend *be) {
  close_memory(as_guarded(be));
}

/* ---- The transport, with the memory open during each of its calls. ---- */

/* Forwards through the guard: the slots that may touch buffer memory. */
#define FORWARD(call) GUARDED(&the_backend.base, call)

static int32_t gt_isend(pprt_transport *t, const void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  int32_t h;
  FORWARD(h = pprt_forwarding_ops.isend(t, buf, bytes, peer, tag));
  return h;
}

static bool gt_wait_all(pprt_transport *t, double timeout_s) {
  bool done;
  FORWARD(done = pprt_forwarding_ops.wait_all(t, timeout_s));
  return done;
}

static pprt_recv_status gt_recv(pprt_transport *t, void *buf, int64_t bytes,
                                int32_t peer, int32_t tag, double timeout_s) {
  pprt_recv_status s;
  FORWARD(s = pprt_forwarding_ops.recv(t, buf, bytes, peer, tag, timeout_s));
  return s;
}

static int32_t gt_irecv(pprt_transport *t, void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  int32_t h;
  FORWARD(h = pprt_forwarding_ops.irecv(t, buf, bytes, peer, tag));
  return h;
}

static pprt_recv_status gt_wait_recv(pprt_transport *t, int32_t handle,
                                     double timeout_s) {
  pprt_recv_status s;
  FORWARD(s = pprt_forwarding_ops.wait_recv(t, handle, timeout_s));
  return s;
}

/* The memory is open for the group's calls too: an inner transport may
   move a posted transfer's data during any of them. */
static void gt_group_begin(pprt_transport *t) {
  FORWARD(pprt_forwarding_ops.group_begin(t));
}

static void gt_group_end(pprt_transport *t) {
  FORWARD(pprt_forwarding_ops.group_end(t));
}

static int32_t gt_iallreduce_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       pprt_reduction op) {
  int32_t h;
  FORWARD(
      h = pprt_forwarding_ops.iallreduce_group_f32(t, group, buf, count, op));
  return h;
}

static int32_t gt_ireduce_scatter_group_f32(pprt_transport *t, int32_t group,
                                            const void *send, void *recv,
                                            int64_t count, int32_t blocks) {
  int32_t h;
  FORWARD(h = pprt_forwarding_ops.ireduce_scatter_group_f32(
              t, group, send, recv, count, blocks));
  return h;
}

static int32_t gt_iallgather_group_f32(pprt_transport *t, int32_t group,
                                       void *buf, int64_t count,
                                       int32_t blocks) {
  int32_t h;
  FORWARD(h = pprt_forwarding_ops.iallgather_group_f32(t, group, buf, count,
                                                       blocks));
  return h;
}

static bool gt_wait_for(pprt_transport *t, int32_t handle, double timeout_s) {
  bool done;
  FORWARD(done = pprt_forwarding_ops.wait_for(t, handle, timeout_s));
  return done;
}

#undef FORWARD

/* `t` with the memory open during each call that may move buffer data. */
static pprt_transport *guarded_transport_create(pprt_transport *t) {
  pprt_forwarding_transport *w = calloc(1, sizeof *w);
  if (!w)
    guarded_fatal("out of memory");
  pprt_forwarding_init(w, t);
  w->ops.isend = gt_isend;
  w->ops.wait_all = gt_wait_all;
  w->ops.recv = gt_recv;
  w->ops.irecv = gt_irecv;
  w->ops.wait_recv = gt_wait_recv;
  w->ops.group_begin = gt_group_begin;
  w->ops.group_end = gt_group_end;
  w->ops.iallreduce_group_f32 = gt_iallreduce_group_f32;
  w->ops.ireduce_scatter_group_f32 = gt_ireduce_scatter_group_f32;
  w->ops.iallgather_group_f32 = gt_iallgather_group_f32;
  w->ops.wait_for = gt_wait_for;
  return &w->base;
}

static void *host_alloc(void *ctx, size_t bytes) {
  (void)ctx;
  return malloc(bytes);
}

static void host_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

static pprt_transport *guarded_wrap_transport(pprt_backend *be,
                                              pprt_transport *t) {
  if (as_guarded(be)->staged) {
    /* The inner transport runs with the arena closed: it must only ever
       see the staging buffers. */
    static const pprt_host_memory host = {host_alloc, host_free, NULL};
    pprt_transport *s = pprt_staged_transport_create(t, be, &host);
    if (!s)
      guarded_fatal("out of memory");
    return s;
  }
  return guarded_transport_create(t);
}

static void guarded_destroy(pprt_backend *be) {
  guarded_backend *g = as_guarded(be);
  munmap(g->arena, g->reserved);
  g->arena = NULL;
  g->used = 0;
  signal(SIGSEGV, SIG_DFL);
}

static const pprt_device_ops guarded_ops = {
    .name = "guarded",
    .alloc = guarded_alloc,
    .free = guarded_free,
    .copy_to_device = guarded_copy_to_device,
    .copy_to_host = guarded_copy_to_host,
    .zero = guarded_zero,
    .accumulate_f32 = guarded_accumulate_f32,
    .sgd_f32 = guarded_sgd_f32,
    .adam_f32 = guarded_adam_f32,
    .read_f32 = guarded_read_f32,
    .gemm = guarded_gemm,
    .stage_begin = guarded_stage_begin,
    .stage_end = guarded_stage_end,
    .wrap_transport = guarded_wrap_transport,
    .destroy = guarded_destroy,
};

pprt_backend *pprt_guarded_backend_create(char *err, size_t err_size) {
  guarded_backend *g = &the_backend;
  if (g->arena)
    guarded_fatal("created twice");
  /* The CPU backend's BLAS applies too. */
  if (!pprt_cpu_backend_create(-1, err, err_size))
    return NULL;
  g->base.ops = &guarded_ops;
  g->page = (size_t)sysconf(_SC_PAGESIZE);
  g->reserved = (size_t)16 << 30; /* address space only */
  g->arena = mmap(NULL, g->reserved, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (g->arena == MAP_FAILED)
    guarded_fatal("cannot reserve the arena");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  return &g->base;
}

pprt_backend *pprt_guarded_staged_backend_create(char *err, size_t err_size) {
  pprt_backend *be = pprt_guarded_backend_create(err, err_size);
  if (be)
    as_guarded(be)->staged = true;
  return be;
}
