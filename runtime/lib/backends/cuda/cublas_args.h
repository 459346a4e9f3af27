/* pprt_gemm's row-major operands as the column-major arguments of cuBLAS. */
#ifndef PPRT_CUBLAS_ARGS_H
#define PPRT_CUBLAS_ARGS_H

#include <stdint.h>

/* A row-major matrix is its transpose in column-major order, so row-major
   C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B as
   its A and A as its B, with m and n swapped. Pure, so it is tested
   without a GPU (runtime/test/cublas_args_test.c). */
typedef struct pprt_cublas_gemm_args {
  int32_t trans_a, trans_b; /* 1: cuBLAS's op is a transpose */
  int64_t m, n, k;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  int64_t ldc, stride_c;
} pprt_cublas_gemm_args;

pprt_cublas_gemm_args pprt_cublas_row_major(int32_t trans_a, int32_t trans_b,
                                            int64_t m, int64_t n, int64_t k,
                                            const void *a, int64_t lda,
                                            int64_t stride_a, const void *b,
                                            int64_t ldb, int64_t stride_b,
                                            int64_t ldc, int64_t stride_c);

#endif /* PPRT_CUBLAS_ARGS_H */
