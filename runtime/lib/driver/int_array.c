/* Integer arrays on disk (int_array.h): a flat binary of uint16 or uint32
   ids, the layout nanoGPT and Megatron write, or an .npy of integers. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* pread */
#endif

#include "driver/int_array.h"
#include "driver/input_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Elements are read a window at a time: a refill's rows are windows of
   consecutive tokens, and documents' lengths are read in order, so one
   read serves many. */
enum { WINDOW_BYTES = 64 << 10 };

/* Reads `want` bytes at `offset` into `out`; the count read, short only
   where the file ended or the read failed (errno then says why). */
static size_t read_at(int fd, uint8_t *out, size_t want, uint64_t offset) {
  size_t done = 0;
  while (done < want) {
    ssize_t n = pread(fd, out + done, want - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = 0;
      break;
    }
    done += (size_t)n;
  }
  return done;
}

/* Fills the window from byte `offset`: as much of the file as it holds,
   which must all be there. */
static bool read_window(pprt_int_array *a, uint64_t offset) {
  size_t want = (size_t)(a->size - offset < WINDOW_BYTES ? a->size - offset
                                                         : WINDOW_BYTES);
  a->window_start = offset;
  size_t got = read_at(a->fd, a->window, want, offset);
  int e = errno;
  a->window_bytes = got == want ? got : 0;
  if (got == want)
    return true;
  if (e != 0)
    pprt_format_error(a->why, sizeof a->why, "cannot read at byte %llu: %s",
                      (unsigned long long)offset, strerror(e));
  else if (pprt_int_array_unchanged(a, a->why, sizeof a->why))
    pprt_format_error(a->why, sizeof a->why,
                      "the file changed while training read it: it had %llu "
                      "bytes, but a read ended at byte %llu",
                      (unsigned long long)a->size,
                      (unsigned long long)(offset + got));
  a->failed = true;
  return false;
}

bool pprt_int_array_open(pprt_int_array *a, const char *path, char *err,
                         size_t err_size) {
  memset(a, 0, sizeof *a);
  a->fd = -1;
  uint64_t size = 0;
  int fd = pprt_open_input(path, &size, err, err_size);
  if (fd < 0)
    return false;
  if (fstat(fd, &a->opened) != 0) {
    int e = errno;
    close(fd);
    return pprt_format_error(err, err_size, "cannot read: %s", strerror(e));
  }
  a->path = path;
  a->fd = fd;
  a->size = size;
  a->window = malloc(WINDOW_BYTES);
  if (!a->window)
    return pprt_format_error(err, err_size, "out of memory");
  if (!read_window(a, 0))
    return pprt_format_error(err, err_size, "%s", a->why);
  return true;
}

/* The window holds the file's first bytes (all of a header numpy may
   write: at most 4,108), checked against the file's whole size. */
bool pprt_int_array_read_npy(pprt_int_array *a, char *err, size_t err_size) {
  return pprt_npy_parse(a->window, (size_t)a->size, &a->npy, err, err_size);
}

void pprt_int_array_read_flat(pprt_int_array *a, int width) {
  memset(&a->npy, 0, sizeof a->npy);
  snprintf(a->npy.descr, sizeof a->npy.descr, "<u%d", width);
  a->npy.itemsize = width;
  a->npy.ndims = 1;
  a->npy.dims[0] = a->npy.numel = (int64_t)(a->size / (uint64_t)width);
}

bool pprt_int_array_readable(const pprt_npy *npy) {
  const char *d = npy->descr;
  return (d[1] == 'i' || d[1] == 'u') &&
         (npy->itemsize == 2 || npy->itemsize == 4 || npy->itemsize == 8) &&
         d[0] != '>';
}

bool pprt_int_array_unchanged(const pprt_int_array *a, char *err,
                              size_t err_size) {
  struct stat now, at_path;
  const struct stat *was = &a->opened;
  if (a->failed)
    return pprt_format_error(err, err_size, "%s", a->why);
  if (fstat(a->fd, &now) != 0)
    return pprt_format_error(err, err_size, "cannot check the file: %s",
                             strerror(errno));
  if (now.st_size != was->st_size)
    return pprt_format_error(
        err, err_size,
        "the file changed while training read it: it had %lld "
        "bytes, now %lld",
        (long long)was->st_size, (long long)now.st_size);
  if (now.st_mtim.tv_sec != was->st_mtim.tv_sec ||
      now.st_mtim.tv_nsec != was->st_mtim.tv_nsec)
    return pprt_format_error(err, err_size,
                             "the file changed while training read it: it was "
                             "written to since the run opened it");
  if (stat(a->path, &at_path) != 0 || at_path.st_dev != was->st_dev ||
      at_path.st_ino != was->st_ino)
    return pprt_format_error(err, err_size,
                             "the file changed while training read it: it was "
                             "replaced or removed since the run opened it");
  return true;
}

void pprt_int_array_close(pprt_int_array *a) {
  if (a->path) /* a file that was opened */
    close(a->fd);
  free(a->window);
  memset(a, 0, sizeof *a);
}

int64_t pprt_int_array_at(pprt_int_array *a, int64_t i) {
  int64_t width = a->npy.itemsize;
  uint64_t at = a->npy.data_offset + (uint64_t)i * (uint64_t)width;
  bool inside = at >= a->window_start &&
                at - a->window_start + (uint64_t)width <= a->window_bytes;
  if (a->failed || (!inside && !read_window(a, at)))
    return 0;
  const uint8_t *p = a->window + (at - a->window_start);
  bool sign = a->npy.descr[1] == 'i';
  if (width == 2) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return sign ? (int64_t)(int16_t)v : (int64_t)v;
  }
  if (width == 4) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return sign ? (int64_t)(int32_t)v : (int64_t)v;
  }
  int64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
