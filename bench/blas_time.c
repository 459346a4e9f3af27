/* Times pprt_gemm on one shape, one thread, on the BLAS the runtime loads
   (the linked OpenBLAS, or the library PPRT_BLAS names): `batch` row-major
   products C[M,N] = op(A) op(B) of contiguous matrices, as
     blas_time BATCH M N K TRANS_A TRANS_B
   (TRANS_* 0 or 1). Prints the median seconds per pprt_gemm call over 5
   trials of at least 40 ms each (bench/blas_choice.py). */
#define _POSIX_C_SOURCE 200809L
#include "pprt/pprt.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { TRIALS = 5 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *filled(size_t n) {
  float *p = malloc(n * sizeof *p);
  if (!p) {
    fprintf(stderr, "blas_time: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; ++i)
    p[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  return p;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: blas_time BATCH M N K TRANS_A TRANS_B\n");
    return 2;
  }
  int64_t batch = atoll(argv[1]), m = atoll(argv[2]), n = atoll(argv[3]),
          k = atoll(argv[4]);
  int ta = atoi(argv[5]), tb = atoi(argv[6]);
  int64_t sa = m * k, sb = k * n, sc = m * n;
  float *a = filled((size_t)(sa * batch)), *b = filled((size_t)(sb * batch)),
        *c = filled((size_t)(sc * batch));
#define GEMM()                                                                 \
  pprt_gemm(PPRT_F32, PPRT_F32, ta, tb, batch, m, n, k, 1.0f, a, ta ? m : k,   \
            sa, b, tb ? k : n, sb, 0.0f, c, n, sc)
  /* Warm up (loads the library) and size a trial to at least 40 ms. */
  GEMM();
  long reps = 1;
  for (;; reps *= 2) {
    double t0 = now_s();
    for (long r = 0; r < reps; ++r)
      GEMM();
    if (now_s() - t0 >= 0.04)
      break;
  }
  double per_call[TRIALS];
  for (int trial = 0; trial < TRIALS; ++trial) {
    double t0 = now_s();
    for (long r = 0; r < reps; ++r)
      GEMM();
    per_call[trial] = (now_s() - t0) / (double)reps;
  }
  qsort(per_call, TRIALS, sizeof *per_call, by_value);
  printf("%.9g\n", per_call[TRIALS / 2]);
  free(a);
  free(b);
  free(c);
  return 0;
}
