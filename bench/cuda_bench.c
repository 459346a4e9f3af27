/* The GPU check's baselines (scripts/gpu-check.sh), measured on the device
   it runs on: bare cuBLAS on the GEMM shapes a run recorded
   (PPRT_CUDA_GEMM_STATS), and device-to-device copy bandwidth against the
   runtime's elementwise kernels. Prints `key value...` lines. */
#include "backends/cuda/cuda_kernels.h"
#include "pprt/pprt.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const char *why) {
  fprintf(stderr, "pprt-cuda-bench: %s: %s\n", what, why);
  exit(1);
}

static void check(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess)
    die(what, cudaGetErrorString(rc));
}

static void *device_zeros(size_t bytes) {
  void *p = NULL;
  check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  check(cudaMemset(p, 0, bytes ? bytes : 1), "cudaMemset");
  return p;
}

/* Milliseconds per call of `run` on `stream`, after a warm-up. */
static double time_ms(cudaStream_t stream, void (*run)(void *), void *arg,
                      int reps) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < 3; ++i)
    run(arg);
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; i < reps; ++i)
    run(arg);
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / reps;
}

typedef struct gemm_case {
  cublasHandle_t blas;
  int ta, tb, ab_type, c_type;
  long long batch, m, n, k;
  void *a, *b, *c;
} gemm_case;

static cudaDataType data_type(int t) {
  return t == PPRT_F32 ? CUDA_R_32F : t == PPRT_BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

static size_t element_bytes(int t) { return t == PPRT_F32 ? 4 : 2; }

/* The row-major product pprt_gemm computes, as the cuda backend maps it
   (column-major C^T = op(B)^T op(A)^T), on packed operands. */
static void run_gemm(void *arg) {
  gemm_case *g = arg;
  float alpha = 1, beta = 0;
  int lda = (int)(g->ta ? g->m : g->k), ldb = (int)(g->tb ? g->k : g->n);
  cublasStatus_t rc = cublasGemmStridedBatchedEx(
      g->blas, g->tb ? CUBLAS_OP_T : CUBLAS_OP_N,
      g->ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)g->n, (int)g->m, (int)g->k,
      &alpha, g->b, data_type(g->ab_type), ldb, g->k * g->n, g->a,
      data_type(g->ab_type), lda, g->m * g->k, &beta, g->c,
      data_type(g->c_type), (int)g->n, g->m * g->n, (int)g->batch,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (rc != CUBLAS_STATUS_SUCCESS)
    die("cublasGemmStridedBatchedEx", cublasGetStatusString(rc));
}

/* For every recorded shape: "gemm <shape...> calls run_s baseline_s
   gflop", the baseline being bare cuBLAS for as many calls. */
static int bench_gemms(int argc, char **argv) {
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS)
    die("cublasCreate", "failed");
  for (int f = 0; f < argc; ++f) {
    FILE *in = fopen(argv[f], "r");
    if (!in)
      die(argv[f], "cannot open");
    gemm_case g = {.blas = blas};
    long long calls;
    double seconds;
    while (fscanf(in, "gemm %d %d %d %d %lld %lld %lld %lld %lld %lf\n",
                  &g.ab_type, &g.c_type, &g.ta, &g.tb, &g.batch, &g.m, &g.n,
                  &g.k, &calls, &seconds) == 10) {
      size_t eb = element_bytes(g.ab_type);
      g.a = device_zeros((size_t)(g.batch * g.m * g.k) * eb);
      g.b = device_zeros((size_t)(g.batch * g.k * g.n) * eb);
      g.c =
          device_zeros((size_t)(g.batch * g.m * g.n) * element_bytes(g.c_type));
      double ms = time_ms(NULL, run_gemm, &g, 20);
      double gflop = 2e-9 * (double)(g.batch * g.m * g.n * g.k) * calls;
      printf("gemm %d %d %d %d %lld %lld %lld %lld %lld %.9g %.9g %.9g\n",
             g.ab_type, g.c_type, g.ta, g.tb, g.batch, g.m, g.n, g.k, calls,
             seconds, ms * 1e-3 * calls, gflop);
      cudaFree(g.a);
      cudaFree(g.b);
      cudaFree(g.c);
    }
    fclose(in);
  }
  cublasDestroy(blas);
  return 0;
}

typedef struct copy_case {
  void *dst, *src, *acc;
  size_t bytes;
} copy_case;

static void run_copy(void *arg) {
  copy_case *c = arg;
  check(
      cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, NULL),
      "cudaMemcpyAsync");
}

static void run_accumulate(void *arg) {
  copy_case *c = arg;
  check(pprt_cuda_accumulate_f32(NULL, c->dst, c->src,
                                 (int64_t)(c->bytes / sizeof(float))),
        "accumulate kernel");
}

/* "bandwidth copy GB/s" (read + write) and "bandwidth accumulate GB/s"
   (two reads, one write) on `bytes`-sized buffers. */
static int bench_bandwidth(size_t bytes) {
  copy_case c = {device_zeros(bytes), device_zeros(bytes), NULL, bytes};
  double copy = time_ms(NULL, run_copy, &c, 20);
  double acc = time_ms(NULL, run_accumulate, &c, 20);
  printf("bandwidth copy %.6g\n", 2.0 * bytes / (copy * 1e6));
  printf("bandwidth accumulate %.6g\n", 3.0 * bytes / (acc * 1e6));
  cudaFree(c.dst);
  cudaFree(c.src);
  return 0;
}

int main(int argc, char **argv) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0)
    die("no CUDA device",
        rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
  if (argc >= 2 && strcmp(argv[1], "gemm") == 0)
    return bench_gemms(argc - 2, argv + 2);
  if (argc == 3 && strcmp(argv[1], "bandwidth") == 0)
    return bench_bandwidth((size_t)strtoull(argv[2], NULL, 10));
  fprintf(stderr, "usage: pprt-cuda-bench gemm STATS... | bandwidth BYTES\n");
  return 2;
}
