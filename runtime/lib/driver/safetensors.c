/* Reads and writes safetensors files (safetensors.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver/safetensors.h"
#include "driver/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
  const char *name;
  int64_t size;
} dtypes[] = {{"F64", 8},  {"F32", 4},     {"F16", 2},    {"BF16", 2},
              {"I64", 8},  {"I32", 4},     {"I16", 2},    {"I8", 1},
              {"U64", 8},  {"U32", 4},     {"U16", 2},    {"U8", 1},
              {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};

int64_t pprt_st_dtype_size(const char *dtype) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; ++i)
    if (strcmp(dtype, dtypes[i].name) == 0)
      return dtypes[i].size;
  return 0;
}

/* ---- Reading: a JSON parser for the header's subset (objects, strings,
   non-negative integers, arrays of them). ---- */

typedef struct cursor {
  const char *begin, *p, *end;
  char *err;
  size_t err_size;
} cursor;

static bool syntax_error(cursor *c, const char *what) {
  return pprt_format_error(c->err, c->err_size, "bad header: %s at byte %zu",
                           what, (size_t)(c->p - c->begin));
}

static void skip_space(cursor *c) {
  while (c->p < c->end &&
         (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    ++c->p;
}

/* Consumes `ch` after optional white space. */
static bool eat(cursor *c, char ch) {
  skip_space(c);
  if (c->p >= c->end || *c->p != ch)
    return false;
  ++c->p;
  return true;
}

static bool expect(cursor *c, char ch) {
  char what[32];
  snprintf(what, sizeof what, "expected '%c'", ch);
  return eat(c, ch) || syntax_error(c, what);
}

static int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* Reads the 4 hex digits of a \u escape. */
static bool parse_hex4(cursor *c, uint32_t *out) {
  if (c->end - c->p < 4)
    return syntax_error(c, "truncated \\u escape");
  *out = 0;
  for (int i = 0; i < 4; ++i) {
    int d = hex_digit(*c->p++);
    if (d < 0)
      return syntax_error(c, "bad \\u escape");
    *out = *out << 4 | (uint32_t)d;
  }
  return true;
}

/* The code point of a \u escape (the "\u" consumed), joining a surrogate
   pair. */
static bool parse_unicode_escape(cursor *c, uint32_t *cp) {
  if (!parse_hex4(c, cp))
    return false;
  if (*cp >= 0xDC00 && *cp <= 0xDFFF)
    return syntax_error(c, "lone low surrogate");
  if (*cp < 0xD800 || *cp > 0xDBFF)
    return true;
  uint32_t low;
  if (c->end - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u')
    return syntax_error(c, "lone high surrogate");
  c->p += 2;
  if (!parse_hex4(c, &low))
    return false;
  if (low < 0xDC00 || low > 0xDFFF)
    return syntax_error(c, "bad surrogate pair");
  *cp = 0x10000 + ((*cp - 0xD800) << 10) + (low - 0xDC00);
  return true;
}

static size_t put_utf8(char *out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | cp >> 18);
  out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* One character of a string body (the cursor is on it) into `out`. */
static bool parse_char(cursor *c, char *out, size_t *len) {
  unsigned char ch = (unsigned char)*c->p++;
  if (ch < 0x20)
    return syntax_error(c, "control character in string");
  if (ch != '\\') {
    out[(*len)++] = (char)ch;
    return true;
  }
  if (c->p >= c->end)
    return syntax_error(c, "unterminated string");
  char e = *c->p++;
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *k = strchr(from, e);
  if (k && e) {
    out[(*len)++] = to[k - from];
    return true;
  }
  uint32_t cp;
  if (e != 'u' || !parse_unicode_escape(c, &cp))
    return e == 'u' ? false : syntax_error(c, "bad escape");
  *len += put_utf8(out + *len, cp);
  return true;
}

/* A string into malloc'ed `*out`. Escapes never decode longer than they
   are written, so the body's length bounds the result. */
static bool parse_string(cursor *c, char **out) {
  if (!expect(c, '"'))
    return false;
  const char *q = c->p;
  while (q < c->end && *q != '"')
    q += *q == '\\' && q + 1 < c->end ? 2 : 1;
  if (q >= c->end)
    return syntax_error(c, "unterminated string");
  char *s = malloc((size_t)(q - c->p) + 1);
  if (!s)
    return pprt_format_error(c->err, c->err_size, "out of memory");
  size_t len = 0;
  while (c->p < q)
    if (!parse_char(c, s, &len)) {
      free(s);
      return false;
    }
  ++c->p;
  s[len] = '\0';
  if (strlen(s) != len) {
    free(s);
    return syntax_error(c, "NUL character in string");
  }
  *out = s;
  return true;
}

/* A JSON integer >= 0 that fits in 63 bits. */
static bool parse_count(cursor *c, uint64_t *out) {
  skip_space(c);
  if (c->p >= c->end || *c->p < '0' || *c->p > '9')
    return syntax_error(c, "expected a non-negative integer");
  if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9')
    return syntax_error(c, "leading zero in integer");
  uint64_t v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    if (v > ((uint64_t)INT64_MAX - 9) / 10)
      return syntax_error(c, "integer too large");
    v = v * 10 + (uint64_t)(*c->p++ - '0');
  }
  if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'))
    return syntax_error(c, "expected an integer");
  *out = v;
  return true;
}

/* [n, n, ...] of at most `max` integers. */
static bool parse_counts(cursor *c, uint64_t *vals, int32_t max, int32_t *n) {
  *n = 0;
  if (!expect(c, '['))
    return false;
  if (eat(c, ']'))
    return true;
  do {
    if (*n == max)
      return syntax_error(c, "too many integers in array");
    if (!parse_count(c, &vals[(*n)++]))
      return false;
  } while (eat(c, ','));
  return expect(c, ']');
}

/* Appends one metadata pair, taking ownership of both strings. */
static bool add_metadata(cursor *c, pprt_safetensors *st, char *key,
                         char *value) {
  size_t n = (size_t)st->num_meta + 1;
  char **keys = realloc(st->meta_keys, n * sizeof *keys);
  if (keys)
    st->meta_keys = keys;
  char **values = keys ? realloc(st->meta_values, n * sizeof *values) : NULL;
  if (!values) {
    free(key);
    free(value);
    return pprt_format_error(c->err, c->err_size, "out of memory");
  }
  st->meta_values = values;
  keys[st->num_meta] = key;
  values[st->num_meta++] = value;
  return true;
}

/* The "__metadata__" object: string values only. */
static bool parse_metadata(cursor *c, pprt_safetensors *st) {
  if (!expect(c, '{'))
    return false;
  if (eat(c, '}'))
    return true;
  do {
    char *key = NULL, *value = NULL;
    if (!parse_string(c, &key) || !expect(c, ':') || !parse_string(c, &value)) {
      free(key);
      free(value);
      return false;
    }
    if (pprt_st_metadata(st, key)) {
      pprt_format_error(c->err, c->err_size,
                        "bad header: duplicate metadata key '%s'", key);
      free(key);
      free(value);
      return false;
    }
    if (!add_metadata(c, st, key, value))
      return false;
  } while (eat(c, ','));
  return expect(c, '}');
}

/* Which of a tensor's three fields have been seen. */
enum { SEEN_DTYPE = 1, SEEN_SHAPE = 2, SEEN_OFFSETS = 4 };

static bool parse_field(cursor *c, pprt_st_tensor *t, int *seen) {
  char *key = NULL;
  if (!parse_string(c, &key) || !expect(c, ':')) {
    free(key);
    return false;
  }
  int bit = strcmp(key, "dtype") == 0          ? SEEN_DTYPE
            : strcmp(key, "shape") == 0        ? SEEN_SHAPE
            : strcmp(key, "data_offsets") == 0 ? SEEN_OFFSETS
                                               : 0;
  if (!bit || (*seen & bit)) {
    pprt_format_error(c->err, c->err_size,
                      "bad header: tensor '%s': %s field '%s'", t->name,
                      bit ? "duplicate" : "unknown", key);
    free(key);
    return false;
  }
  free(key);
  *seen |= bit;
  if (bit == SEEN_DTYPE) {
    char *dtype = NULL;
    if (!parse_string(c, &dtype))
      return false;
    bool known = pprt_st_dtype_size(dtype) > 0;
    if (known)
      snprintf(t->dtype, sizeof t->dtype, "%s", dtype);
    else
      pprt_format_error(c->err, c->err_size,
                        "bad header: tensor '%s': unknown dtype '%s'", t->name,
                        dtype);
    free(dtype);
    return known;
  }
  uint64_t vals[PPRT_ST_MAX_DIMS];
  int32_t n;
  if (!parse_counts(c, vals, bit == SEEN_SHAPE ? PPRT_ST_MAX_DIMS : 2, &n))
    return false;
  if (bit == SEEN_SHAPE) {
    t->ndims = n;
    for (int32_t i = 0; i < n; ++i)
      t->dims[i] = (int64_t)vals[i];
    return true;
  }
  if (n != 2)
    return pprt_format_error(
        c->err, c->err_size,
        "bad header: tensor '%s': data_offsets needs 2 integers", t->name);
  t->begin = vals[0];
  t->end = vals[1];
  return true;
}

static bool parse_tensor(cursor *c, pprt_st_tensor *t) {
  int seen = 0;
  if (!expect(c, '{'))
    return false;
  if (!eat(c, '}')) {
    do
      if (!parse_field(c, t, &seen))
        return false;
    while (eat(c, ','));
    if (!expect(c, '}'))
      return false;
  }
  if (seen != (SEEN_DTYPE | SEEN_SHAPE | SEEN_OFFSETS))
    return pprt_format_error(
        c->err, c->err_size,
        "bad header: tensor '%s' needs dtype, shape and data_offsets", t->name);
  return true;
}

/* Appends one "name": value entry of the top-level object. */
static bool parse_entry(cursor *c, pprt_safetensors *st, int32_t *cap,
                        bool *seen_meta) {
  char *name = NULL;
  if (!parse_string(c, &name) || !expect(c, ':')) {
    free(name);
    return false;
  }
  if (strcmp(name, "__metadata__") == 0) {
    free(name);
    if (*seen_meta)
      return syntax_error(c, "duplicate __metadata__");
    *seen_meta = true;
    return parse_metadata(c, st);
  }
  if (pprt_st_find(st, name)) {
    pprt_format_error(c->err, c->err_size, "bad header: duplicate tensor '%s'",
                      name);
    free(name);
    return false;
  }
  if (st->num_tensors == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    pprt_st_tensor *grown = realloc(st->tensors, (size_t)*cap * sizeof *grown);
    if (!grown) {
      free(name);
      return pprt_format_error(c->err, c->err_size, "out of memory");
    }
    st->tensors = grown;
  }
  pprt_st_tensor *t = &st->tensors[st->num_tensors++];
  memset(t, 0, sizeof *t);
  t->name = name;
  return parse_tensor(c, t);
}

static bool parse_header(cursor *c, pprt_safetensors *st) {
  bool seen_meta = false;
  int32_t cap = 0;
  if (!expect(c, '{'))
    return false;
  if (!eat(c, '}')) {
    do
      if (!parse_entry(c, st, &cap, &seen_meta))
        return false;
    while (eat(c, ','));
    if (!expect(c, '}'))
      return false;
  }
  skip_space(c);
  return c->p == c->end || syntax_error(c, "trailing characters");
}

/* The byte count of a tensor's shape and dtype, or false on overflow. */
static bool tensor_bytes(const pprt_st_tensor *t, uint64_t *bytes) {
  uint64_t n = (uint64_t)pprt_st_dtype_size(t->dtype);
  for (int32_t i = 0; i < t->ndims; ++i) {
    uint64_t d = (uint64_t)t->dims[i];
    if (d && n > (uint64_t)INT64_MAX / d)
      return false;
    n *= d;
  }
  *bytes = n;
  return true;
}

/* By data_offsets: begin, then end (empty tensors before the one they
   start). */
static int compare_offsets(const void *a, const void *b) {
  const pprt_st_tensor *x = *(const pprt_st_tensor *const *)a;
  const pprt_st_tensor *y = *(const pprt_st_tensor *const *)b;
  if (x->begin != y->begin)
    return (x->begin > y->begin) - (x->begin < y->begin);
  return (x->end > y->end) - (x->end < y->end);
}

/* Each tensor's offsets lie within the data and match its shape. */
static bool check_extents(const pprt_safetensors *st, char *err,
                          size_t err_size) {
  for (int32_t i = 0; i < st->num_tensors; ++i) {
    const pprt_st_tensor *t = &st->tensors[i];
    uint64_t bytes;
    if (t->begin > t->end || t->end > st->data_size)
      return pprt_format_error(
          err, err_size,
          "tensor '%s': data_offsets [%llu, %llu] outside the %llu "
          "data bytes",
          t->name, (unsigned long long)t->begin, (unsigned long long)t->end,
          (unsigned long long)st->data_size);
    if (!tensor_bytes(t, &bytes) || bytes != t->end - t->begin)
      return pprt_format_error(
          err, err_size,
          "tensor '%s': data_offsets hold %llu bytes but its %s shape "
          "needs another size",
          t->name, (unsigned long long)(t->end - t->begin), t->dtype);
  }
  return true;
}

/* The tensors, in offset order, tile the data section exactly, as the
   format requires: no overlap, no gap, no byte after the last. A header
   length that is off (a flipped bit in its padding) shifts every offset
   and leaves bytes over, so it is caught here rather than read as
   weights shifted by a few bytes. */
static bool check_tiling(const pprt_safetensors *st, char *err,
                         size_t err_size) {
  size_t count = st->num_tensors > 0 ? (size_t)st->num_tensors : 1;
  const pprt_st_tensor **order = malloc(count * sizeof *order);
  if (!order)
    return pprt_format_error(err, err_size, "out of memory");
  for (int32_t i = 0; i < st->num_tensors; ++i)
    order[i] = &st->tensors[i];
  qsort(order, (size_t)st->num_tensors, sizeof *order, compare_offsets);
  uint64_t covered = 0;
  const pprt_st_tensor *last = NULL;
  bool ok = true;
  for (int32_t i = 0; i < st->num_tensors && ok; ++i) {
    const pprt_st_tensor *t = order[i];
    if (t->begin < covered)
      ok = pprt_format_error(err, err_size, "tensors '%s' and '%s' overlap",
                             last->name, t->name);
    else if (t->begin > covered)
      ok = pprt_format_error(
          err, err_size,
          "data bytes [%llu, %llu) before tensor '%s' belong to no "
          "tensor",
          (unsigned long long)covered, (unsigned long long)t->begin, t->name);
    covered = t->end;
    last = t->begin < t->end ? t : last;
  }
  free(order);
  if (ok && covered != st->data_size)
    ok = pprt_format_error(
        err, err_size,
        "the tensors cover %llu of the %llu data bytes: %llu bytes "
        "after the last belong to no tensor (a wrong header length?)",
        (unsigned long long)covered, (unsigned long long)st->data_size,
        (unsigned long long)(st->data_size - covered));
  return ok;
}

bool pprt_st_parse(unsigned char *bytes, size_t size, pprt_safetensors *out,
                   char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  out->bytes = bytes;
  out->size = size;
  if (size < 8)
    return pprt_format_error(err, err_size,
                             "bad header: the file has %zu bytes, fewer "
                             "than the 8 of the header length",
                             size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = n << 8 | bytes[i];
  if (n > PPRT_ST_MAX_HEADER || n > size - 8)
    return pprt_format_error(
        err, err_size,
        "bad header: header length %llu exceeds the file's %zu bytes "
        "(or the 100000000-byte limit)",
        (unsigned long long)n, size - 8);
  cursor c = {(const char *)bytes + 8, (const char *)bytes + 8,
              (const char *)bytes + 8 + n, err, err_size};
  if (!parse_header(&c, out))
    return false;
  out->data = bytes + 8 + n;
  out->data_size = size - 8 - n;
  return check_extents(out, err, err_size) && check_tiling(out, err, err_size);
}

uint64_t pprt_fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *bytes = data;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ bytes[i]) * 0x100000001B3ull;
  return h;
}

/* The metadata key of the FNV-1a hash of the data section that pprt's
   writer records (16 hex digits), so that a torn or changed file is found
   when read. Files from other writers have none and are read as they are. */
#define CHECKSUM_KEY "pprt_data_fnv1a"
enum { CHECKSUM_DIGITS = 16 };

static bool check_checksum(const pprt_safetensors *st, char *err,
                           size_t err_size) {
  const char *recorded = pprt_st_metadata(st, CHECKSUM_KEY);
  if (!recorded)
    return true;
  char *end = NULL;
  unsigned long long want = strtoull(recorded, &end, 16);
  uint64_t got = pprt_fnv1a(PPRT_FNV_OFFSET, st->data, st->data_size);
  if (strlen(recorded) == CHECKSUM_DIGITS && *end == '\0' && want == got)
    return true;
  return pprt_format_error(
      err, err_size,
      "the tensor data does not match the checksum its header "
      "records (%s %s, the data hashes to %016llx): the file is "
      "torn or was changed after it was written",
      CHECKSUM_KEY, recorded, (unsigned long long)got);
}

bool pprt_st_read(const char *path, pprt_safetensors *out, char *err,
                  size_t err_size) {
  memset(out, 0, sizeof *out);
  size_t size = 0;
  unsigned char *bytes = pprt_read_input(path, &size, err, err_size);
  return bytes && pprt_st_parse(bytes, size, out, err, err_size) &&
         check_checksum(out, err, err_size);
}

const pprt_st_tensor *pprt_st_find(const pprt_safetensors *st,
                                   const char *name) {
  for (int32_t i = 0; i < st->num_tensors; ++i)
    if (strcmp(st->tensors[i].name, name) == 0)
      return &st->tensors[i];
  return NULL;
}

const char *pprt_st_metadata(const pprt_safetensors *st, const char *key) {
  for (int32_t i = 0; i < st->num_meta; ++i)
    if (strcmp(st->meta_keys[i], key) == 0)
      return st->meta_values[i];
  return NULL;
}

void pprt_st_free(pprt_safetensors *st) {
  for (int32_t i = 0; i < st->num_tensors; ++i)
    free(st->tensors[i].name);
  free(st->tensors);
  for (int32_t i = 0; i < st->num_meta; ++i) {
    free(st->meta_keys[i]);
    free(st->meta_values[i]);
  }
  free(st->meta_keys);
  free(st->meta_values);
  free(st->bytes);
  memset(st, 0, sizeof *st);
}

/* ---- Writing. ---- */

/* Why a write failed: errno's text, and for EFBIG the limit that the
   kernel enforces (ulimit -f), which a full disk's ENOSPC would not be. */
static const char *write_error(int e) {
  return e == EFBIG ? "File too large (past the file-size limit, ulimit -f)"
                    : strerror(e);
}

struct pprt_st_writer {
  FILE *f;
  char *path;
  char *tmp;
  char *previous;    /* where the file replaced is kept, or NULL */
  uint64_t expected; /* data bytes the header promises */
  uint64_t written;
  uint64_t hash;      /* FNV-1a of the data written so far */
  size_t checksum_at; /* where the checksum's digits are in the file */
};

/* A growing string. */
typedef struct text {
  char *s;
  size_t len, cap;
  bool oom;
} text;

static void append(text *t, const char *s, size_t n) {
  if (t->oom)
    return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = 2 * (t->len + n + 1);
    char *grown = realloc(t->s, cap);
    if (!grown) {
      t->oom = true;
      return;
    }
    t->s = grown;
    t->cap = cap;
  }
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = '\0';
}

