/* Which OpenBLAS kernels the CPU backend's GEMMs run on.

   OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels from the
   CPU model when the library loads. The 0.3.21 of Debian 12 does not know
   recent Xeons (Sapphire and Emerald Rapids) and falls back to its generic
   SSE3 kernels, "Prescott", about 5x slower than its AVX-512 ones on these
   machines (bench/RESULTS.md). Newer OpenBLAS falls back by CPU features;
   pprt does the same before its first GEMM: it names the kernels in
   OPENBLAS_CORETYPE and has OpenBLAS choose again. A user's
   OPENBLAS_CORETYPE, or a choice other than the fallback, is left alone. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/cpu/blas_kernels.h"

#include <stdlib.h>
#include <string.h>

char *openblas_get_corename(void);
/* DYNAMIC_ARCH builds' kernel selection (OpenBLAS's driver/others/dynamic.c);
   weak, for builds without it. */
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));

const char *pprt_blas_kernels_for_cpu(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
#endif
  return NULL;
}

const char *pprt_blas_kernels(void) { return openblas_get_corename(); }

const char *pprt_choose_blas_kernels(void) {
  const char *wanted = pprt_blas_kernels_for_cpu();
  if (wanted && !getenv("OPENBLAS_CORETYPE") &&
      strcmp(pprt_blas_kernels(), "Prescott") == 0 && gotoblas_dynamic_init &&
      gotoblas_dynamic_quit) {
    setenv("OPENBLAS_CORETYPE", wanted, 0);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
  }
  return pprt_blas_kernels();
}
