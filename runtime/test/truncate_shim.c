/* LD_PRELOAD shim for pprt.inputs_changed: truncates a file right after
   the runtime's check of it has passed, between a refill's check and its
   reads, the moment a truncation used to cost the mapped file's pages.

   PPRT_TRUNCATE_PATH names the file, PPRT_TRUNCATE_AT_STAT the how-many'th
   stat() of that path (the identity check before each refill) is followed
   by truncating it to PPRT_TRUNCATE_TO bytes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*stat_fn)(const char *, struct stat *);

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

int stat(const char *path, struct stat *st) {
  static stat_fn real;
  if (!real)
    real = (stat_fn)dlsym(RTLD_NEXT, "stat");
  int rc = real(path, st);
  if (rc == 0)
    maybe_truncate(path);
  return rc;
}

int stat64(const char *path, struct stat64 *st) {
  typedef int (*stat64_fn)(const char *, struct stat64 *);
  static stat64_fn real;
  if (!real)
    real = (stat64_fn)dlsym(RTLD_NEXT, "stat64");
  int rc = real(path, st);
  if (rc == 0)
    maybe_truncate(path);
  return rc;
}