static void appendf(text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void appendf(text *t, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  append(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void append_string(text *t, const char *s) {
  append(t, "\"", 1);
  for (; *s; ++s) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      appendf(t, "\\%c", ch);
    else if (ch < 0x20)
      appendf(t, "\\u%04x", ch);
    else
      append(t, s, 1);
  }
  append(t, "\"", 1);
}

/* The header JSON, padded with spaces to a multiple of 8 bytes; the data
   bytes it describes in *data_bytes, and in *checksum_at where the
   placeholder digits of its checksum start. */
static bool build_header(text *h, const pprt_st_entry *entries, int32_t n,
                         const char *const *keys, const char *const *values,
                         int32_t nmeta, uint64_t *data_bytes,
                         size_t *checksum_at, char *err, size_t err_size) {
  uint64_t offset = 0;
  append(h, "{\"__metadata__\":{", 17);
  for (int32_t i = 0; i < nmeta; ++i) {
    append_string(h, keys[i]);
    append(h, ":", 1);
    append_string(h, values[i]);
    append(h, ",", 1);
  }
  append(h, "\"" CHECKSUM_KEY "\":\"", sizeof CHECKSUM_KEY + 3);
  *checksum_at = h->len;
  append(h, "0000000000000000\"}", CHECKSUM_DIGITS + 2);
  for (int32_t i = 0; i < n; ++i) {
    const pprt_st_entry *e = &entries[i];
    pprt_st_tensor t = {.ndims = e->ndims};
    snprintf(t.dtype, sizeof t.dtype, "%s", e->dtype);
    uint64_t bytes;
    if (e->ndims < 0 || e->ndims > PPRT_ST_MAX_DIMS ||
        pprt_st_dtype_size(e->dtype) == 0)
      return pprt_format_error(err, err_size, "tensor '%s': bad dtype or rank",
                               e->name);
    for (int32_t d = 0; d < e->ndims; ++d)
      t.dims[d] = e->dims[d];
    if (!tensor_bytes(&t, &bytes))
      return pprt_format_error(err, err_size, "tensor '%s' is too large",
                               e->name);
    append(h, ",", 1);
    append_string(h, e->name);
    appendf(h, ":{\"dtype\":\"%s\",\"shape\":[", e->dtype);
    for (int32_t d = 0; d < e->ndims; ++d)
      appendf(h, "%s%lld", d ? "," : "", (long long)e->dims[d]);
    appendf(h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
            (unsigned long long)(offset + bytes));
    offset += bytes;
  }
  append(h, "}", 1);
  while (h->len % 8)
    append(h, " ", 1);
  *data_bytes = offset;
  return !h->oom || pprt_format_error(err, err_size, "out of memory");
}

static char *concat(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = malloc(na + nb + 1);
  if (s) {
    memcpy(s, a, na);
    memcpy(s + na, b, nb + 1);
  }
  return s;
}

pprt_st_writer *pprt_st_writer_begin(const char *path,
                                     const pprt_st_entry *entries, int32_t n,
                                     const char *const *keys,
                                     const char *const *values, int32_t nmeta,
                                     char *err, size_t err_size) {
  text h = {0};
  pprt_st_writer *w = calloc(1, sizeof *w);
  if (!w || !build_header(&h, entries, n, keys, values, nmeta, &w->expected,
                          &w->checksum_at, err, err_size)) {
    if (!w)
      pprt_format_error(err, err_size, "out of memory");
    free(h.s);
    free(w);
    return NULL;
  }
  w->hash = PPRT_FNV_OFFSET;
  w->checksum_at += 8; /* after the header's length */
  w->path = concat(path, "");
  w->tmp = concat(path, ".tmp");
  w->f = w->tmp ? pprt_open_output(w->tmp, err, err_size) : NULL;
  if (!w->f) {
    if (!w->tmp)
      pprt_format_error(err, err_size, "out of memory");
    free(h.s);
    free(w->path);
    free(w->tmp);
    free(w);
    return NULL;
  }
  unsigned char len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = (unsigned char)((uint64_t)h.len >> (8 * i));
  bool ok =
      fwrite(len, 1, 8, w->f) == 8 && fwrite(h.s, 1, h.len, w->f) == h.len;
  free(h.s);
  if (!ok) {
    pprt_format_error(err, err_size, "cannot write '%s': %s", w->tmp,
                      write_error(errno));
    pprt_st_writer_abort(w);
    return NULL;
  }
  return w;
}

bool pprt_st_writer_data(pprt_st_writer *w, const void *data, size_t bytes,
                         char *err, size_t err_size) {
  if (w->written + bytes > w->expected)
    return pprt_format_error(
        err, err_size, "'%s': more tensor bytes than the header has", w->tmp);
  if (fwrite(data, 1, bytes, w->f) != bytes)
    return pprt_format_error(err, err_size, "cannot write '%s': %s", w->tmp,
                             write_error(errno));
  w->written += bytes;
  w->hash = pprt_fnv1a(w->hash, data, bytes);
  return true;
}

/* Writes the data's checksum over the header's placeholder. */
static bool write_checksum(pprt_st_writer *w) {
  char digits[CHECKSUM_DIGITS + 1];
  snprintf(digits, sizeof digits, "%016llx", (unsigned long long)w->hash);
  return fseek(w->f, (long)w->checksum_at, SEEK_SET) == 0 &&
         fwrite(digits, 1, CHECKSUM_DIGITS, w->f) == CHECKSUM_DIGITS &&
         fseek(w->f, 0, SEEK_END) == 0;
}

/* Makes the entry of `path` in its directory durable. Filesystems that
   cannot fsync a directory say EINVAL; their renames are as durable as
   they get. */
static bool sync_directory(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
                    : strdup(".");
  int fd = dir ? open(dir, O_RDONLY) : -1;
  free(dir);
  if (fd < 0)
    return false;
  bool ok = fsync(fd) == 0 || errno == EINVAL;
  close(fd);
  return ok;
}

void pprt_st_writer_keep_previous(pprt_st_writer *w, const char *previous) {
  free(w->previous);
  w->previous = concat(previous, "");
}

/* Makes `previous` a second name of the file at `path` (a hard link, put
   in place by rename), so that both stay whole at every moment: the
   rename of the new file then takes only `path`. Where hard links are
   not supported the file moves there instead (until the new one is
   renamed into place, only `previous` exists). Without a file at `path`
   there is nothing to keep. */
static void keep_previous(const pprt_st_writer *w) {
  char *tmp = w->previous ? concat(w->previous, ".tmp") : NULL;
  if (!tmp)
    return;
  unlink(tmp);
  if (link(w->path, tmp) == 0) {
    if (rename(tmp, w->previous) != 0)
      unlink(tmp);
  } else if (errno != ENOENT) {
    rename(w->path, w->previous);
  }
  free(tmp);
}

bool pprt_st_writer_commit(pprt_st_writer *w, char *err, size_t err_size) {
  bool ok = true;
  if (w->written != w->expected)
    ok = pprt_format_error(
        err, err_size, "'%s': %llu tensor bytes written, %llu expected", w->tmp,
        (unsigned long long)w->written, (unsigned long long)w->expected);
  else if (!write_checksum(w) || fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
    ok = pprt_format_error(err, err_size, "cannot write '%s': %s", w->tmp,
                           write_error(errno));
  if (!ok) {
    pprt_st_writer_abort(w);
    return false;
  }
  /* rename() would replace a device or FIFO put at the path since the
     run checked it; such a path takes no weights. */
  struct stat st;
  if (lstat(w->path, &st) == 0 && !S_ISREG(st.st_mode) &&
      !S_ISLNK(st.st_mode)) {
    pprt_format_error(err, err_size,
                      "cannot write '%s': it is %s; outputs must be regular "
                      "files",
                      w->path, pprt_file_kind(st.st_mode));
    pprt_st_writer_abort(w);
    return false;
  }
  keep_previous(w);
  ok = fclose(w->f) == 0 && rename(w->tmp, w->path) == 0;
  w->f = NULL;
  if (!ok) {
    pprt_format_error(err, err_size, "cannot write '%s': %s", w->path,
                      strerror(errno));
    pprt_st_writer_abort(w);
    return false;
  }
  if (!sync_directory(w->path))
    ok = pprt_format_error(err, err_size,
                           "cannot sync the directory of '%s': %s", w->path,
                           strerror(errno));
  free(w->path);
  free(w->tmp);
  free(w->previous);
  free(w);
  return ok;
}

void pprt_st_writer_abort(pprt_st_writer *w) {
  if (w->f)
    fclose(w->f);
  unlink(w->tmp);
  free(w->path);
  free(w->tmp);
  free(w->previous);
  free(w);
}

bool pprt_st_writer_finish(pprt_st_writer *w, bool ok, char *err,
                           size_t err_size) {
  if (ok)
    return pprt_st_writer_commit(w, err, err_size);
  pprt_st_writer_abort(w);
  return false;
}
