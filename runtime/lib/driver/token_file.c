/* Token datasets (--tokens FILE): a flat binary of uint16 or uint32 ids,
   the layout nanoGPT and Megatron write, or a 1-D .npy of either. */
#include "driver/token_file.h"
#include "driver/input_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static bool token_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool token_error(char *err, size_t err_size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_size, fmt, ap);
  va_end(ap);
  return false;
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The value text after `'key':` in an .npy header dict, or NULL. */
static const char *npy_field(const char *header, const char *key) {
  char quoted[32];
  snprintf(quoted, sizeof quoted, "'%s':", key);
  const char *at = strstr(header, quoted);
  if (!at)
    return NULL;
  at += strlen(quoted);
  while (*at == ' ')
    ++at;
  return at;
}

/* Parses the .npy header at the start of `bytes`: sets the token width and
   where the ids start, or says why the file is not a 1-D uint16/uint32
   array. */
static bool parse_npy(const uint8_t *bytes, size_t size, pprt_token_file *t,
                      char *err, size_t err_size) {
  if (size < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
    return token_error(err, err_size, "not an .npy file (no \\x93NUMPY magic)");
  int major = bytes[6];
  size_t len_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || size < 8 + len_bytes)
    return token_error(err, err_size, "unsupported .npy version %d", major);
  size_t header_len = bytes[8] | (size_t)bytes[9] << 8;
  if (len_bytes == 4)
    header_len |= (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
  size_t start = 8 + len_bytes + header_len;
  if (start > size || header_len > 4096)
    return token_error(err, err_size, "truncated .npy header");
  char header[4097];
  memcpy(header, bytes + 8 + len_bytes, header_len);
  header[header_len] = '\0';
  const char *descr = npy_field(header, "descr");
  const char *order = npy_field(header, "fortran_order");
  const char *shape = npy_field(header, "shape");
  if (!descr || !order || !shape)
    return token_error(err, err_size, "malformed .npy header: %s", header);
  if (strncmp(descr, "'<u2'", 5) == 0 || strncmp(descr, "'|u2'", 5) == 0)
    t->width = 2;
  else if (strncmp(descr, "'<u4'", 5) == 0)
    t->width = 4;
  else {
    const char *end = strchr(descr + 1, '\'');
    int len = end ? (int)(end - descr + 1) : 8;
    return token_error(err, err_size,
                       "the array's dtype is %.*s; token ids must be uint16 "
                       "('<u2') or uint32 ('<u4')",
                       len < 16 ? len : 16, descr);
  }
  long long n = 0;
  char rest[8] = "";
  if (strncmp(order, "False", 5) != 0 ||
      sscanf(shape, "(%lld,%7[)]", &n, rest) != 2)
    return token_error(err, err_size,
                       "the array must be 1-D (shape (N,)), not %.40s", shape);
  t->tokens = bytes + start;
  t->length = (int64_t)n;
  if ((size - start) / (size_t)t->width < (size_t)n)
    return token_error(err, err_size,
                       "the header says %lld ids but the file holds %zu", n,
                       (size - start) / (size_t)t->width);
  return true;
}

bool pprt_token_file_open(pprt_token_file *t, const char *path, int width,
                          char *err, size_t err_size) {
  memset(t, 0, sizeof *t);
  uint64_t size = 0;
  int fd = pprt_open_input(path, &size, err, err_size);
  if (fd < 0)
    return false;
  if (size > SIZE_MAX) {
    close(fd);
    return token_error(err, err_size, "%llu bytes do not fit in memory",
                       (unsigned long long)size);
  }
  t->map_size = (size_t)size;
  void *map = t->map_size
                  ? mmap(NULL, t->map_size, PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  int e = errno;
  close(fd);
  if (map == MAP_FAILED)
    return token_error(err, err_size, "%s",
                       t->map_size ? strerror(e) : "the file is empty");
  t->map = map;
  if (has_suffix(path, ".npy"))
    return parse_npy(map, t->map_size, t, err, err_size);
  t->width = width;
  t->tokens = map;
  t->length = (int64_t)(t->map_size / (size_t)width);
  if (t->map_size % (size_t)width != 0)
    return token_error(err, err_size,
                       "%zu bytes is not a whole number of uint%d ids",
                       t->map_size, 8 * width);
  return true;
}

void pprt_token_file_close(pprt_token_file *t) {
  if (t->map)
    munmap(t->map, t->map_size);
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
