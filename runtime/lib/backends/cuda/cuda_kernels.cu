// The accumulate, SGD and Adam kernels; the same arithmetic as the CPU
// backend's loops (cpu_backend.c), so both give the same updates.
#include "backends/cuda/cuda_kernels.h"

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096; // grid-stride beyond this

int blocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return (int)(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

__global__ void accumulate(float *dst, const float *src, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] += src[i];
}

__global__ void sgd(float *w, const float *g, int64_t n, float lr) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    w[i] -= lr * g[i];
}

__global__ void adam(float *w, const float *g, float *m, float *v, int64_t n,
                     float beta1, float beta2, float eps, double stepSize,
                     double vScale) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    float gi = g[i];
    float mi = beta1 * m[i] + (1.0f - beta1) * gi;
    float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] -= (float)(stepSize * mi / (sqrt(vi * vScale) + eps));
  }
}

} // namespace

extern "C" cudaError_t pprt_cuda_accumulate_f32(cudaStream_t stream, float *dst,
                                                const float *src, int64_t n) {
  if (n <= 0)
    return cudaSuccess;
  accumulate<<<blocksFor(n), kThreads, 0, stream>>>(dst, src, n);
  return cudaGetLastError();
}

extern "C" cudaError_t pprt_cuda_sgd_f32(cudaStream_t stream, float *w,
                                         const float *g, int64_t n, float lr) {
  if (n <= 0)
    return cudaSuccess;
  sgd<<<blocksFor(n), kThreads, 0, stream>>>(w, g, n, lr);
  return cudaGetLastError();
}

extern "C" cudaError_t pprt_cuda_adam_f32(cudaStream_t stream, float *w,
                                          const float *g, float *m, float *v,
                                          int64_t n, float beta1, float beta2,
                                          float eps, double step_size,
                                          double v_scale) {
  if (n <= 0)
    return cudaSuccess;
  adam<<<blocksFor(n), kThreads, 0, stream>>>(w, g, m, v, n, beta1, beta2, eps,
                                              step_size, v_scale);
  return cudaGetLastError();
}
