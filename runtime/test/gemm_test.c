/* Unit test of pprt_gemm against a naive loop over its whole contract. */
#include "backends/backend.h"
#include "backends/cpu/blas_kernels.h"
#include "pprt/pprt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic values in [-1, 1). */
static float value(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)(*state >> 8) / (float)(1u << 23) - 1.0f;
}

static float *filled(int64_t n, unsigned *state) {
  float *v = malloc((size_t)n * sizeof *v);
  if (!v)
    exit(2);
  for (int64_t i = 0; i < n; ++i)
    v[i] = value(state);
  return v;
}

/* Element (i, j) of op(X) for row-major X with row stride ld. */
static double at(const float *x, int64_t ld, int trans, int64_t i, int64_t j) {
  return trans ? x[j * ld + i] : x[i * ld + j];
}

typedef struct gemm_case {
  int trans_a, trans_b;
  int64_t batch, m, n, k;
  int64_t pad; /* extra elements per row beyond its length */
  float alpha, beta;
  int bf16; /* A and B in bf16 */
} gemm_case;

/* `x` rounded to bf16 (nearest, ties to even; values here are finite). */
static uint16_t to_bf16(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

/* `n` floats rounded to bf16, returned as bf16 values; `x` keeps their
   f32 values, which the reference computes with. */
static uint16_t *rounded(float *x, int64_t n) {
  uint16_t *h = malloc((size_t)n * sizeof *h);
  if (!h)
    exit(2);
  for (int64_t i = 0; i < n; ++i) {
    h[i] = to_bf16(x[i]);
    uint32_t bits = (uint32_t)h[i] << 16;
    memcpy(&x[i], &bits, sizeof bits);
  }
  return h;
}

/* Runs one case; returns the number of wrong elements (padding included:
   it must stay untouched). */
static int run_case(const gemm_case *t) {
  unsigned state = 12345u;
  int64_t a_rows = t->trans_a ? t->k : t->m, a_cols = t->trans_a ? t->m : t->k;
  int64_t b_rows = t->trans_b ? t->n : t->k, b_cols = t->trans_b ? t->k : t->n;
  int64_t lda = a_cols + t->pad, ldb = b_cols + t->pad, ldc = t->n + t->pad;
  /* Batch strides beyond the matrices too, so that they are honoured. */
  int64_t sa = a_rows * lda + 3, sb = b_rows * ldb + 5, sc = t->m * ldc + 7;
  float *a = filled(t->batch * sa, &state), *b = filled(t->batch * sb, &state);
  float *c = filled(t->batch * sc, &state), *c0 = filled(t->batch * sc, &state);
  /* beta 0 must ignore C's old values, even NaNs (BLAS semantics). */
  for (int64_t i = 0; i < t->batch * sc; ++i) {
    int64_t row = i % sc / ldc, col = i % sc % ldc;
    if (t->beta == 0.0f && row < t->m && col < t->n)
      c[i] = NAN;
    c0[i] = c[i];
  }
  uint16_t *a16 = t->bf16 ? rounded(a, t->batch * sa) : NULL;
  uint16_t *b16 = t->bf16 ? rounded(b, t->batch * sb) : NULL;
  pprt_gemm(t->bf16 ? PPRT_BF16 : PPRT_F32, PPRT_F32, t->trans_a, t->trans_b,
            t->batch, t->m, t->n, t->k, t->alpha, t->bf16 ? (void *)a16 : a,
            lda, sa, t->bf16 ? (void *)b16 : b, ldb, sb, t->beta, c, ldc, sc);
  int bad = 0;
  for (int64_t p = 0; p < t->batch; ++p)
    for (int64_t i = 0; i < sc; ++i) {
      int64_t row = i / ldc, col = i % ldc;
      double want = c0[p * sc + i];
      if (row < t->m && col < t->n) {
        double acc = 0.0;
        for (int64_t l = 0; l < t->k; ++l)
          acc += at(a + p * sa, lda, t->trans_a, row, l) *
                 at(b + p * sb, ldb, t->trans_b, l, col);
        want = t->alpha * acc + (t->beta == 0.0f ? 0.0 : t->beta * want);
      }
      double got = c[p * sc + i], err = got - want;
      if (err < 0)
        err = -err;
      if (!(err <= 1e-5 * (double)(t->k + 1)) && bad++ < 3)
        printf("  batch %lld (%lld, %lld): got %.7g want %.7g\n", (long long)p,
               (long long)row, (long long)col, got, want);
    }
  free(a);
  free(b);
  free(a16);
  free(b16);
  free(c);
  free(c0);
  return bad;
}

/* Whether OpenBLAS runs vector kernels where this CPU has them after the
   backend chose (blas_kernels.c): Debian's OpenBLAS falls back to its
   generic "Prescott" kernels on CPUs it does not know. Its own choice of
   another vector kernel (Cooperlake on AMD Zen 4, say) is fine. Run after
   the first pprt_gemm. */
static int check_blas_kernels(void) {
  const char *wanted = pprt_blas_kernels_for_cpu();
  const char *running = pprt_blas_kernels();
  const char *forced = getenv("OPENBLAS_CORETYPE");
  int bad = wanted && !forced && strcmp(running, "Prescott") == 0;
  printf("blas kernels %s (this CPU calls for %s or newer): %s\n", running,
         wanted ? wanted : "OpenBLAS's own choice", bad ? "FAILED" : "ok");
  return bad;
}

int openblas_get_num_threads(void);

/* --threads: pprt_set_compute_threads reaches OpenBLAS (the count of a
   library PPRT_BLAS names is its own), and a product large enough for
   OpenBLAS to split over its threads stays right. */
static int check_threads(void) {
  pprt_set_compute_threads(2);
  int threads = openblas_get_num_threads();
  gemm_case t = {0, 1, 2, 160, 192, 176, 1, 1.0f, 1.0f, 0};
  int bad = (!getenv("PPRT_BLAS") && threads != 2) + run_case(&t);
  printf("gemm on %d threads, batch 2 m 160 n 192 k 176: %s\n", threads,
         bad ? "FAILED" : "ok");
  pprt_set_compute_threads(1);
  return bad;
}

int main(void) {
  int failures = 0, cases = 0;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int pad = 0; pad <= 3; pad += 3)
        for (int beta = 0; beta < 2; ++beta)
          for (int bf16 = 0; bf16 < 2; ++bf16) {
            gemm_case t = {ta, tb, 3, 5, 7, 4, pad, 0.5f, (float)beta, bf16};
            int bad = run_case(&t);
            printf("gemm %s trans_a %d trans_b %d batch 3 m 5 n 7 k 4 pad %d "
                   "beta %d: %s\n",
                   bf16 ? "bf16" : "f32", ta, tb, pad, beta,
                   bad ? "FAILED" : "ok");
            failures += bad != 0;
            ++cases;
          }
  failures += check_blas_kernels();
  failures += check_threads() != 0;
  cases += 2;
  printf("%d of %d cases failed\n", failures, cases);
  return failures ? 1 : 0;
}
