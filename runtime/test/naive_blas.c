/* A naive BLAS library for PPRT_BLAS tests: row-major cblas_sgemm and
   MKL's cblas_sgemm_batch_strided as plain loops, so that the runtime's
   batched path runs (and is checked by pprt-gemm-test) where no library
   with one is installed. */
#include <stddef.h>

enum { ROW_MAJOR = 101, TRANS = 112 };

static float at(const float *x, int ld, int trans, int i, int j) {
  return trans == TRANS ? x[(size_t)j * ld + i] : x[(size_t)i * ld + j];
}

void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k,
                 float alpha, const float *a, int lda, const float *b, int ldb,
                 float beta, float *c, int ldc) {
  if (layout != ROW_MAJOR)
    return;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      for (int l = 0; l < k; ++l)
        sum += at(a, lda, trans_a, i, l) * at(b, ldb, trans_b, l, j);
      float *out = &c[(size_t)i * ldc + j];
      *out = alpha * sum + (beta == 0 ? 0 : beta * *out);
    }
}

void cblas_sgemm_batch_strided(int layout, int trans_a, int trans_b, int m,
                               int n, int k, float alpha, const float *a,
                               int lda, int stride_a, const float *b, int ldb,
                               int stride_b, float beta, float *c, int ldc,
                               int stride_c, int batch) {
  for (int p = 0; p < batch; ++p)
    cblas_sgemm(layout, trans_a, trans_b, m, n, k, alpha,
                a + (size_t)p * stride_a, lda, b + (size_t)p * stride_b, ldb,
                beta, c + (size_t)p * stride_c, ldc);
}
