/* The host side of MLIR's mgpu* kernel ABI without CUDA headers: embedded
   kernel modules loaded on first use, and launches checked and marshalled
   for the driver's cuLaunchKernel. */
#ifndef PPRT_KERNEL_LAUNCH_H
#define PPRT_KERNEL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The driver calls kernels need, as CUresult-returning functions on opaque
   handles (CUmodule, CUfunction, CUstream): the CUDA backend fills it from
   the driver; tests fill it with fakes, so this logic runs without a GPU
   (runtime/test/kernel_launch_test.c). */
typedef struct pprt_kernel_driver {
  int (*module_load_data)(void **module, const void *image);
  int (*module_unload)(void *module);
  int (*module_get_function)(void **function, void *module, const char *name);
  int (*launch_kernel)(void *function, uint32_t grid_x, uint32_t grid_y,
                       uint32_t grid_z, uint32_t block_x, uint32_t block_y,
                       uint32_t block_z, uint32_t shared_bytes, void *stream,
                       void **params, void **extra);
  /* The driver's name for an error code (NULL: unknown). */
  const char *(*error_name)(int rc);
} pprt_kernel_driver;

/* A `gpu.binary`'s image, registered by mgpuModuleLoad from a global
   constructor (before main, so before any device exists) and loaded into
   the driver at its first function lookup. */
typedef struct pprt_kernel_module {
  const void *image;
  size_t size;
  void *loaded; /* the driver's module once loaded, else NULL */
  struct pprt_kernel_module *next;
} pprt_kernel_module;

/* Registers `image`; NULL when out of memory. */
pprt_kernel_module *pprt_kernel_module_register(const void *image, size_t size);
/* Unloads `m` if it was loaded (with `driver`, which may then be NULL if it
   was not) and forgets it. */
void pprt_kernel_module_release(pprt_kernel_module *m,
                                const pprt_kernel_driver *driver);
/* Whether the program registered kernels: then it needs --backend cuda. */
bool pprt_kernel_modules_registered(void);

/* The kernel `name` of `m`, loading `m` first; NULL with the reason in
   `err`. */
void *pprt_kernel_function(const pprt_kernel_driver *driver,
                           pprt_kernel_module *m, const char *name, char *err,
                           size_t err_size);

/* One mgpuLaunchKernel's arguments as cuLaunchKernel takes them. */
typedef struct pprt_kernel_launch {
  uint32_t grid[3], block[3];
  uint32_t shared_bytes;
  /* gpu-to-llvm's array of pointers to each argument, passed through. */
  void **params;
  size_t num_params;
} pprt_kernel_launch;

/* Checks and converts mgpuLaunchKernel's arguments: every extent at least
   1 and within CUDA's limits (grid x < 2^31, y and z <= 65535, at most 1024
   threads and 48 KiB of shared memory per block), a params array when
   there are parameters, no `extra` (gpu-to-llvm never passes one). False
   with the reason in `err`. */
bool pprt_kernel_launch_check(const intptr_t grid[3], const intptr_t block[3],
                              int64_t shared_bytes, void **params, void **extra,
                              size_t num_params, pprt_kernel_launch *out,
                              char *err, size_t err_size);

/* Launches `function` as `launch` says on `stream`; false with the
   driver's reason in `err`. */
bool pprt_kernel_launch_run(const pprt_kernel_driver *driver, void *function,
                            const pprt_kernel_launch *launch, void *stream,
                            char *err, size_t err_size);

#endif /* PPRT_KERNEL_LAUNCH_H */
