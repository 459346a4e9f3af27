/* The header of an .npy file (npy.h): the one reader of --data's arrays
   and --tokens' ids. */
#include "driver/npy.h"
#include "driver/input_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Reads "'<f4'" (a byte order, a kind letter, a size in bytes) into
   npy->descr and npy->itemsize. */
static bool parse_descr(const char *s, pprt_npy *npy) {
  if (*s++ != '\'')
    return false;
  const char *end = strchr(s, '\'');
  size_t len = end ? (size_t)(end - s) : 0;
  if (len < 2 || len >= sizeof npy->descr)
    return false;
  memcpy(npy->descr, s, len);
  npy->descr[len] = '\0';
  const char *size = npy->descr;
  if (strchr("<>|=", *size))
    ++size;
  if (!(*size >= 'a' && *size <= 'z') && !(*size >= 'A' && *size <= 'Z'))
    return false;
  ++size;
  char *rest;
  errno = 0;
  long bytes = strtol(size, &rest, 10);
  if (rest == size || *rest != '\0' || errno != 0 || bytes < 1 || bytes > 64)
    return false;
  npy->itemsize = bytes;
  return true;
}

/* Reads "(d0, d1, ...)" into npy->dims: each a decimal that fits in 63
   bits; false if it is not such a tuple. */
static bool parse_shape(const char *s, pprt_npy *npy) {
  if (*s++ != '(')
    return false;
  npy->ndims = 0;
  for (;;) {
    while (*s == ' ' || *s == ',')
      ++s;
    if (*s == ')')
      return true;
    if (*s < '0' || *s > '9' || npy->ndims == PPRT_NPY_MAX_DIMS)
      return false;
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (errno != 0 || (*end != ',' && *end != ')' && *end != ' '))
      return false;
    npy->dims[npy->ndims++] = n;
    s = end;
  }
}

void pprt_npy_format_shape(const pprt_npy *npy, char *out, size_t size) {
  size_t n = (size_t)snprintf(out, size, "(");
  for (int32_t i = 0; i < npy->ndims && n < size; ++i)
    n += (size_t)snprintf(out + n, size - n, "%s%lld", i ? ", " : "",
                          (long long)npy->dims[i]);
  if (n < size)
    snprintf(out + n, size - n, npy->ndims == 1 ? ",)" : ")");
}

bool pprt_npy_parse(const uint8_t *bytes, size_t size, pprt_npy *npy, char *err,
                    size_t err_size) {
  memset(npy, 0, sizeof *npy);
  if (size < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
    return pprt_format_error(err, err_size,
                             "not an .npy file (no \\x93NUMPY magic)");
  int major = bytes[6];
  size_t len_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || size < 8 + len_bytes)
    return pprt_format_error(err, err_size, "unsupported .npy version %d",
                             major);
  size_t header_len = bytes[8] | (size_t)bytes[9] << 8;
  if (len_bytes == 4)
    header_len |= (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
  if (header_len > 4096 || 8 + len_bytes + header_len > size)
    return pprt_format_error(err, err_size, "truncated .npy header");
  char header[4097];
  memcpy(header, bytes + 8 + len_bytes, header_len);
  header[header_len] = '\0';
  const char *descr = npy_field(header, "descr");
  const char *order = npy_field(header, "fortran_order");
  const char *shape = npy_field(header, "shape");
  if (!descr || !order || !shape || !parse_descr(descr, npy) ||
      !parse_shape(shape, npy) ||
      (strncmp(order, "False", 5) != 0 && strncmp(order, "True", 4) != 0))
    return pprt_format_error(err, err_size, "malformed .npy header: %.200s",
                             header);
  npy->fortran_order = order[0] == 'T';
  npy->data_offset = 8 + len_bytes + header_len;
  /* The element and byte counts are products of numbers the file chose:
     each must fit before it is used for any address. */
  int64_t numel = 1, data_bytes;
  bool overflow = false;
  for (int32_t i = 0; i < npy->ndims && !overflow; ++i)
    overflow = __builtin_mul_overflow(numel, npy->dims[i], &numel);
  if (overflow || __builtin_mul_overflow(numel, npy->itemsize, &data_bytes)) {
    char dims[200];
    pprt_npy_format_shape(npy, dims, sizeof dims);
    return pprt_format_error(err, err_size,
                             "the shape %s has too many elements: their count "
                             "overflows 64 bits",
                             dims);
  }
  npy->numel = numel;
  if ((uint64_t)data_bytes > size - npy->data_offset)
    return pprt_format_error(
        err, err_size, "the header says %lld elements but the file holds %llu",
        (long long)numel,
        (unsigned long long)((size - npy->data_offset) /
                             (size_t)npy->itemsize));
  return true;
}

bool pprt_is_npy_path(const char *path) {
  size_t n = strlen(path);
  return n >= 4 && strcmp(path + n - 4, ".npy") == 0;
}
