/* The row-major to column-major mapping of cublas_args.h. */
#include "backends/cuda/cublas_args.h"

pprt_cublas_gemm_args pprt_cublas_row_major(int32_t trans_a, int32_t trans_b,
                                            int64_t m, int64_t n, int64_t k,
                                            const void *a, int64_t lda,
                                            int64_t stride_a, const void *b,
                                            int64_t ldb, int64_t stride_b,
                                            int64_t ldc, int64_t stride_c) {
  return (pprt_cublas_gemm_args){
      .trans_a = trans_b,
      .trans_b = trans_a,
      .m = n,
      .n = m,
      .k = k,
      .a = b,
      .lda = ldb,
      .stride_a = stride_b,
      .b = a,
      .ldb = lda,
      .stride_b = stride_a,
      .ldc = ldc,
      .stride_c = stride_c,
  };
}
