/* Embedded kernel modules and launch marshalling for the mgpu* ABI
   (kernel_launch.h); no CUDA headers, so it is built and tested
   everywhere. */
#include "backends/cuda/kernel_launch.h"

#include <stdio.h>
#include <stdlib.h>

static pprt_kernel_module *modules;

pprt_kernel_module *pprt_kernel_module_register(const void *image,
                                                size_t size) {
  pprt_kernel_module *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->image = image;
  m->size = size;
  m->next = modules;
  modules = m;
  return m;
}

void pprt_kernel_module_release(pprt_kernel_module *m,
                                const pprt_kernel_driver *driver) {
  if (!m)
    return;
  for (pprt_kernel_module **p = &modules; *p; p = &(*p)->next)
    if (*p == m) {
      *p = m->next;
      break;
    }
  if (m->loaded && driver)
    driver->module_unload(m->loaded);
  free(m);
}

bool pprt_kernel_modules_registered(void) { return modules != NULL; }

static const char *error_name(const pprt_kernel_driver *driver, int rc) {
  const char *name = driver->error_name ? driver->error_name(rc) : NULL;
  return name ? name : "unknown error";
}

void *pprt_kernel_function(const pprt_kernel_driver *driver,
                           pprt_kernel_module *m, const char *name, char *err,
                           size_t err_size) {
  if (!m) {
    snprintf(err, err_size, "kernel '%s': its module was never loaded", name);
    return NULL;
  }
  int rc;
  if (!m->loaded && (rc = driver->module_load_data(&m->loaded, m->image))) {
    m->loaded = NULL;
    snprintf(err, err_size,
             "cuModuleLoadData of the program's kernels (%zu bytes): %s",
             m->size, error_name(driver, rc));
    return NULL;
  }
  void *function = NULL;
  if ((rc = driver->module_get_function(&function, m->loaded, name))) {
    snprintf(err, err_size, "cuModuleGetFunction '%s': %s", name,
             error_name(driver, rc));
    return NULL;
  }
  return function;
}

/* CUDA's limits on every GPU since compute capability 3.0. */
static const intptr_t max_grid[3] = {2147483647, 65535, 65535};
static const intptr_t max_block[3] = {1024, 1024, 64};
enum { max_block_threads = 1024, max_static_shared = 48 * 1024 };

static bool check_extents(const char *what, const intptr_t dims[3],
                          const intptr_t max[3], uint32_t out[3], char *err,
                          size_t err_size) {
  for (int i = 0; i < 3; ++i) {
    if (dims[i] < 1 || dims[i] > max[i]) {
      snprintf(err, err_size, "%s %c is %lld; expected 1 to %lld", what,
               "xyz"[i], (long long)dims[i], (long long)max[i]);
      return false;
    }
    out[i] = (uint32_t)dims[i];
  }
  return true;
}

bool pprt_kernel_launch_check(const intptr_t grid[3], const intptr_t block[3],
                              int64_t shared_bytes, void **params, void **extra,
                              size_t num_params, pprt_kernel_launch *out,
                              char *err, size_t err_size) {
  if (!check_extents("grid size", grid, max_grid, out->grid, err, err_size) ||
      !check_extents("block size", block, max_block, out->block, err, err_size))
    return false;
  uint64_t threads = (uint64_t)out->block[0] * out->block[1] * out->block[2];
  if (threads > max_block_threads) {
    snprintf(err, err_size, "%llu threads per block; at most %d",
             (unsigned long long)threads, max_block_threads);
    return false;
  }
  if (shared_bytes < 0 || shared_bytes > max_static_shared) {
    snprintf(err, err_size, "%lld bytes of shared memory; expected 0 to %d",
             (long long)shared_bytes, max_static_shared);
    return false;
  }
  if (num_params > 0 && !params) {
    snprintf(err, err_size, "%zu parameters but no parameter array",
             num_params);
    return false;
  }
  if (extra) {
    snprintf(err, err_size, "an 'extra' argument array is not supported");
    return false;
  }
  out->shared_bytes = (uint32_t)shared_bytes;
  out->params = params;
  out->num_params = num_params;
  return true;
}

bool pprt_kernel_launch_run(const pprt_kernel_driver *driver, void *function,
                            const pprt_kernel_launch *launch, void *stream,
                            char *err, size_t err_size) {
  int rc = driver->launch_kernel(
      function, launch->grid[0], launch->grid[1], launch->grid[2],
      launch->block[0], launch->block[1], launch->block[2],
      launch->shared_bytes, stream, launch->params, NULL);
  if (rc) {
    snprintf(
        err, err_size, "cuLaunchKernel (grid %ux%ux%u, block %ux%ux%u): %s",
        launch->grid[0], launch->grid[1], launch->grid[2], launch->block[0],
        launch->block[1], launch->block[2], error_name(driver, rc));
    return false;
  }
  return true;
}
