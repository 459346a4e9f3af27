/* pprt_gemm on the host through a CBLAS (OpenBLAS from Debian). */
#include "pprt/pprt.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

static _Noreturn void gemm_fatal(const char *what) {
  fprintf(stderr, "pprt: pprt_gemm: %s\n", what);
  fflush(stderr);
  abort();
}

/* BLAS wants leading dimensions of at least 1, even for empty matrices. */
static int64_t max1(int64_t x) { return x > 1 ? x : 1; }

void pprt_gemm(int32_t ab_type, int32_t c_type, int32_t trans_a,
               int32_t trans_b, int64_t batch, int64_t m, int64_t n, int64_t k,
               float alpha, const void *a, int64_t lda, int64_t stride_a,
               const void *b, int64_t ldb, int64_t stride_b, float beta,
               void *c, int64_t ldc, int64_t stride_c) {
  if (ab_type != PPRT_F32 || c_type != PPRT_F32)
    gemm_fatal("the CPU backend computes f32 GEMMs only");
  if (batch < 0 || m < 0 || n < 0 || k < 0)
    gemm_fatal("negative batch or matrix size");
  if (ldc < max1(n) || lda < max1(trans_a ? m : k) ||
      ldb < max1(trans_b ? k : n))
    gemm_fatal("a row stride is smaller than its row");
  const float *fa = a, *fb = b;
  float *fc = c;
  for (int64_t p = 0; p < batch; ++p)
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                alpha, fa + p * stride_a, (int)lda, fb + p * stride_b, (int)ldb,
                beta, fc + p * stride_c, (int)ldc);
}
