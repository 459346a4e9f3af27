/* Token datasets (--tokens FILE): a flat binary of uint16 or uint32 ids,
   the layout nanoGPT and Megatron write, or a 1-D .npy of either. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* pread */
#endif

#include "driver/token_file.h"
#include "driver/input_file.h"
#include "driver/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Ids are read a window at a time: a refill's rows are windows of
   consecutive tokens, so one read serves many. */
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

/* Reads the .npy header of the file's first `header_size` bytes (all of
   a header numpy may write: at most 4,108 bytes), checking its shape
   against the file's whole size: sets the token width and where the ids
   start, or says why the file is not a 1-D uint16/uint32 array. */
static bool parse_npy(const uint8_t *header, pprt_token_file *t, char *err,
                      size_t err_size) {
  pprt_npy npy;
  if (!pprt_npy_parse(header, (size_t)t->size, &npy, err, err_size))
    return false;
  if (strcmp(npy.descr, "<u2") == 0 || strcmp(npy.descr, "|u2") == 0)
    t->width = 2;
  else if (strcmp(npy.descr, "<u4") == 0)
    t->width = 4;
  else
    return pprt_format_error(
        err, err_size,
        "the array's dtype is '%s'; token ids must be uint16 "
        "('<u2') or uint32 ('<u4')",
        npy.descr);
  if (npy.fortran_order || npy.ndims != 1) {
    char shape[200];
    pprt_npy_format_shape(&npy, shape, sizeof shape);
    return pprt_format_error(
        err, err_size, "the array must be 1-D (shape (N,)), not %s", shape);
  }
  t->data_offset = npy.data_offset;
  t->length = npy.dims[0];
  return true;
}

/* Fills the window from byte `offset`: as much of the file as it holds,
   which must all be there. */
static bool read_window(pprt_token_file *t, uint64_t offset) {
  size_t want = (size_t)(t->size - offset < WINDOW_BYTES ? t->size - offset
                                                         : WINDOW_BYTES);
  t->window_start = offset;
  size_t got = read_at(t->fd, t->window, want, offset);
  int e = errno;
  t->window_bytes = got == want ? got : 0;
  if (got == want)
    return true;
  if (e != 0)
    pprt_format_error(t->why, sizeof t->why, "cannot read at byte %llu: %s",
                      (unsigned long long)offset, strerror(e));
  else if (pprt_token_file_unchanged(t, t->why, sizeof t->why))
    pprt_format_error(t->why, sizeof t->why,
                      "the file changed while training read it: it had %llu "
                      "bytes, but a read ended at byte %llu",
                      (unsigned long long)t->size,
                      (unsigned long long)(offset + got));
  t->failed = true;
  return false;
}

bool pprt_token_file_open(pprt_token_file *t, const char *path, int width,
                          char *err, size_t err_size) {
  memset(t, 0, sizeof *t);
  t->fd = -1;
  uint64_t size = 0;
  int fd = pprt_open_input(path, &size, err, err_size);
  if (fd < 0)
    return false;
  if (fstat(fd, &t->opened) != 0) {
    int e = errno;
    close(fd);
    return pprt_format_error(err, err_size, "cannot read: %s", strerror(e));
  }
  t->path = path;
  t->fd = fd;
  t->size = size;
  t->window = malloc(WINDOW_BYTES);
  if (!t->window)
    return pprt_format_error(err, err_size, "out of memory");
  if (size == 0)
    return pprt_format_error(err, err_size, "the file is empty");
  if (!read_window(t, 0))
    return pprt_format_error(err, err_size, "%s", t->why);
  if (pprt_is_npy_path(path))
    return parse_npy(t->window, t, err, err_size);
  t->width = width;
  t->length = (int64_t)(size / (uint64_t)width);
  if (size % (uint64_t)width != 0)
    return pprt_format_error(err, err_size,
                             "%llu bytes is not a whole number of uint%d ids",
                             (unsigned long long)size, 8 * width);
  return true;
}

bool pprt_token_file_unchanged(const pprt_token_file *t, char *err,
                               size_t err_size) {
  struct stat now, at_path;
  const struct stat *was = &t->opened;
  if (t->failed)
    return pprt_format_error(err, err_size, "%s", t->why);
  if (fstat(t->fd, &now) != 0)
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
  if (stat(t->path, &at_path) != 0 || at_path.st_dev != was->st_dev ||
      at_path.st_ino != was->st_ino)
    return pprt_format_error(err, err_size,
                             "the file changed while training read it: it was "
                             "replaced or removed since the run opened it");
  return true;
}

void pprt_token_file_close(pprt_token_file *t) {
  if (t->path) /* a file that was opened */
    close(t->fd);
  free(t->window);
  memset(t, 0, sizeof *t);
}

uint32_t pprt_token_at(pprt_token_file *t, int64_t i) {
  uint64_t at = t->data_offset + (uint64_t)i * (uint64_t)t->width;
  bool inside = at >= t->window_start &&
                at - t->window_start + (uint64_t)t->width <= t->window_bytes;
  if (t->failed || (!inside && !read_window(t, at)))
    return 0;
  const uint8_t *p = t->window + (at - t->window_start);
  if (t->width == 2) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
