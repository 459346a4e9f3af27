/* Times single-precision GEMMs on one shape, one thread: `batch` row-major
   products C[M,N] = op(A) op(B) of contiguous matrices, as
     sgemm_time BATCH M N K TRANS_A TRANS_B
   (TRANS_* 0 or 1). Prints the best seconds per call of `batch` products.
   They run as the CPU backend runs them (runtime/lib/backends/cpu/
   blas_library.c): on the linked OpenBLAS, with the kernels the backend
   chooses for it (blas_kernels.c; `sgemm_time --kernels` prints their
   name), or on the library PPRT_BLAS names, a batch through its
   cblas_sgemm_batch_strided where it has one. */
#define _POSIX_C_SOURCE 200809L
#include "backends/cpu/blas_kernels.h"
#include "backends/cpu/blas_library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *filled(size_t n) {
  float *p = malloc(n * sizeof *p);
  if (!p) {
    fprintf(stderr, "sgemm_time: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; ++i)
    p[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  return p;
}

/* The library PPRT_BLAS names, or the linked OpenBLAS; one thread. */
static pprt_blas one_thread_blas(void) {
  pprt_blas blas = pprt_blas_linked();
  pprt_blas_set_threads(&blas, 1);
  const char *library = getenv("PPRT_BLAS");
  char why[512];
  if (library && *library && !pprt_blas_open(library, &blas, why, sizeof why)) {
    fprintf(stderr, "sgemm_time: PPRT_BLAS: %s\n", why);
    exit(1);
  }
  pprt_blas_set_threads(&blas, 1);
  return blas;
}

int main(int argc, char **argv) {
  const char *kernels = pprt_choose_blas_kernels();
  if (argc == 2 && strcmp(argv[1], "--kernels") == 0) {
    printf("%s\n", kernels);
    return 0;
  }
  if (argc != 7) {
    fprintf(stderr,
            "usage: sgemm_time BATCH M N K TRANS_A TRANS_B | --kernels\n");
    return 2;
  }
  int batch = atoi(argv[1]), m = atoi(argv[2]), n = atoi(argv[3]),
      k = atoi(argv[4]), ta = atoi(argv[5]), tb = atoi(argv[6]);
  pprt_blas blas = one_thread_blas();
  size_t sa = (size_t)m * k, sb = (size_t)k * n, sc = (size_t)m * n;
  float *a = filled(sa * batch), *b = filled(sb * batch),
        *c = filled(sc * batch);
  double best = 1e30;
  /* Repeat until each trial takes at least 50 ms; keep the best trial. */
  long reps = 1;
  for (int trial = 0; trial < 7; ++trial) {
    double t0 = now_s();
    for (long r = 0; r < reps; ++r)
      pprt_blas_sgemm_strided(&blas, ta, tb, batch, m, n, k, 1.0f, a,
                              ta ? m : k, (int64_t)sa, b, tb ? k : n,
                              (int64_t)sb, 0.0f, c, n, (int64_t)sc);
    double per_call = (now_s() - t0) / (double)reps;
    if (per_call * reps < 0.05 && trial < 6) {
      reps *= 4;
      --trial;
      continue;
    }
    if (per_call < best)
      best = per_call;
  }
  printf("%.9g\n", best);
  free(a);
  free(b);
  free(c);
  return 0;
}
