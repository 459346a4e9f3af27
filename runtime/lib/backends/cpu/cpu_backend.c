/* The CPU backend: device memory is host memory, GEMMs run on a BLAS
   (OpenBLAS unless PPRT_BLAS names another). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/backend.h"
#include "backends/cpu/blas_kernels.h"
#include "backends/cpu/blas_library.h"
#include "backends/gemm_stats.h"
#include "pprt/pprt.h"
#include "pprt_math.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* PPRT_GEMM_STATS=PREFIX: every GEMM is timed and the per-shape totals go
   to PREFIX.<world rank> when the backend is destroyed. */
static struct {
  const char *path;
  int32_t rank;
  pprt_gemm_stats stats;
} gemm_stats;

/* The library every GEMM calls. */
static pprt_blas blas;

static _Noreturn void gemm_fatal(const char *what) {
  fprintf(stderr, "pprt: pprt_gemm: %s\n", what);
  fflush(stderr);
  abort();
}

static void *cpu_alloc(pprt_backend *be, size_t bytes) {
  (void)be;
  return calloc(bytes ? bytes : 1, 1);
}

static void cpu_free(pprt_backend *be, void *p) {
  (void)be;
  free(p);
}

static void cpu_copy(pprt_backend *be, void *dst, const void *src,
                     size_t bytes) {
  (void)be;
  memcpy(dst, src, bytes);
}

static void cpu_zero(pprt_backend *be, void *p, size_t bytes) {
  (void)be;
  memset(p, 0, bytes);
}

static void cpu_accumulate_f32(pprt_backend *be, void *dst, const void *src,
                               int64_t n) {
  (void)be;
  float *d = dst;
  const float *s = src;
  for (int64_t i = 0; i < n; ++i)
    d[i] += s[i];
}

static void cpu_sgd_f32(pprt_backend *be, void *w, const void *g, int64_t n,
                        float lr) {
  (void)be;
  float *fw = w;
  const float *fg = g;
  for (int64_t i = 0; i < n; ++i)
    fw[i] -= lr * fg[i];
}

static void cpu_adam_f32(pprt_backend *be, void *w, const void *g, void *m,
                         void *v, int64_t n, const pprt_adam_update *u) {
  (void)be;
  float *fw = w, *fm = m, *fv = v;
  const float *fg = g;
  for (int64_t i = 0; i < n; ++i) {
    fm[i] = u->beta1 * fm[i] + (1.0f - u->beta1) * fg[i];
    fv[i] = u->beta2 * fv[i] + (1.0f - u->beta2) * fg[i] * fg[i];
    fw[i] -= (float)(u->step_size * fm[i] /
                     (pprt_sqrt(fv[i] * u->v_scale) + u->eps));
  }
}

static float cpu_read_f32(pprt_backend *be, const void *p) {
  (void)be;
  return *(const float *)p;
}

/* BLAS wants leading dimensions of at least 1, even for empty matrices. */
static int64_t max1(int64_t x) { return x > 1 ? x : 1; }

/* Elements a strided batch of row-major matrices spans. */
static int64_t span(int64_t batch, int64_t stride, int64_t rows, int64_t cols,
                    int64_t ld) {
  if (batch == 0 || rows == 0 || cols == 0)
    return 0;
  return (batch - 1) * stride + (rows - 1) * ld + cols;
}

/* A grow-only f32 buffer: stage code calls GEMMs of the same shapes on
   every step. */
typedef struct scratch {
  float *data;
  int64_t capacity;
} scratch;

/* The `n` bf16 values at `src` as f32 in `s` (exact: a bf16 is the upper
   half of an f32). Debian 12's OpenBLAS 0.3.21 declares cblas_sbgemm but
   is built without it, so bf16 GEMMs widen their inputs and run sgemm,
   which accumulates in fp32 as cuBLAS's bf16 GemmEx does. */
static const float *widen_bf16(scratch *s, const void *src, int64_t n) {
  if (n > s->capacity) {
    float *p = realloc(s->data, (size_t)n * sizeof *p);
    if (!p)
      gemm_fatal("out of memory widening bf16 inputs");
    s->data = p;
    s->capacity = n;
  }
  const uint16_t *in = src;
  uint32_t *out = (uint32_t *)s->data;
  for (int64_t i = 0; i < n; ++i)
    out[i] = (uint32_t)in[i] << 16;
  return s->data;
}

