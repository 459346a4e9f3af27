/* The mgpu* entry points MLIR's gpu-to-llvm lowering calls (kernel
   modules, launches, streams, events, memory), over the CUDA backend's
   device and stream; modelled on MLIR's CudaRuntimeWrappers.cpp. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernel_launch.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * Every stream gpu-to-llvm creates is the backend's one stream, so kernels,
 * cuBLAS GEMMs and copies run in program order; synchronous launches wait
 * on it before host code continues. Module images register before main
 * (from global constructors) and load on the device at their first kernel
 * lookup, once the backend has opened it.
 */

static _Noreturn void mgpu_fatal(const char *what, const char *detail) {
  int32_t rank = -1;
  cudaStream_t stream;
  if (pprt_cuda_active_stream(&rank, &stream))
    fprintf(stderr, "pprt: rank %d: cuda backend: %s: %s\n", rank, what,
            detail);
  else
    fprintf(stderr, "pprt: %s: %s\n", what, detail);
  fflush(stderr);
  abort();
}

static void check(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess)
    mgpu_fatal(what, cudaGetErrorString(rc));
}

/* The backend's stream; GPU code runs only under --backend cuda. */
static cudaStream_t active_stream(const char *what) {
  int32_t rank;
  cudaStream_t stream;
  if (!pprt_cuda_active_stream(&rank, &stream))
    mgpu_fatal(what, "GPU code (pp-compile --target=cuda) runs only under "
                     "--backend cuda");
  return stream;
}

/* The driver entry points, fetched through the runtime (which already
   found the driver), so programs do not link libcuda. */
static struct {
  bool ready;
  CUresult (*module_load_data)(CUmodule *, const void *);
  CUresult (*module_unload)(CUmodule);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, unsigned, CUstream, void **,
                            void **);
  CUresult (*get_error_name)(CUresult, const char **);
} cu;

static void *entry_point(const char *symbol) {
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult found;
  cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000,
                                                    cudaEnableDefault, &found);
  if (rc != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn)
    mgpu_fatal(symbol, rc != cudaSuccess ? cudaGetErrorString(rc)
                                         : "not found in the CUDA driver");
  return fn;
}

static int load_data(void **module, const void *image) {
  return cu.module_load_data((CUmodule *)module, image);
}

static int unload(void *module) { return cu.module_unload(module); }

static int get_function(void **function, void *module, const char *name) {
  return cu.module_get_function((CUfunction *)function, module, name);
}

static int launch(void *function, uint32_t gx, uint32_t gy, uint32_t gz,
                  uint32_t bx, uint32_t by, uint32_t bz, uint32_t shared,
                  void *stream, void **params, void **extra) {
  return cu.launch_kernel(function, gx, gy, gz, bx, by, bz, shared, stream,
                          params, extra);
}

static const char *error_name(int rc) {
  const char *name = NULL;
  return cu.get_error_name((CUresult)rc, &name) == CUDA_SUCCESS ? name : NULL;
}

static const pprt_kernel_driver *driver(void) {
  static const pprt_kernel_driver table = {load_data, unload, get_function,
                                           launch, error_name};
  if (!cu.ready) {
    cu.module_load_data = entry_point("cuModuleLoadData");
    cu.module_unload = entry_point("cuModuleUnload");
    cu.module_get_function = entry_point("cuModuleGetFunction");
    cu.launch_kernel = entry_point("cuLaunchKernel");
    cu.get_error_name = entry_point("cuGetErrorName");
    cu.ready = true;
  }
  return &table;
}

void *mgpuModuleLoad(void *data, size_t size) {
  pprt_kernel_module *m = pprt_kernel_module_register(data, size);
  if (!m)
    mgpu_fatal("mgpuModuleLoad", "out of memory");
  return m;
}

void mgpuModuleUnload(void *module) {
  /* At exit the backend (and maybe the context) is gone: just forget it. */
  pprt_kernel_module_release(module, NULL);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  (void)active_stream("mgpuModuleGetFunction");
  char err[256];
  void *fn = pprt_kernel_function(driver(), module, name, err, sizeof err);
  if (!fn)
    mgpu_fatal("mgpuModuleGetFunction", err);
  return fn;
}

