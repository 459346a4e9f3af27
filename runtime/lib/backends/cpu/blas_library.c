/* Which BLAS library the CPU backend calls: the linked OpenBLAS, or one a
   user names in PPRT_BLAS (MKL, BLIS, another OpenBLAS), resolved through
   dlopen so that the choice needs no rebuild (bench/blas_choice.py measures
   them). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/cpu/blas_library.h"

#include <cblas.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

/* The linked OpenBLAS's sgemm through the common signature: its enums are
   ints, its blasint is int (not an ILP64 build). */
static void linked_sgemm(int layout, int trans_a, int trans_b, int m, int n,
                         int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c,
                         int ldc) {
  cblas_sgemm((enum CBLAS_ORDER)layout, (enum CBLAS_TRANSPOSE)trans_a,
              (enum CBLAS_TRANSPOSE)trans_b, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

pprt_blas pprt_blas_linked(void) {
  return (pprt_blas){.sgemm = linked_sgemm,
                     .set_threads = openblas_set_num_threads};
}

/* The thread setters pprt knows, with each library's own variable. */
static const struct {
  const char *symbol, *variable;
  bool wide;
} thread_setters[] = {
    {"openblas_set_num_threads", "OPENBLAS_NUM_THREADS", false},
    {"MKL_Set_Num_Threads", "MKL_NUM_THREADS", false},
    {"bli_thread_set_num_threads", "BLIS_NUM_THREADS", true},
};

/* pprt passes ints: MKL's single library (libmkl_rt) is put on its 32-bit
   integer interface, whatever MKL_INTERFACE_LAYER says. Its first call
   fixes the interface: false where code before pprt chose the 64-bit one. */
static bool has_int_interface(void *library) {
  int (*set_layer)(int) =
      (int (*)(int))dlsym(library, "MKL_Set_Interface_Layer");
  enum { MKL_INTERFACE_LP64 = 0, MKL_INTERFACE_ILP64 = 1 };
  return !set_layer || !(set_layer(MKL_INTERFACE_LP64) & MKL_INTERFACE_ILP64);
}

bool pprt_blas_open(const char *path, pprt_blas *blas, char *why,
                    size_t why_size) {
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(why, why_size, "cannot load '%s': %s", path, dlerror());
    return false;
  }
  *blas = (pprt_blas){0};
  /* POSIX makes dlsym's pointers convertible to function pointers. */
  blas->sgemm = (pprt_sgemm_fn *)dlsym(library, "cblas_sgemm");
  if (!blas->sgemm)
    snprintf(why, why_size, "'%s' has no cblas_sgemm", path);
  else if (!has_int_interface(library))
    snprintf(why, why_size,
             "'%s' already runs MKL's 64-bit integer interface; pprt "
             "calls the 32-bit one",
             path);
  else
    why = NULL;
  if (why) {
    dlclose(library);
    return false;
  }
  blas->sgemm_batch_strided = (pprt_sgemm_batch_strided_fn *)dlsym(
      library, "cblas_sgemm_batch_strided");
  for (size_t i = 0; i < sizeof thread_setters / sizeof *thread_setters; ++i) {
    void *set = dlsym(library, thread_setters[i].symbol);
    if (!set)
      continue;
    if (thread_setters[i].wide)
      blas->set_threads_wide = (void (*)(int64_t))set;
    else
      blas->set_threads = (void (*)(int))set;
    if (!getenv(thread_setters[i].variable))
      pprt_blas_set_threads(blas, 1);
    break;
  }
  return true;
}

void pprt_blas_set_threads(const pprt_blas *blas, int n) {
  if (blas->set_threads)
    blas->set_threads(n);
  if (blas->set_threads_wide)
    blas->set_threads_wide(n);
}

static bool fits_int(int64_t x) { return x >= 0 && x <= INT_MAX; }

void pprt_blas_sgemm_strided(const pprt_blas *blas, bool trans_a, bool trans_b,
                             int64_t batch, int m, int n, int k, float alpha,
                             const float *a, int lda, int64_t stride_a,
                             const float *b, int ldb, int64_t stride_b,
                             float beta, float *c, int ldc, int64_t stride_c) {
  int ta = trans_a ? TRANS : NO_TRANS, tb = trans_b ? TRANS : NO_TRANS;
  if (batch > 1 && blas->sgemm_batch_strided && fits_int(batch) &&
      fits_int(stride_a) && fits_int(stride_b) && fits_int(stride_c)) {
    blas->sgemm_batch_strided(ROW_MAJOR, ta, tb, m, n, k, alpha, a, lda,
                              (int)stride_a, b, ldb, (int)stride_b, beta, c,
                              ldc, (int)stride_c, (int)batch);
    return;
  }
  for (int64_t p = 0; p < batch; ++p)
    blas->sgemm(ROW_MAJOR, ta, tb, m, n, k, alpha, a + p * stride_a, lda,
                b + p * stride_b, ldb, beta, c + p * stride_c, ldc);
}
