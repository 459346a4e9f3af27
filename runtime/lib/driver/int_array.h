/* Integer arrays on disk, read through a window: --tokens' ids (flat
   uint16/uint32 or .npy) and --sample-lengths' document lengths (.npy). */
#ifndef PPRT_DRIVER_INT_ARRAY_H
#define PPRT_DRIVER_INT_ARRAY_H

#include "driver/npy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* A file of integers as `npy` describes them (width and signedness from
   its descr), read with pread into a private window (a mapping of a file
   truncated under it raises SIGBUS), and what identified it when it was
   opened: each refill checks that it is still that file. */
typedef struct pprt_int_array {
  pprt_npy npy;  /* an .npy's header, or flat ids described as one */
  uint64_t size; /* bytes when opened */
  const char *path;
  int fd; /* kept open to read and to see the file's size and time change */
  struct stat opened;
  uint8_t *window; /* bytes [window_start, window_start + window_bytes) */
  uint64_t window_start;
  size_t window_bytes;
  bool failed;   /* a read came short; `why` says how */
  char why[256]; /* without the path */
} pprt_int_array;

/* Opens `path` and reads its first bytes, for the header, which
   pprt_int_array_read_npy or pprt_int_array_read_flat then reads. On
   failure writes why into `err` (without the path) and returns false; the
   array must still be closed. */
bool pprt_int_array_open(pprt_int_array *a, const char *path, char *err,
                         size_t err_size);
/* Describes the array by the file's .npy header; false, with why in `err`,
   if it is not one. */
bool pprt_int_array_read_npy(pprt_int_array *a, char *err, size_t err_size);
/* Describes the file as flat little-endian unsigned ids of `width` bytes
   (2 or 4): a 1-D "<u2" or "<u4" array of the whole ids it holds. */
void pprt_int_array_read_flat(pprt_int_array *a, int width);
/* Whether pprt_int_array_at decodes `npy`'s elements: little-endian
   integers ('i' or 'u') of 2, 4 or 8 bytes. */
bool pprt_int_array_readable(const pprt_npy *npy);
void pprt_int_array_close(pprt_int_array *a);
/* False, with why in `err` (without the path), if a read came short or the
   file has changed since it was opened: another size (truncated),
   modification time (rewritten in place), or another file (or none) at
   its path. */
bool pprt_int_array_unchanged(const pprt_int_array *a, char *err,
                              size_t err_size);
/* Element `i` (a uint64 past 2^63 - 1 reads as negative); 0 once a read
   came short (`failed`), which the reader reports before anything uses
   it. */
int64_t pprt_int_array_at(pprt_int_array *a, int64_t i);

#endif
