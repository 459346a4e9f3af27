/* The CUDA backend: device memory on one GPU per process, cuBLAS GEMMs,
   elementwise kernels, transfers staged through pinned host memory. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cublas_args.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/gemm_stats.h"
#ifdef PPRT_HAVE_NCCL
#include "backends/nccl/nccl_transport.h"
#endif
#include "pprt/pprt.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Everything runs in order on one stream per process. Stage functions are
 * host code until pp-lower-to-cuda exists, so by default buffers are
 * managed memory (cudaMallocManaged) that host code can reach, and
 * stage_begin synchronises the stream; PPRT_CUDA_MEMORY=device allocates
 * with cudaMalloc, for stage code that only calls pprt_gemm or runs on the
 * device. Copies to the host synchronise; copies to the device too, so
 * their source may be reused at once.
 */
typedef struct cuda_backend {
  pprt_backend base; /* first, so the two pointers convert */
  int32_t rank;
  int device;
  bool managed;
  bool nccl;       /* PPRT_CUDA_TRANSPORT=nccl */
  int stage_depth; /* > 0 inside a (host) stage function */
  cudaStream_t stream;
  cublasHandle_t blas;
  /* PPRT_CUDA_GEMM_STATS=PREFIX: every GEMM is timed (synchronously) and
     the per-shape totals go to PREFIX.<rank> at exit. */
  const char *gemm_stats_path;
  pprt_gemm_stats gemm_stats;
} cuda_backend;

static cuda_backend *as_cuda(pprt_backend *be) { return (cuda_backend *)be; }

static _Noreturn void cuda_fatal(cuda_backend *c, const char *what,
                                 const char *detail) {
  fprintf(stderr, "pprt: rank %d: cuda backend: %s: %s\n", c->rank, what,
          detail);
  fflush(stderr);
  abort();
}

static void check(cuda_backend *c, cudaError_t rc, const char *what) {
  if (rc != cudaSuccess)
    cuda_fatal(c, what, cudaGetErrorString(rc));
}

static void check_blas(cuda_backend *c, cublasStatus_t rc, const char *what) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    cuda_fatal(c, what, cublasGetStatusString(rc));
}

static void sync(cuda_backend *c) {
  check(c, cudaStreamSynchronize(c->stream), "cudaStreamSynchronize");
}

static void *cuda_alloc(pprt_backend *be, size_t bytes) {
  cuda_backend *c = as_cuda(be);
  void *p = NULL;
  size_t n = bytes ? bytes : 1;
  cudaError_t rc = c->managed ? cudaMallocManaged(&p, n, cudaMemAttachGlobal)
                              : cudaMalloc(&p, n);
  if (rc == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError(); /* clear it: the caller reports it */
    return NULL;
  }
  check(c, rc, c->managed ? "cudaMallocManaged" : "cudaMalloc");
  check(c, cudaMemsetAsync(p, 0, n, c->stream), "cudaMemsetAsync");
  return p;
}

static void cuda_free(pprt_backend *be, void *p) {
  cuda_backend *c = as_cuda(be);
  check(c, cudaFree(p), "cudaFree");
}

static void cuda_copy_to_device(pprt_backend *be, void *dst, const void *src,
                                size_t bytes) {
  cuda_backend *c = as_cuda(be);
  check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, c->stream),
        "cudaMemcpyAsync to the device");
  sync(c);
}

static void cuda_copy_to_host(pprt_backend *be, void *dst, const void *src,
                              size_t bytes) {
  cuda_backend *c = as_cuda(be);
  check(c, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, c->stream),
        "cudaMemcpyAsync to the host");
  sync(c);
}

static void cuda_zero(pprt_backend *be, void *p, size_t bytes) {
  cuda_backend *c = as_cuda(be);
  check(c, cudaMemsetAsync(p, 0, bytes, c->stream), "cudaMemsetAsync");
}

static void cuda_accumulate_f32(pprt_backend *be, void *dst, const void *src,
                                int64_t n) {
  cuda_backend *c = as_cuda(be);
  check(c, pprt_cuda_accumulate_f32(c->stream, dst, src, n),
        "accumulate kernel");
}

static void cuda_sgd_f32(pprt_backend *be, void *w, const void *g, int64_t n,
                         float lr) {
  cuda_backend *c = as_cuda(be);
  check(c, pprt_cuda_sgd_f32(c->stream, w, g, n, lr), "SGD kernel");
}

static void cuda_adam_f32(pprt_backend *be, void *w, const void *g, void *m,
                          void *v, int64_t n, const pprt_adam_update *u) {
  cuda_backend *c = as_cuda(be);
  check(c,
        pprt_cuda_adam_f32(c->stream, w, g, m, v, n, u->beta1, u->beta2, u->eps,
                           u->step_size, u->v_scale),
        "Adam kernel");
}

static float cuda_read_f32(pprt_backend *be, const void *p) {
  float x = 0;
  cuda_copy_to_host(be, &x, p, sizeof x);
  return x;
}

