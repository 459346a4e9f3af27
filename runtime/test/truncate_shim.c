/* LD_PRELOAD shim for pprt.inputs_changed: truncates a file right after
   the runtime's check of it has passed, between a refill's check and its
   reads, the moment a truncation used to cost the mapped file's pages.

   PPRT_TRUNCATE_PATH names the file, PPRT_TRUNCATE_AT_STAT the how-many'th
   stat() of that path (the identity checks around each refill) is followed
   by truncating it to PPRT_TRUNCATE_TO bytes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void maybe_truncate(const char *path) {
  static long calls;
  const char *target = getenv("PPRT_TRUNCATE_PATH");
  const char *at = getenv("PPRT_TRUNCATE_AT_STAT");
  const char *to = getenv("PPRT_TRUNCATE_TO");
  if (!target || !at || !to || strcmp(path, target) != 0)
    return;
  if (++calls == atol(at))
    (void)truncate(path, atol(to));
}

/* stat and stat64 (one symbol under two names in glibc, either of which
   a caller may bind), each after the real one. */
#define WRAP_STAT(name, stat_type)                                             \
  int name(const char *path, stat_type *st) {                                  \
    static int (*real)(const char *, stat_type *);                             \
    if (!real)                                                                 \
      real = (int (*)(const char *, stat_type *))dlsym(RTLD_NEXT, #name);      \
    int rc = real(path, st);                                                   \
    if (rc == 0)                                                               \
      maybe_truncate(path);                                                    \
    return rc;                                                                 \
  }

WRAP_STAT(stat, struct stat)
WRAP_STAT(stat64, struct stat64)
