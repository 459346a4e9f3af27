/* The CUDA backend's elementwise kernels, launched from C. */
#ifndef PPRT_CUDA_KERNELS_H
#define PPRT_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each launches on `stream` and returns the launch's error. */
cudaError_t pprt_cuda_accumulate_f32(cudaStream_t stream, float *dst,
                                     const float *src, int64_t n);
cudaError_t pprt_cuda_sgd_f32(cudaStream_t stream, float *w, const float *g,
                              int64_t n, float lr);
cudaError_t pprt_cuda_adam_f32(cudaStream_t stream, float *w, const float *g,
                               float *m, float *v, int64_t n, float beta1,
                               float beta2, float eps, double step_size,
                               double v_scale);

#ifdef __cplusplus
}
#endif

#endif /* PPRT_CUDA_KERNELS_H */
