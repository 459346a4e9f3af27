/* Token datasets on disk (--tokens): flat uint16/uint32 ids or .npy. */
#ifndef PPRT_DRIVER_TOKEN_FILE_H
#define PPRT_DRIVER_TOKEN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* A memory-mapped file of `length` little-endian ids, `width` bytes each,
   and what identified it when it was opened: a mapping reads whatever the
   file holds now, so each refill checks that it is still that file. */
typedef struct pprt_token_file {
  void *map;
  size_t map_size;
  const uint8_t *tokens;
  int64_t length;
  int width; /* 2 (uint16) or 4 (uint32) */
  const char *path;
  int fd; /* kept open to see the file's size and time change */
  struct stat opened;
} pprt_token_file;

/* Maps `path`: an .npy by its name, else flat ids of `width` bytes. On
   failure writes why into `err` (without the path) and returns false; the
   file must still be closed. */
bool pprt_token_file_open(pprt_token_file *t, const char *path, int width,
                          char *err, size_t err_size);
void pprt_token_file_close(pprt_token_file *t);
/* False, with why in `err` (without the path), if the file has changed
   since it was opened: another size (truncated: reading the lost pages
   would raise SIGBUS) or modification time (rewritten in place), or
   another file (or none) at its path. */
bool pprt_token_file_unchanged(const pprt_token_file *t, char *err,
                               size_t err_size);
uint32_t pprt_token_at(const pprt_token_file *t, int64_t i);

#endif
