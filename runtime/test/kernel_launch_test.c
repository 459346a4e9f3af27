/* The mgpu* ABI's host side (kernel_launch.h) against a fake driver: lazy
   module loading, function lookup, launch checks and the marshalling of
   gpu-to-llvm's arguments into cuLaunchKernel's, all without a GPU. */
#include "backends/cuda/kernel_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* What the fake driver saw. */
static struct {
  int loads, unloads, lookups;
  const void *loaded_image;
  int load_rc, lookup_rc, launch_rc;
  void *function, *stream, **params, **extra;
  uint32_t grid[3], block[3], shared;
} seen;

static int module_handle; /* its address is the fake CUmodule */
static int function_handle;

static int fake_load(void **module, const void *image) {
  ++seen.loads;
  seen.loaded_image = image;
  *module = seen.load_rc ? NULL : &module_handle;
  return seen.load_rc;
}

static int fake_unload(void *module) {
  EXPECT(module == &module_handle);
  ++seen.unloads;
  return 0;
}

static int fake_get_function(void **function, void *module, const char *name) {
  ++seen.lookups;
  EXPECT(module == &module_handle);
  *function = strcmp(name, "main_kernel") == 0 ? &function_handle : NULL;
  return *function ? seen.lookup_rc : 500; /* CUDA_ERROR_NOT_FOUND */
}

static int fake_launch(void *function, uint32_t gx, uint32_t gy, uint32_t gz,
                       uint32_t bx, uint32_t by, uint32_t bz, uint32_t shared,
                       void *stream, void **params, void **extra) {
  seen.function = function;
  seen.grid[0] = gx, seen.grid[1] = gy, seen.grid[2] = gz;
  seen.block[0] = bx, seen.block[1] = by, seen.block[2] = bz;
  seen.shared = shared;
  seen.stream = stream;
  seen.params = params;
  seen.extra = extra;
  return seen.launch_rc;
}

static const char *fake_error_name(int rc) {
  return rc == 500   ? "CUDA_ERROR_NOT_FOUND"
         : rc == 218 ? "CUDA_ERROR_INVALID_PTX"
                     : NULL;
}

static const pprt_kernel_driver fake = {
    fake_load, fake_unload, fake_get_function, fake_launch, fake_error_name};

/* Modules register before any device exists and load once, at their first
   lookup; a missing kernel names itself and the driver's reason. */
static void test_modules(void) {
  static const char image[] = "fake cubin";
  char err[256] = "";
  EXPECT(!pprt_kernel_modules_registered());
  pprt_kernel_module *m = pprt_kernel_module_register(image, sizeof image);
  EXPECT(m && pprt_kernel_modules_registered() && seen.loads == 0);
  EXPECT(pprt_kernel_function(&fake, m, "main_kernel", err, sizeof err) ==
         &function_handle);
  EXPECT(pprt_kernel_function(&fake, m, "main_kernel", err, sizeof err) ==
         &function_handle);
  EXPECT(seen.loads == 1 && seen.loaded_image == image && seen.lookups == 2);
  EXPECT(!pprt_kernel_function(&fake, m, "other", err, sizeof err));
  EXPECT(strstr(err, "'other'") && strstr(err, "CUDA_ERROR_NOT_FOUND"));
  pprt_kernel_module_release(m, &fake);
  EXPECT(seen.unloads == 1 && !pprt_kernel_modules_registered());

  /* A failed load is reported and retried at the next lookup. */
  m = pprt_kernel_module_register(image, sizeof image);
  seen.load_rc = 218;
  EXPECT(!pprt_kernel_function(&fake, m, "main_kernel", err, sizeof err));
  EXPECT(strstr(err, "cuModuleLoadData") && strstr(err, "11 bytes") &&
         strstr(err, "CUDA_ERROR_INVALID_PTX"));
  seen.load_rc = 0;
  EXPECT(pprt_kernel_function(&fake, m, "main_kernel", err, sizeof err));
  EXPECT(seen.loads == 3);
  /* Never loaded: release needs no driver. */
  pprt_kernel_module *unused = pprt_kernel_module_register(image, 1);
  pprt_kernel_module_release(unused, NULL);
  pprt_kernel_module_release(m, &fake);
  EXPECT(!pprt_kernel_function(&fake, NULL, "k", err, sizeof err));
}