static bool cuda_type_of(int32_t t, cudaDataType *out) {
  switch (t) {
  case PPRT_F32:
    *out = CUDA_R_32F;
    return true;
  case PPRT_BF16:
    *out = CUDA_R_16BF;
    return true;
  case PPRT_F16:
    *out = CUDA_R_16F;
    return true;
  default:
    return false;
  }
}

static int64_t max1(int64_t x) { return x > 1 ? x : 1; }

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void write_gemm_stats(cuda_backend *c) {
  char path[4096];
  snprintf(path, sizeof path, "%s.%d", c->gemm_stats_path, c->rank);
  if (!pprt_gemm_stats_write(&c->gemm_stats, path))
    fprintf(stderr, "pprt: rank %d: cuda backend: cannot write '%s'\n", c->rank,
            path);
  pprt_gemm_stats_free(&c->gemm_stats);
}

static void check_gemm_shape(cuda_backend *c, int32_t trans_a, int32_t trans_b,
                             int64_t batch, int64_t m, int64_t n, int64_t k,
                             int64_t lda, int64_t ldb, int64_t ldc) {
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    cuda_fatal(c, "pprt_gemm", "negative batch or matrix size");
  if (ldc < max1(n) || lda < max1(trans_a ? m : k) ||
      ldb < max1(trans_b ? k : n))
    cuda_fatal(c, "pprt_gemm", "a row stride is smaller than its row");
  if (batch > INT_MAX || m > INT_MAX || n > INT_MAX || k > INT_MAX ||
      lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
    cuda_fatal(c, "pprt_gemm", "a size exceeds cuBLAS's 32-bit range");
}

/* A and B of ab_type (f32, or bf16/f16 accumulating in fp32), C of c_type
   (f32 or ab_type); all products computed in fp32. */
static void cuda_gemm(pprt_backend *be, int32_t ab_type, int32_t c_type,
                      int32_t trans_a, int32_t trans_b, int64_t batch,
                      int64_t m, int64_t n, int64_t k, float alpha,
                      const void *a, int64_t lda, int64_t stride_a,
                      const void *b, int64_t ldb, int64_t stride_b, float beta,
                      void *c, int64_t ldc, int64_t stride_c) {
  cuda_backend *cb = as_cuda(be);
  cudaDataType ab, ct;
  if (!cuda_type_of(ab_type, &ab) || !cuda_type_of(c_type, &ct) ||
      (c_type != PPRT_F32 && c_type != ab_type))
    cuda_fatal(cb, "pprt_gemm", "unsupported element types");
  check_gemm_shape(cb, trans_a, trans_b, batch, m, n, k, lda, ldb, ldc);
  if (batch == 0 || m == 0 || n == 0)
    return;
  double start = cb->gemm_stats_path ? now_seconds() : 0;
  pprt_cublas_gemm_args g =
      pprt_cublas_row_major(trans_a, trans_b, m, n, k, a, lda, stride_a, b, ldb,
                            stride_b, ldc, stride_c);
  check_blas(cb,
             cublasGemmStridedBatchedEx(
                 cb->blas, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                 g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, (int)g.m, (int)g.n,
                 (int)g.k, &alpha, g.a, ab, (int)g.lda, g.stride_a, g.b, ab,
                 (int)g.ldb, g.stride_b, &beta, c, ct, (int)g.ldc, g.stride_c,
                 (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
  /* Host stage code reads C next. */
  if (cb->stage_depth > 0 || cb->gemm_stats_path)
    sync(cb);
  if (cb->gemm_stats_path) {
    pprt_gemm_shape shape = {ab_type, c_type, trans_a, trans_b, batch, m, n, k};
    if (!pprt_gemm_stats_add(&cb->gemm_stats, &shape, now_seconds() - start))
      cuda_fatal(cb, "PPRT_CUDA_GEMM_STATS", "out of memory");
  }
}

static void cuda_stage_begin(pprt_backend *be) {
  cuda_backend *c = as_cuda(be);
  if (c->stage_depth++ == 0)
    sync(c);
}

static void cuda_stage_end(pprt_backend *be) { --as_cuda(be)->stage_depth; }

static void *pinned_alloc(void *ctx, size_t bytes) {
  (void)ctx;
  void *p = NULL;
  return cudaMallocHost(&p, bytes) == cudaSuccess ? p : NULL;
}

static void pinned_free(void *ctx, void *p) {
  (void)ctx;
  cudaFreeHost(p);
}

#ifdef PPRT_HAVE_NCCL
static pprt_transport *nccl_transport(cuda_backend *c, pprt_transport *t) {
  char err[256];
  pprt_transport *n = pprt_nccl_transport_create(t, c->stream, err, sizeof err);
  if (!n) {
    fprintf(stderr, "pprt: rank %d: --backend cuda: NCCL transport: %s\n",
            c->rank, err);
    fflush(stderr);
    t->ops->abort(t, 1);
  }
  return n;
}
#endif

/* NCCL when asked; else MPI over host staging (no CUDA-aware MPI
   assumed). */
static pprt_transport *cuda_wrap_transport(pprt_backend *be,
                                           pprt_transport *t) {
#ifdef PPRT_HAVE_NCCL
  if (as_cuda(be)->nccl)
    return nccl_transport(as_cuda(be), t);
#endif
  static const pprt_host_memory pinned = {pinned_alloc, pinned_free, NULL};
  pprt_transport *s = pprt_staged_transport_create(t, be, &pinned);
  if (!s)
    cuda_fatal(as_cuda(be), "transport", "out of memory");
  return s;
}

static void cuda_destroy(pprt_backend *be) {
  cuda_backend *c = as_cuda(be);
  cudaStreamSynchronize(c->stream);
  if (c->gemm_stats_path)
    write_gemm_stats(c);
  cublasDestroy(c->blas);
  cudaStreamDestroy(c->stream);
  free(c);
}

static const pprt_device_ops cuda_ops = {
    .name = "cuda",
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_to_device = cuda_copy_to_device,
    .copy_to_host = cuda_copy_to_host,
    .zero = cuda_zero,
    .accumulate_f32 = cuda_accumulate_f32,
    .sgd_f32 = cuda_sgd_f32,
    .adam_f32 = cuda_adam_f32,
    .read_f32 = cuda_read_f32,
    .gemm = cuda_gemm,
    .stage_begin = cuda_stage_begin,
    .stage_end = cuda_stage_end,
    .wrap_transport = cuda_wrap_transport,
    .destroy = cuda_destroy,
};

bool pprt_cuda_active_stream(int32_t *rank, cudaStream_t *stream) {
  pprt_backend *be = pprt_active_backend();
  if (!be || be->ops != &cuda_ops)
    return false;
  *rank = as_cuda(be)->rank;
  *stream = as_cuda(be)->stream;
  return true;
}

/* Picks and opens this process's device; false with the reason in err. */
static bool open_device(cuda_backend *c, int32_t local_rank, char *err,
                        size_t err_size) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    snprintf(err, err_size, "no CUDA device (cudaGetDeviceCount: %s)",
             rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
    return false;
  }
  c->device = local_rank % count;
  const char *what = "cudaSetDevice";
  if ((rc = cudaSetDevice(c->device)) == cudaSuccess) {
    what = "cudaStreamCreate";
    rc = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  }
  if (rc != cudaSuccess) {
    snprintf(err, err_size, "device %d: %s: %s", c->device, what,
             cudaGetErrorString(rc));
    return false;
  }
  return true;
}

static bool open_blas(cuda_backend *c, char *err, size_t err_size) {
  cublasStatus_t rc = cublasCreate(&c->blas);
  if (rc == CUBLAS_STATUS_SUCCESS)
    rc = cublasSetStream(c->blas, c->stream);
  if (rc != CUBLAS_STATUS_SUCCESS) {
    snprintf(err, err_size, "device %d: cublasCreate: %s", c->device,
             cublasGetStatusString(rc));
    return false;
  }
  return true;
}

pprt_backend *pprt_cuda_backend_create(const pprt_transport *t, char *err,
                                       size_t err_size) {
  cuda_backend *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  c->base.ops = &cuda_ops;
  c->rank = t->world_rank;
  const char *mem = getenv("PPRT_CUDA_MEMORY");
  c->managed = !(mem && strcmp(mem, "device") == 0);
  if (mem && *mem && strcmp(mem, "device") != 0 &&
      strcmp(mem, "managed") != 0) {
    snprintf(err, err_size,
             "PPRT_CUDA_MEMORY is '%s'; expected managed or "
             "device",
             mem);
    free(c);
    return NULL;
  }
  const char *stats = getenv("PPRT_CUDA_GEMM_STATS");
  c->gemm_stats_path = stats && *stats ? stats : NULL;
  const char *tr = getenv("PPRT_CUDA_TRANSPORT");
  c->nccl = tr && strcmp(tr, "nccl") == 0;
  if (tr && *tr && !c->nccl && strcmp(tr, "staged") != 0) {
    snprintf(err, err_size,
             "PPRT_CUDA_TRANSPORT is '%s'; expected staged or nccl", tr);
    free(c);
    return NULL;
  }
#ifndef PPRT_HAVE_NCCL
  if (c->nccl) {
    snprintf(err, err_size,
             "PPRT_CUDA_TRANSPORT=nccl, but this runtime was "
             "built without NCCL");
    free(c);
    return NULL;
  }
#endif
  if (!open_device(c, t->local_rank, err, err_size) ||
      !open_blas(c, err, err_size)) {
    if (c->stream)
      cudaStreamDestroy(c->stream);
    free(c);
    return NULL;
  }
  return &c->base;
}
