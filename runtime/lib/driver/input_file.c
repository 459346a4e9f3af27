/* Regular input and output files, opened without blocking
   (input_file.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *pprt_file_kind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

int pprt_open_input(const char *path, uint64_t *size, char *err,
                    size_t err_size) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    snprintf(err, err_size, "cannot open: %s", strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    snprintf(err, err_size, "cannot read: %s", strerror(errno));
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, err_size, "cannot read: %s; only regular files are read",
             pprt_file_kind(st.st_mode));
    close(fd);
    return -1;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    snprintf(err, err_size, "cannot read: %s", strerror(errno));
    close(fd);
    return -1;
  }
  *size = (uint64_t)st.st_size;
  return fd;
}

FILE *pprt_open_output(const char *path, char *err, size_t err_size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY, 0666);
  int open_error = errno;
  struct stat st = {0};
  /* A FIFO without a reader fails open() here (ENXIO) rather than block;
     a directory fails with EISDIR, which says it. */
  bool special = fd >= 0 ? fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
                         : stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
                               !S_ISDIR(st.st_mode);
  if (special) {
    snprintf(err, err_size,
             "cannot write '%s': it is %s; outputs must be regular files", path,
             pprt_file_kind(st.st_mode));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  if (fd < 0) {
    snprintf(err, err_size, "cannot create '%s': %s", path,
             strerror(open_error));
    return NULL;
  }
  int flags = fcntl(fd, F_GETFL);
  FILE *f = flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 &&
                    ftruncate(fd, 0) == 0
                ? fdopen(fd, "w")
                : NULL;
  if (!f) {
    snprintf(err, err_size, "cannot write '%s': %s", path, strerror(errno));
    close(fd);
  }
  return f;
}

unsigned char *pprt_read_input(const char *path, size_t *size, char *err,
                               size_t err_size) {
  uint64_t bytes = 0;
  int fd = pprt_open_input(path, &bytes, err, err_size);
  if (fd < 0)
    return NULL;
  unsigned char *data = bytes < SIZE_MAX ? malloc((size_t)bytes + 1) : NULL;
  if (!data) {
    snprintf(err, err_size, "cannot read: out of memory for %llu bytes",
             (unsigned long long)bytes);
    close(fd);
    return NULL;
  }
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = read(fd, data + done, (size_t)bytes - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      snprintf(err, err_size, "cannot read: %s",
               n < 0 ? strerror(errno) : "the file shrank while read");
      free(data);
      close(fd);
      return NULL;
    }
    done += (size_t)n;
  }
  close(fd);
  data[done] = 0;
  *size = done;
  return data;
}

bool pprt_input_error(char *err, size_t err_size, const char *prefix,
                      const char *fmt, va_list ap) {
  int n = snprintf(err, err_size, "%s", prefix);
  if (n >= 0 && (size_t)n < err_size)
    vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
  return false;
}

bool pprt_format_error(char *err, size_t err_size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pprt_input_error(err, err_size, "", fmt, ap);
  va_end(ap);
  return false;
}
