/* What the CUDA backend shares with the rest of its directory. */
#ifndef PPRT_CUDA_BACKEND_H
#define PPRT_CUDA_BACKEND_H

#include "backends/backend.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>

/* The rank and stream of the active backend when it is the CUDA one (the
   mgpu* entry points order kernels and copies on that stream); false
   otherwise. */
bool pprt_cuda_active_stream(int32_t *rank, cudaStream_t *stream);

#endif /* PPRT_CUDA_BACKEND_H */
