/* Token datasets on disk (--tokens): flat uint16/uint32 ids or .npy. */
#ifndef PPRT_DRIVER_TOKEN_FILE_H
#define PPRT_DRIVER_TOKEN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* A file of `length` little-endian ids, `width` bytes each, read with
   pread into a private window (a mapping of a file truncated under it
   raises SIGBUS), and what identified it when it was opened: each refill
   checks that it is still that file. */
typedef struct pprt_token_file {
  uint64_t size;        /* bytes when opened */
  uint64_t data_offset; /* where the ids start (past an .npy header) */
  int64_t length;
  int width; /* 2 (uint16) or 4 (uint32) */
  const char *path;
  int fd; /* kept open to read and to see the file's size and time change */
  struct stat opened;
  uint8_t *window; /* bytes [window_start, window_start + window_bytes) */
  uint64_t window_start;
  size_t window_bytes;
  bool failed;   /* a read came short; `why` says how */
  char why[256]; /* without the path */
} pprt_token_file;

/* Opens `path`: an .npy by its name, else flat ids of `width` bytes. On
   failure writes why into `err` (without the path) and returns false; the
   file must still be closed. */
bool pprt_token_file_open(pprt_token_file *t, const char *path, int width,
                          char *err, size_t err_size);
void pprt_token_file_close(pprt_token_file *t);
/* False, with why in `err` (without the path), if a read came short or the
   file has changed since it was opened: another size (truncated),
   modification time (rewritten in place), or another file (or none) at
   its path. */
bool pprt_token_file_unchanged(const pprt_token_file *t, char *err,
                               size_t err_size);
/* The id at `i`; 0 once a read came short (`failed`), which the check
   after the reads reports before anything trains on it. */
uint32_t pprt_token_at(pprt_token_file *t, int64_t i);

#endif
