/* The header of an .npy file (numpy.save), read for --data and --tokens. */
#ifndef PPRT_DRIVER_NPY_H
#define PPRT_DRIVER_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PPRT_NPY_MAX_DIMS 8

/* What an .npy header declares, every field bounded: the shape's element
   count and byte count fit in 63 bits and lie inside the file. */
typedef struct pprt_npy {
  char descr[16];   /* the dtype as written, without quotes: "<f4" */
  int64_t itemsize; /* bytes per element, from the descr */
  bool fortran_order;
  int32_t ndims;
  int64_t dims[PPRT_NPY_MAX_DIMS];
  int64_t numel;
  size_t data_offset; /* where element 0 starts */
} pprt_npy;

/* Reads the header of the .npy image `bytes` of `size` bytes into `npy`.
   False, with the reason (without the path) in `err`, if it is not an
   .npy header, a field is malformed or out of range, or the file holds
   fewer elements than the shape says. */
bool pprt_npy_parse(const uint8_t *bytes, size_t size, pprt_npy *npy, char *err,
                    size_t err_size);

/* The shape as numpy prints it: "(3, 4)", "(5,)". */
void pprt_npy_format_shape(const pprt_npy *npy, char *out, size_t size);

/* Whether `path` names an .npy file (by its suffix). */
bool pprt_is_npy_path(const char *path);

#endif
