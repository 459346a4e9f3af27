/* The CUDA backend's row-major to cuBLAS mapping (cublas_args.h): a
   column-major GEMM given the mapped arguments, as cuBLAS would compute
   it, must equal the row-major product pprt_gemm defines. */
#include "backends/cuda/cublas_args.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* cublasSgemmStridedBatched's definition: column-major, element (i, j) of
   an lda-strided matrix at i + j * lda. */
static void col_major_gemm(const pprt_cublas_gemm_args *g, int64_t batch,
                           float alpha, float beta, float *c) {
  for (int64_t p = 0; p < batch; ++p) {
    const float *a = (const float *)g->a + p * g->stride_a;
    const float *b = (const float *)g->b + p * g->stride_b;
    float *cp = c + p * g->stride_c;
    for (int64_t j = 0; j < g->n; ++j)
      for (int64_t i = 0; i < g->m; ++i) {
        double s = 0;
        for (int64_t l = 0; l < g->k; ++l) {
          float x = g->trans_a ? a[l + i * g->lda] : a[i + l * g->lda];
          float y = g->trans_b ? b[j + l * g->ldb] : b[l + j * g->ldb];
          s += (double)x * y;
        }
        cp[i + j * g->ldc] = (float)(alpha * s + beta * cp[i + j * g->ldc]);
      }
  }
}

/* pprt_gemm's definition (pprt.h): row-major, element (i, j) at
   i * ld + j. */
static void row_major_gemm(int32_t ta, int32_t tb, int64_t batch, int64_t m,
                           int64_t n, int64_t k, float alpha, const float *a,
                           int64_t lda, int64_t sa, const float *b, int64_t ldb,
                           int64_t sb, float beta, float *c, int64_t ldc,
                           int64_t sc) {
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) {
          float x = ta ? a[p * sa + l * lda + i] : a[p * sa + i * lda + l];
          float y = tb ? b[p * sb + j * ldb + l] : b[p * sb + l * ldb + j];
          s += (double)x * y;
        }
        float *cij = &c[p * sc + i * ldc + j];
        *cij = (float)(alpha * s + beta * *cij);
      }
}

static float *random_floats(int64_t n) {
  float *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)rand() / RAND_MAX - 0.5f;
  return x;
}

/* One case with padded rows (ld = row + 2) and batch strides. */
static int check_case(int32_t ta, int32_t tb, int64_t m, int64_t n, int64_t k) {
  int64_t batch = 3;
  int64_t lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 2, ldc = n + 2;
  int64_t sa = (ta ? k : m) * lda + 1, sb = (tb ? n : k) * ldb + 3;
  int64_t sc = m * ldc + 5;
  float *a = random_floats(batch * sa), *b = random_floats(batch * sb);
  float *c0 = random_floats(batch * sc), *c1 = malloc(batch * sc * 4);
  for (int64_t i = 0; i < batch * sc; ++i)
    c1[i] = c0[i];
  row_major_gemm(ta, tb, batch, m, n, k, 0.5f, a, lda, sa, b, ldb, sb, 2.0f, c0,
                 ldc, sc);
  pprt_cublas_gemm_args g =
      pprt_cublas_row_major(ta, tb, m, n, k, a, lda, sa, b, ldb, sb, ldc, sc);
  col_major_gemm(&g, batch, 0.5f, 2.0f, c1);
  int bad = 0;
  for (int64_t i = 0; i < batch * sc && !bad; ++i)
    if (fabsf(c0[i] - c1[i]) > 1e-5f) {
      fprintf(stderr,
              "trans_a %d trans_b %d m %lld n %lld k %lld: element %lld: "
              "%g != %g\n",
              ta, tb, (long long)m, (long long)n, (long long)k, (long long)i,
              c1[i], c0[i]);
      bad = 1;
    }
  free(a);
  free(b);
  free(c0);
  free(c1);
  return bad;
}

int main(void) {
  int failures = 0;
  for (int32_t ta = 0; ta < 2; ++ta)
    for (int32_t tb = 0; tb < 2; ++tb) {
      failures += check_case(ta, tb, 5, 7, 3);
      failures += check_case(ta, tb, 1, 4, 6);
      failures += check_case(ta, tb, 6, 2, 1);
    }
  if (failures) {
    fprintf(stderr, "%d cases failed\n", failures);
    return 1;
  }
  printf("cublas_args: 12 cases match\n");
  return 0;
}
