/* A small reader and writer of safetensors files (the format of PyTorch and
   Hugging Face weights), with no dependency on the rest of the runtime
   but the reading of regular files (input_file.h). */
#ifndef PPRT_SAFETENSORS_H
#define PPRT_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a over `n` bytes, continuing from `h` (PPRT_FNV_OFFSET to start):
   the checksum pprt's safetensors files record of their data. */
#define PPRT_FNV_OFFSET 0xCBF29CE484222325ull
uint64_t pprt_fnv1a(uint64_t h, const void *data, size_t n);

/*
 * Layout: an 8-byte little-endian header length N, N bytes of JSON
 *   {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [B, E]},
 *    ..., "__metadata__": {"KEY": "VALUE", ...}}
 * (padded with spaces), then the tensors' little-endian bytes; [B, E) is
 * relative to the end of the header.
 */

#define PPRT_ST_MAX_DIMS 8
/* The header size the reference implementation accepts at most. */
#define PPRT_ST_MAX_HEADER 100000000ull

/* One tensor of a file: name, safetensors dtype ("F32", ...), shape, and
   its bytes within the data section. */
typedef struct pprt_st_tensor {
  char *name;
  char dtype[8];
  int32_t ndims;
  int64_t dims[PPRT_ST_MAX_DIMS];
  uint64_t begin;
  uint64_t end;
} pprt_st_tensor;

/* A file read whole into memory. */
typedef struct pprt_safetensors {
  unsigned char *bytes; /* the file */
  size_t size;
  const unsigned char *data; /* the data section */
  uint64_t data_size;
  pprt_st_tensor *tensors; /* in header order */
  int32_t num_tensors;
  char **meta_keys; /* "__metadata__", in header order */
  char **meta_values;
  int32_t num_meta;
} pprt_safetensors;

/* Bytes per element of a safetensors dtype; 0 if it is not one. */
int64_t pprt_st_dtype_size(const char *dtype);

/* Parses a file image, taking ownership of `bytes` (malloc'ed); false,
   with the reason in `err`, if it is not valid. Call pprt_st_free after
   either outcome. */
bool pprt_st_parse(unsigned char *bytes, size_t size, pprt_safetensors *out,
                   char *err, size_t err_size);
/* Reads and parses `path`; the same contract. */
bool pprt_st_read(const char *path, pprt_safetensors *out, char *err,
                  size_t err_size);
const pprt_st_tensor *pprt_st_find(const pprt_safetensors *st,
                                   const char *name);
/* The "__metadata__" value of `key`, or NULL. */
const char *pprt_st_metadata(const pprt_safetensors *st, const char *key);
void pprt_st_free(pprt_safetensors *st);

/* A tensor to write: its bytes follow in pprt_st_writer_data calls, in
   the order of the entries. */
typedef struct pprt_st_entry {
  const char *name;
  const char *dtype;
  int32_t ndims;
  const int64_t *dims;
} pprt_st_entry;

/* Writes `path` atomically: into PATH.tmp, renamed over `path` on commit. */
typedef struct pprt_st_writer pprt_st_writer;

/* Creates PATH.tmp and writes the header of `entries` and of the metadata
   pairs (keys[i], values[i]); NULL, with the reason in `err`, on failure. */
pprt_st_writer *pprt_st_writer_begin(const char *path,
                                     const pprt_st_entry *entries, int32_t n,
                                     const char *const *keys,
                                     const char *const *values, int32_t nmeta,
                                     char *err, size_t err_size);
/* Appends tensor bytes. */
bool pprt_st_writer_data(pprt_st_writer *w, const void *data, size_t bytes,
                         char *err, size_t err_size);
/* On commit, keeps the file the new one replaces as `previous` (replacing
   that one): at every moment `path` or `previous` is a whole file. */
void pprt_st_writer_keep_previous(pprt_st_writer *w, const char *previous);
/* Checks that every tensor's bytes were written, flushes, fsyncs and
   renames the file into place, then fsyncs its directory so that the
   rename survives a crash; frees `w` either way. */
bool pprt_st_writer_commit(pprt_st_writer *w, char *err, size_t err_size);
/* Removes PATH.tmp and frees `w`. */
void pprt_st_writer_abort(pprt_st_writer *w);
/* Commits `w` if `ok`, else aborts it; returns whether the file was
   written. */
bool pprt_st_writer_finish(pprt_st_writer *w, bool ok, char *err,
                           size_t err_size);

#endif /* PPRT_SAFETENSORS_H */