/* gpu-to-llvm's launch of a kernel taking one memref<4x8xf32>: the params
   array holds a pointer to each of the descriptor's 7 fields, which reach
   cuLaunchKernel unchanged, with the extents as unsigned ints. */
static void test_marshalling(void) {
  float data[32];
  void *allocated = data, *aligned = data;
  int64_t offset = 0, sizes[2] = {4, 8}, strides[2] = {8, 1};
  void *params[] = {&allocated, &aligned,    &offset,    &sizes[0],
                    &sizes[1],  &strides[0], &strides[1]};
  const intptr_t grid[3] = {70000, 3, 2}, block[3] = {128, 2, 1};
  pprt_kernel_launch l;
  char err[256] = "";
  EXPECT(pprt_kernel_launch_check(grid, block, 64, params, NULL, 7, &l, err,
                                  sizeof err));
  EXPECT(l.params == params && l.num_params == 7 && l.shared_bytes == 64);
  int stream;
  EXPECT(pprt_kernel_launch_run(&fake, &function_handle, &l, &stream, err,
                                sizeof err));
  EXPECT(seen.function == &function_handle && seen.stream == &stream);
  EXPECT(seen.grid[0] == 70000 && seen.grid[1] == 3 && seen.grid[2] == 2);
  EXPECT(seen.block[0] == 128 && seen.block[1] == 2 && seen.block[2] == 1);
  EXPECT(seen.shared == 64 && seen.extra == NULL);
  EXPECT(seen.params == params && *(void **)seen.params[1] == data &&
         *(int64_t *)seen.params[4] == 8 && *(int64_t *)seen.params[5] == 8);

  seen.launch_rc = 500;
  EXPECT(!pprt_kernel_launch_run(&fake, &function_handle, &l, &stream, err,
                                 sizeof err));
  EXPECT(strstr(err, "grid 70000x3x2, block 128x2x1") &&
         strstr(err, "CUDA_ERROR_NOT_FOUND"));
  seen.launch_rc = 0;
}

static bool rejects(const intptr_t grid[3], const intptr_t block[3],
                    int64_t shared, void **params, void **extra, size_t n,
                    const char *reason) {
  pprt_kernel_launch l;
  char err[256] = "";
  bool ok = pprt_kernel_launch_check(grid, block, shared, params, extra, n, &l,
                                     err, sizeof err);
  if (!ok && strstr(err, reason))
    return true;
  fprintf(stderr, "expected '%s', got %s '%s'\n", reason,
          ok ? "success" : "error", err);
  return false;
}

/* Launches CUDA would reject, each with its reason. */
static void test_limits(void) {
  const intptr_t one[3] = {1, 1, 1};
  void *param = NULL, *params[] = {&param};
  EXPECT(rejects((intptr_t[]){0, 1, 1}, one, 0, params, NULL, 1,
                 "grid size x is 0; expected 1 to 2147483647"));
  EXPECT(rejects((intptr_t[]){1, 65536, 1}, one, 0, params, NULL, 1,
                 "grid size y is 65536"));
  EXPECT(rejects((intptr_t[]){(intptr_t)1 << 31, 1, 1}, one, 0, params, NULL, 1,
                 "grid size x is 2147483648"));
  EXPECT(rejects(one, (intptr_t[]){1, 1, 65}, 0, params, NULL, 1,
                 "block size z is 65; expected 1 to 64"));
  EXPECT(rejects(one, (intptr_t[]){64, 32, 1}, 0, params, NULL, 1,
                 "2048 threads per block; at most 1024"));
  EXPECT(rejects(one, one, -1, params, NULL, 1, "-1 bytes of shared memory"));
  EXPECT(rejects(one, one, 49153, params, NULL, 1, "49153 bytes"));
  EXPECT(rejects(one, one, 0, NULL, NULL, 2, "2 parameters but no"));
  EXPECT(rejects(one, one, 0, params, params, 1, "'extra'"));
  pprt_kernel_launch l;
  char err[256];
  EXPECT(pprt_kernel_launch_check(one, (intptr_t[]){1024, 1, 1}, 49152, NULL,
                                  NULL, 0, &l, err, sizeof err));
}

int main(void) {
  test_modules();
  test_marshalling();
  test_limits();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("kernel launch: all checks passed\n");
  return 0;
}
