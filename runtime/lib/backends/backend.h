/* The device-ops table: how the runtime core and driver reach buffer memory. */
#ifndef PPRT_BACKEND_H
#define PPRT_BACKEND_H

#include "backends/transport.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Buffer storage is "device memory": only the backend that allocated it,
 * the stage functions (between pprt_action_begin and pprt_action_end) and
 * the transport read or write it. The core and the driver hold device
 * pointers (offsets from them are device pointers too) and reach contents
 * only through these ops; data moves between host and device through host
 * staging. A CUDA backend implements the table with cudaMalloc,
 * cudaMemcpy, kernels and cuBLAS; see docs/Runtime.md.
 */
typedef struct pprt_backend pprt_backend;

/* One Adam update with the bias corrections of its step t already folded
   in: m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2,
   w -= step_size * m / (sqrt(v * v_scale) + eps). */
typedef struct pprt_adam_update {
  float beta1;
  float beta2;
  float eps;
  double step_size; /* lr / (1 - beta1^t) */
  double v_scale;   /* 1 / (1 - beta2^t) */
} pprt_adam_update;

typedef struct pprt_device_ops {
  const char *name;
  /* Zero-filled device memory; NULL when out of memory. */
  void *(*alloc)(pprt_backend *be, size_t bytes);
  void (*free)(pprt_backend *be, void *p);
  void (*copy_to_device)(pprt_backend *be, void *dst, const void *src,
                         size_t bytes);
  void (*copy_to_host)(pprt_backend *be, void *dst, const void *src,
                       size_t bytes);
  void (*zero)(pprt_backend *be, void *p, size_t bytes);
  /* dst[i] += src[i] for n f32 elements. */
  void (*accumulate_f32)(pprt_backend *be, void *dst, const void *src,
                         int64_t n);
  /* w -= lr * g for n f32 elements. */
  void (*sgd_f32)(pprt_backend *be, void *w, const void *g, int64_t n,
                  float lr);
  void (*adam_f32)(pprt_backend *be, void *w, const void *g, void *m, void *v,
                   int64_t n, const pprt_adam_update *u);
  float (*read_f32)(pprt_backend *be, const void *p);
  /* pprt_gemm's contract (pprt.h). */
  void (*gemm)(pprt_backend *be, int32_t ab_type, int32_t c_type,
               int32_t trans_a, int32_t trans_b, int64_t batch, int64_t m,
               int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
               int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
               float beta, void *c, int64_t ldc, int64_t stride_c);
  /* Bracket host code that touches device memory directly: a stage
     function's call (a CUDA backend would synchronise its stream). */
  void (*stage_begin)(pprt_backend *be);
  void (*stage_end)(pprt_backend *be);
  /* Returns a transport that may move this backend's memory (`t` itself
     when the plain transport can). */
  pprt_transport *(*wrap_transport)(pprt_backend *be, pprt_transport *t);
  void (*destroy)(pprt_backend *be);
} pprt_device_ops;

struct pprt_backend {
  const pprt_device_ops *ops;
};

/* Host memory through a BLAS: the linked OpenBLAS, or the library
   PPRT_BLAS=PATH names (NULL, with the reason in `err`, where it cannot be
   loaded); one BLAS thread per process until pprt_set_compute_threads says
   otherwise. With PPRT_GEMM_STATS set and a `world_rank` >= 0, destroying
   it writes its GEMMs' per-shape times. */
pprt_backend *pprt_cpu_backend_create(int32_t world_rank, char *err,
                                      size_t err_size);
/* The threads each of this process's host GEMMs, and its stage code's
   parallel loops where it has any, run on (n >= 1). */
void pprt_set_compute_threads(int n);
/* The CPU ops, for backends that compute like the CPU one. */
extern const pprt_device_ops pprt_cpu_device_ops;
/* Host memory that is inaccessible (PROT_NONE) outside the backend's own
   ops, stage functions and transport calls: proves the core never touches
   buffer contents. NULL, with the reason in `err`, as for the CPU
   backend. */
pprt_backend *pprt_guarded_backend_create(char *err, size_t err_size);
/* The guarded backend whose transport stages through host memory
   (pprt_staged_transport_create), so the inner transport never reaches
   the arena: tests the staging a GPU backend relies on. */
pprt_backend *pprt_guarded_staged_backend_create(char *err, size_t err_size);

/* One GPU per process (device: local rank modulo the device count); NULL
   with the reason in `err` when there is no usable device or driver, or
   when the runtime was built without CUDA. */
pprt_backend *pprt_cuda_backend_create(const pprt_transport *t, char *err,
                                       size_t err_size);

/* Host memory for staging buffers (pinned memory on GPUs). */
typedef struct pprt_host_memory {
  void *(*alloc)(void *ctx, size_t bytes);
  void (*free)(void *ctx, void *p);
  void *ctx;
} pprt_host_memory;

/* A transport that copies `be`'s memory to and from host buffers (with
   be's ops) around each transfer over `inner`, which only ever sees host
   memory; destroying it destroys `inner`. NULL when out of memory. */
pprt_transport *pprt_staged_transport_create(pprt_transport *inner,
                                             pprt_backend *be,
                                             const pprt_host_memory *host);

/* The backend named `name` ("cpu", "guarded", "guarded-staged" or
   "cuda"), for the process `t` runs in; NULL with the reason in `err` if
   it cannot be created. */
pprt_backend *pprt_backend_create(const char *name, const pprt_transport *t,
                                  char *err, size_t err_size);
/* Makes `be` the backend pprt_gemm computes on (the CPU one until then). */
void pprt_set_active_backend(pprt_backend *be);
/* The backend pprt_set_active_backend made active, or NULL. */
pprt_backend *pprt_active_backend(void);

#endif /* PPRT_BACKEND_H */
