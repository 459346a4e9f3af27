/* The single-core fp32 peak: the best of several timed runs of independent
   vector FMA chains (AVX-512 where the compiler targets it, else AVX2+FMA).
   Build: cc -O3 -march=native bench/fma_peak.c -o fma_peak. Prints GFLOP/s. */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define SET1(x) _mm512_set1_ps(x)
#define FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define ADD(a, b) _mm512_add_ps(a, b)
#define SUM(v) _mm512_reduce_add_ps(v)
#elif defined(__FMA__)
typedef __m256 vec;
#define LANES 8
#define SET1(x) _mm256_set1_ps(x)
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define ADD(a, b) _mm256_add_ps(a, b)
static float SUM(__m256 v) {
  float f[8];
  _mm256_storeu_ps(f, v);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
#error "fma_peak.c needs FMA instructions (-march=native on an FMA CPU)"
#endif

/* Enough independent chains to cover FMA latency on two FMA ports. */
enum { CHAINS = 16 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs `iters` rounds of CHAINS dependent FMAs; returns a value that
   depends on every one so that none is optimised away. */
static float run(long iters, float m, float a) {
  vec acc[CHAINS];
  vec vm = SET1(m), va = SET1(a);
  for (int c = 0; c < CHAINS; ++c)
    acc[c] = SET1((float)c);
  for (long i = 0; i < iters; ++i)
    for (int c = 0; c < CHAINS; ++c)
      acc[c] = FMA(acc[c], vm, va);
  vec s = acc[0];
  for (int c = 1; c < CHAINS; ++c)
    s = ADD(s, acc[c]);
  return SUM(s);
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000000;
  double best = 0.0, sink = 0.0;
  for (int rep = 0; rep < 10; ++rep) {
    double t0 = now_s();
    sink += run(iters, 0.999999f, 1e-7f);
    double gflops = 2.0 * LANES * CHAINS * (double)iters / (now_s() - t0) / 1e9;
    if (gflops > best)
      best = gflops;
  }
  printf("%.2f\n", best);
  fprintf(stderr, "fma_peak: %d lanes x %d chains (checksum %g)\n", LANES,
          CHAINS, sink);
  return 0;
}