static void cpu_gemm(pprt_backend *be, int32_t ab_type, int32_t c_type,
                     int32_t trans_a, int32_t trans_b, int64_t batch, int64_t m,
                     int64_t n, int64_t k, float alpha, const void *a,
                     int64_t lda, int64_t stride_a, const void *b, int64_t ldb,
                     int64_t stride_b, float beta, void *c, int64_t ldc,
                     int64_t stride_c) {
  (void)be;
  struct timespec start;
  if (gemm_stats.path)
    clock_gettime(CLOCK_MONOTONIC, &start);
  if ((ab_type != PPRT_F32 && ab_type != PPRT_BF16) || c_type != PPRT_F32)
    gemm_fatal("the CPU backend computes GEMMs of f32 or bf16 inputs into "
               "f32 only");
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    gemm_fatal("negative batch or matrix size");
  if (ldc < max1(n) || lda < max1(trans_a ? m : k) ||
      ldb < max1(trans_b ? k : n))
    gemm_fatal("a row stride is smaller than its row");
  const float *fa = a, *fb = b;
  if (ab_type == PPRT_BF16) {
    static scratch wide_a, wide_b;
    fa = widen_bf16(
        &wide_a, a,
        span(batch, stride_a, trans_a ? k : m, trans_a ? m : k, lda));
    fb = widen_bf16(
        &wide_b, b,
        span(batch, stride_b, trans_b ? n : k, trans_b ? k : n, ldb));
  }
  pprt_blas_sgemm_strided(&blas, trans_a, trans_b, batch, (int)m, (int)n,
                          (int)k, alpha, fa, (int)lda, stride_a, fb, (int)ldb,
                          stride_b, beta, c, (int)ldc, stride_c);
  if (gemm_stats.path) {
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    pprt_gemm_shape shape = {ab_type, c_type, trans_a, trans_b, batch, m, n, k};
    if (!pprt_gemm_stats_add(&gemm_stats.stats, &shape,
                             (double)(end.tv_sec - start.tv_sec) +
                                 (double)(end.tv_nsec - start.tv_nsec) * 1e-9))
      gemm_fatal("out of memory counting GEMMs (PPRT_GEMM_STATS)");
  }
}

static void cpu_no_op(pprt_backend *be) { (void)be; }

static void cpu_destroy(pprt_backend *be) {
  (void)be;
  if (!gemm_stats.path)
    return;
  char path[4096];
  snprintf(path, sizeof path, "%s.%d", gemm_stats.path, (int)gemm_stats.rank);
  if (!pprt_gemm_stats_write(&gemm_stats.stats, path))
    fprintf(stderr, "pprt: rank %d: cpu backend: cannot write '%s'\n",
            (int)gemm_stats.rank, path);
  pprt_gemm_stats_free(&gemm_stats.stats);
  gemm_stats.path = NULL;
}

static pprt_transport *cpu_wrap_transport(pprt_backend *be, pprt_transport *t) {
  (void)be;
  return t;
}

const pprt_device_ops pprt_cpu_device_ops = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy,
    .copy_to_host = cpu_copy,
    .zero = cpu_zero,
    .accumulate_f32 = cpu_accumulate_f32,
    .sgd_f32 = cpu_sgd_f32,
    .adam_f32 = cpu_adam_f32,
    .read_f32 = cpu_read_f32,
    .gemm = cpu_gemm,
    .stage_begin = cpu_no_op,
    .stage_end = cpu_no_op,
    .wrap_transport = cpu_wrap_transport,
    .destroy = cpu_destroy,
};

/* Where OpenBLAS still runs its generic kernels on a CPU that has better
   ones (OpenBLAS without DYNAMIC_ARCH, or OPENBLAS_CORETYPE names them),
   GEMMs run several times slower. */
static void choose_blas_kernels(void) {
  const char *wanted = pprt_blas_kernels_for_cpu();
  if (wanted && strcmp(pprt_choose_blas_kernels(), "Prescott") == 0)
    fprintf(stderr,
            "pprt: warning: OpenBLAS runs its generic kernels (Prescott) on "
            "a CPU that has %s ones; set OPENBLAS_CORETYPE=%s\n",
            wanted, wanted);
}

pprt_backend *pprt_cpu_backend_create(int32_t world_rank, char *err,
                                      size_t err_size) {
  static pprt_backend cpu = {&pprt_cpu_device_ops};
  const char *stats = getenv("PPRT_GEMM_STATS");
  gemm_stats.path = stats && *stats && world_rank >= 0 ? stats : NULL;
  gemm_stats.rank = world_rank;
  /* Several ranks share the cores; a BLAS thread per core in every rank
     would oversubscribe them. The driver applies --threads afterwards. */
  pprt_blas linked = pprt_blas_linked();
  if (!getenv("OPENBLAS_NUM_THREADS"))
    pprt_blas_set_threads(&linked, 1);
  /* Before a PPRT_BLAS OpenBLAS loads: it reads the kernels chosen here. */
  choose_blas_kernels();
  const char *library = getenv("PPRT_BLAS");
  char why[448];
  if (!library || !*library)
    blas = linked;
  else if (!pprt_blas_open(library, &blas, why, sizeof why)) {
    snprintf(err, err_size, "PPRT_BLAS: %s", why);
    return NULL;
  }
  return &cpu;
}

/* The OpenMP runtime, linked only into programs whose stage code has
   parallel loops (pp-compile --parallel-loops). */
void omp_set_num_threads(int n) __attribute__((weak));

void pprt_set_compute_threads(int n) {
  pprt_blas_set_threads(&blas, n);
  if (omp_set_num_threads)
    omp_set_num_threads(n);
}
