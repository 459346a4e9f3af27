/* Backend selection and pprt_gemm's dispatch to the process's backend. */
#include "backends/backend.h"
#include "pprt/pprt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pprt_backend *active;

pprt_backend *pprt_backend_create(const char *name, const pprt_transport *t,
                                  char *err, size_t err_size) {
  if (strcmp(name, "cpu") == 0)
    return pprt_cpu_backend_create(t->world_rank, err, err_size);
  if (strcmp(name, "guarded") == 0)
    return pprt_guarded_backend_create(err, err_size);
  if (strcmp(name, "guarded-staged") == 0)
    return pprt_guarded_staged_backend_create(err, err_size);
  if (strcmp(name, "cuda") == 0)
    return pprt_cuda_backend_create(t, err, err_size);
  snprintf(err, err_size, "unknown backend");
  return NULL;
}

#ifndef PPRT_HAVE_CUDA
pprt_backend *pprt_cuda_backend_create(const pprt_transport *t, char *err,
                                       size_t err_size) {
  (void)t;
  snprintf(err, err_size,
           "this runtime was built without CUDA (no CUDA toolkit found when "
           "it was configured; see docs/Runtime.md)");
  return NULL;
}
#endif

void pprt_set_active_backend(pprt_backend *be) { active = be; }

pprt_backend *pprt_active_backend(void) { return active; }

void pprt_gemm(int32_t ab_type, int32_t c_type, int32_t trans_a,
               int32_t trans_b, int64_t batch, int64_t m, int64_t n, int64_t k,
               float alpha, const void *a, int64_t lda, int64_t stride_a,
               const void *b, int64_t ldb, int64_t stride_b, float beta,
               void *c, int64_t ldc, int64_t stride_c) {
  /* Programs with their own main() (unit tests) compute on the CPU. */
  if (!active) {
    char err[512];
    active = pprt_cpu_backend_create(-1, err, sizeof err);
    if (!active) {
      fprintf(stderr, "pprt: pprt_gemm: %s\n", err);
      exit(1);
    }
  }
  active->ops->gemm(active, ab_type, c_type, trans_a, trans_b, batch, m, n, k,
                    alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                    stride_c);
}
