/* Times one GEMM kernel (bench/gemm_choice.py): C[b] = op(A[b]) op(B[b]) on
   rank-3 memrefs, called through the kernel's C interface. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} memref3;

void _mlir_ciface_kernel(memref3 *a, memref3 *b, memref3 *c);

static memref3 make(int64_t d0, int64_t d1, int64_t d2) {
  float *data = malloc(sizeof(float) * d0 * d1 * d2);
  for (int64_t i = 0; i < d0 * d1 * d2; ++i)
    data[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
  memref3 m = {data, data, 0, {d0, d1, d2}, {d1 * d2, d2, 1}};
  return m;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: %s a0 a1 a2 b0 b1 b2 c0 c1 c2\n", argv[0]);
    return 2;
  }
  int64_t d[9];
  for (int i = 0; i < 9; ++i)
    d[i] = atoll(argv[i + 1]);
  memref3 a = make(d[0], d[1], d[2]), b = make(d[3], d[4], d[5]),
          c = make(d[6], d[7], d[8]);
  /* Five rounds of repeats for 40 ms each; the median round time. */
  double best[5];
  for (int round = 0; round < 5; ++round) {
    long reps = 0;
    double start = now(), end;
    do {
      _mlir_ciface_kernel(&a, &b, &c);
      ++reps;
    } while ((end = now()) - start < 0.04);
    best[round] = (end - start) / reps;
  }
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j)
      if (best[j] < best[i]) {
        double t = best[i];
        best[i] = best[j];
        best[j] = t;
      }
  printf("%.9f %f\n", best[2], c.aligned[0]);
  return 0;
}
