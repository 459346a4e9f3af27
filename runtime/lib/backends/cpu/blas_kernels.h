/* The OpenBLAS kernels of the CPU backend (blas_kernels.c says why pprt
   chooses them). */
#ifndef PPRT_BACKENDS_CPU_BLAS_KERNELS_H
#define PPRT_BACKENDS_CPU_BLAS_KERNELS_H

/* The OPENBLAS_CORETYPE this CPU's features call for, or NULL to leave the
   choice to OpenBLAS. */
const char *pprt_blas_kernels_for_cpu(void);

/* The kernels OpenBLAS runs on (its core name, e.g. "SkylakeX"). */
const char *pprt_blas_kernels(void);

/* Before the first GEMM: where OpenBLAS fell back to its generic kernels on
   a CPU it does not know, has it run the ones the CPU's features call for.
   Returns the kernels OpenBLAS then runs on. */
const char *pprt_choose_blas_kernels(void);

#endif