void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t shared_bytes, void *stream,
                      void **params, void **extra, size_t num_params) {
  const intptr_t grid[3] = {grid_x, grid_y, grid_z};
  const intptr_t block[3] = {block_x, block_y, block_z};
  pprt_kernel_launch l;
  char err[256];
  if (!pprt_kernel_launch_check(grid, block, shared_bytes, params, extra,
                                num_params, &l, err, sizeof err) ||
      !pprt_kernel_launch_run(driver(), function, &l, stream, err, sizeof err))
    mgpu_fatal("mgpuLaunchKernel", err);
}

void *mgpuStreamCreate(void) { return active_stream("mgpuStreamCreate"); }

void mgpuStreamDestroy(void *stream) { (void)stream; }

void mgpuStreamSynchronize(void *stream) {
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  check(cudaStreamWaitEvent(stream, event, 0), "cudaStreamWaitEvent");
}

void *mgpuEventCreate(void) {
  cudaEvent_t event = NULL;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
        "cudaEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  check(cudaEventDestroy(event), "cudaEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  check(cudaEventSynchronize(event), "cudaEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  check(cudaEventRecord(event, stream), "cudaEventRecord");
}

/*
 * Stage code allocates the same temporaries on every call, and
 * cudaMallocManaged and cudaFree are slow (cudaFree synchronises the
 * device), so freed blocks are kept for reuse by an allocation of the same
 * size and kind. Reuse is safe because all GPU work is on one stream.
 */
typedef struct mgpu_block {
  void *ptr;
  uint64_t bytes;
  bool managed;
  bool free;
} mgpu_block;

static mgpu_block *blocks;
static size_t num_blocks, cap_blocks;

static mgpu_block *find_block(void *ptr) {
  for (size_t i = 0; i < num_blocks; ++i)
    if (blocks[i].ptr == ptr)
      return &blocks[i];
  return NULL;
}

static mgpu_block *reuse_block(uint64_t bytes, bool managed) {
  for (size_t i = 0; i < num_blocks; ++i)
    if (blocks[i].free && blocks[i].bytes == bytes &&
        blocks[i].managed == managed)
      return &blocks[i];
  return NULL;
}

static mgpu_block *add_block(void) {
  if (num_blocks == cap_blocks) {
    size_t cap = cap_blocks ? 2 * cap_blocks : 64;
    mgpu_block *grown = realloc(blocks, cap * sizeof *grown);
    if (!grown)
      mgpu_fatal("mgpuMemAlloc", "out of host memory");
    blocks = grown;
    cap_blocks = cap;
  }
  return &blocks[num_blocks++];
}

void *mgpuMemAlloc(uint64_t bytes, void *stream, bool host_shared) {
  (void)stream;
  (void)active_stream("mgpuMemAlloc");
  mgpu_block *b = reuse_block(bytes, host_shared);
  if (b) {
    b->free = false;
    return b->ptr;
  }
  void *ptr = NULL;
  size_t n = bytes ? bytes : 1;
  check(host_shared ? cudaMallocManaged(&ptr, n, cudaMemAttachGlobal)
                    : cudaMalloc(&ptr, n),
        host_shared ? "cudaMallocManaged" : "cudaMalloc");
  b = add_block();
  *b = (mgpu_block){ptr, bytes, host_shared, false};
  return ptr;
}

void mgpuMemFree(void *ptr, void *stream) {
  (void)stream;
  mgpu_block *b = find_block(ptr);
  if (!b || b->free)
    mgpu_fatal("mgpuMemFree", "not a live mgpuMemAlloc block");
  b->free = true;
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
        "cudaMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  static CUresult (*set)(CUdeviceptr, unsigned int, size_t, CUstream);
  if (!set)
    set = entry_point("cuMemsetD32Async");
  if (set((CUdeviceptr)dst, value, count, stream) != CUDA_SUCCESS)
    mgpu_fatal("mgpuMemset32", "cuMemsetD32Async failed");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  static CUresult (*set)(CUdeviceptr, unsigned short, size_t, CUstream);
  if (!set)
    set = entry_point("cuMemsetD16Async");
  if (set((CUdeviceptr)dst, value, count, stream) != CUDA_SUCCESS)
    mgpu_fatal("mgpuMemset16", "cuMemsetD16Async failed");
}

void mgpuSetDefaultDevice(int32_t device) {
  /* The backend chose this process's device (local rank modulo count). */
  (void)device;
}
