/* Token datasets (--tokens FILE): a flat binary of uint16 or uint32 ids,
   the layout nanoGPT and Megatron write, or a 1-D .npy of either. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#endif

#include "driver/token_file.h"
#include "driver/input_file.h"
#include "driver/npy.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*---- Pages lost under a read ----

   A file truncated between a refill's check and its reads takes pages
   away from the mapping, and reading one raises SIGBUS. The handler puts
   a page of zeros in their place and the read goes on; the check after
   the refill then finds the file changed and the run stops naming it. */

enum { MAX_MAPPINGS = 8 };
static struct {
  const uint8_t *start;
  size_t size;
} mappings[MAX_MAPPINGS];
static struct sigaction previous_sigbus;

/* Chains to the handler that was there before (MPI's, or the default,
   which ends the process). */
static void pass_sigbus_on(int sig, siginfo_t *info, void *context) {
  if (previous_sigbus.sa_flags & SA_SIGINFO) {
    previous_sigbus.sa_sigaction(sig, info, context);
    return;
  }
  if (previous_sigbus.sa_handler != SIG_DFL &&
      previous_sigbus.sa_handler != SIG_IGN) {
    previous_sigbus.sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL); /* the read faults again, and the process ends */
}

static void on_sigbus(int sig, siginfo_t *info, void *context) {
  const uint8_t *at = info->si_addr;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (int i = 0; i < MAX_MAPPINGS; ++i) {
    const uint8_t *start = mappings[i].start;
    if (!start || at < start || at >= start + mappings[i].size)
      continue;
    void *lost = (void *)((uintptr_t)at & ~(uintptr_t)(page - 1));
    if (mmap(lost, page, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1,
             0) != MAP_FAILED)
      return;
  }
  pass_sigbus_on(sig, info, context);
}

static void guard_mapping(const void *map, size_t size) {
  static bool installed;
  if (!installed) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    installed = sigaction(SIGBUS, &sa, &previous_sigbus) == 0;
  }
  for (int i = 0; i < MAX_MAPPINGS; ++i)
    if (!mappings[i].start) {
      mappings[i].size = size;
      mappings[i].start = map;
      return;
    }
}

static void unguard_mapping(const void *map) {
  for (int i = 0; i < MAX_MAPPINGS; ++i)
    if (mappings[i].start == map)
      mappings[i].start = NULL;
}

/* Reads the .npy header at the start of `bytes`: sets the token width and
   where the ids start, or says why the file is not a 1-D uint16/uint32
   array. */
static bool parse_npy(const uint8_t *bytes, size_t size, pprt_token_file *t,
                      char *err, size_t err_size) {
  pprt_npy npy;
  if (!pprt_npy_parse(bytes, size, &npy, err, err_size))
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
  t->tokens = bytes + npy.data_offset;
  t->length = npy.dims[0];
  return true;
}

bool pprt_token_file_open(pprt_token_file *t, const char *path, int width,
                          char *err, size_t err_size) {
  memset(t, 0, sizeof *t);
  t->fd = -1;
  uint64_t size = 0;
  int fd = pprt_open_input(path, &size, err, err_size);
  if (fd < 0)
    return false;
  if (size > SIZE_MAX || fstat(fd, &t->opened) != 0) {
    int e = errno;
    close(fd);
    return size > SIZE_MAX
               ? pprt_format_error(err, err_size,
                                   "%llu bytes do not fit in memory",
                                   (unsigned long long)size)
               : pprt_format_error(err, err_size, "cannot read: %s",
                                   strerror(e));
  }
  t->path = path;
  t->fd = fd;
  t->map_size = (size_t)size;
  void *map = t->map_size
                  ? mmap(NULL, t->map_size, PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  if (map == MAP_FAILED)
    return pprt_format_error(err, err_size, "%s",
                             t->map_size ? strerror(errno)
                                         : "the file is empty");
  t->map = map;
  guard_mapping(map, t->map_size);
  if (pprt_is_npy_path(path))
    return parse_npy(map, t->map_size, t, err, err_size);
  t->width = width;
  t->tokens = map;
  t->length = (int64_t)(t->map_size / (size_t)width);
  if (t->map_size % (size_t)width != 0)
    return pprt_format_error(err, err_size,
                             "%zu bytes is not a whole number of uint%d ids",
                             t->map_size, 8 * width);
  return true;
}

bool pprt_token_file_unchanged(const pprt_token_file *t, char *err,
                               size_t err_size) {
  struct stat now, at_path;
  const struct stat *was = &t->opened;
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
  if (t->map) {
    unguard_mapping(t->map);
    munmap(t->map, t->map_size);
  }
  if (t->path) /* a file that was opened */
    close(t->fd);
  memset(t, 0, sizeof *t);
}

uint32_t pprt_token_at(const pprt_token_file *t, int64_t i) {
  const uint8_t *p = t->tokens + (size_t)i * (size_t)t->width;
  if (t->width == 2) {
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
