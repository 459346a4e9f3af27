/* The BLAS library the CPU backend's GEMMs run on: the linked OpenBLAS, or
   one that PPRT_BLAS names, loaded at run time (docs/Runtime.md). */
#ifndef PPRT_BACKENDS_CPU_BLAS_LIBRARY_H
#define PPRT_BACKENDS_CPU_BLAS_LIBRARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cblas_sgemm, row-major only; the CBLAS enums are ints
   (CblasRowMajor 101, CblasNoTrans 111, CblasTrans 112). */
typedef void pprt_sgemm_fn(int layout, int trans_a, int trans_b, int m, int n,
                           int k, float alpha, const float *a, int lda,
                           const float *b, int ldb, float beta, float *c,
                           int ldc);
/* MKL's cblas_sgemm_batch_strided (its LP64 interface, the default):
   `batch` products whose operands lie `stride_*` elements apart. */
typedef void pprt_sgemm_batch_strided_fn(int layout, int trans_a, int trans_b,
                                         int m, int n, int k, float alpha,
                                         const float *a, int lda, int stride_a,
                                         const float *b, int ldb, int stride_b,
                                         float beta, float *c, int ldc,
                                         int stride_c, int batch);

typedef struct pprt_blas {
  pprt_sgemm_fn *sgemm;
  /* NULL where the library has no strided batch. */
  pprt_sgemm_batch_strided_fn *sgemm_batch_strided;
  /* The library's thread count, by int (OpenBLAS, MKL) or by int64_t
     (BLIS's dim_t); both NULL where pprt does not know how. */
  void (*set_threads)(int);
  void (*set_threads_wide)(int64_t);
} pprt_blas;

/* The OpenBLAS the runtime links. */
pprt_blas pprt_blas_linked(void);

/* The library at `path` (dlopen): false, with the reason in `why`, where it
   cannot be loaded or has no cblas_sgemm. Before its first GEMM it runs one
   thread unless its own variable (OPENBLAS_NUM_THREADS, MKL_NUM_THREADS,
   BLIS_NUM_THREADS) says otherwise. */
bool pprt_blas_open(const char *path, pprt_blas *blas, char *why,
                    size_t why_size);

/* Has `blas` compute on `n` threads (nothing where it cannot be told). */
void pprt_blas_set_threads(const pprt_blas *blas, int n);

/* `batch` row-major products C = alpha op(A) op(B) + beta C, operands
   `stride_*` elements apart: one batched call where the library has it. */
void pprt_blas_sgemm_strided(const pprt_blas *blas, bool trans_a, bool trans_b,
                             int64_t batch, int m, int n, int k, float alpha,
                             const float *a, int lda, int64_t stride_a,
                             const float *b, int ldb, int64_t stride_b,
                             float beta, float *c, int ldc, int64_t stride_c);

#endif
