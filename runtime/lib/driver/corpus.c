/* Character-level training data from a text file (--corpus FILE). */
#include "core/core.h"
#include "pprt_math.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the window stream apart from the other hashed streams. */
enum { TAG_CORPUS = 0x434F5250 /* "CORP" */ };

struct pprt_corpus {
  unsigned char *text;
  int64_t length;
  int32_t vocab_size;
  int16_t char_index[256]; /* position in the sorted vocabulary, or -1 */
};

static bool corpus_error(char *err, size_t err_size, const char *path,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool corpus_error(char *err, size_t err_size, const char *path,
                         const char *fmt, ...) {
  int n = snprintf(err, err_size, "--corpus %s: ", path);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < err_size)
    vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
  va_end(ap);
  return false;
}

/* Reads the whole file; NULL (with errno set) if it cannot. */
static unsigned char *read_file(const char *path, int64_t *length) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  unsigned char *text = malloc(cap);
  while (text) {
    n += fread(text + n, 1, cap - n, f);
    if (n < cap)
      break;
    unsigned char *grown = realloc(text, cap *= 2);
    if (!grown)
      free(text);
    text = grown;
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    free(text);
    errno = EIO;
    return NULL;
  }
  *length = (int64_t)n;
  return text;
}

/* The vocabulary is the corpus's distinct bytes in increasing order. */
static void build_vocab(pprt_corpus *c) {
  bool seen[256] = {false};
  for (int64_t i = 0; i < c->length; ++i)
    seen[c->text[i]] = true;
  c->vocab_size = 0;
  for (int ch = 0; ch < 256; ++ch)
    c->char_index[ch] = seen[ch] ? (int16_t)c->vocab_size++ : -1;
}

/* Every data argument must be one-hot [rows, positions, vocabulary] with
   room for the vocabulary and a corpus longer than its context. */
static bool check_data_buffers(const pprt_context *ctx, const pprt_corpus *c,
                               char *err, size_t err_size) {
  const char *path = ctx->opts.corpus_path;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!b->defined || (b->kind != PPRT_INPUT && b->kind != PPRT_TARGET))
      continue;
    const char *what = b->kind == PPRT_INPUT ? "input" : "target";
    if (b->ndims != 3)
      return corpus_error(err, err_size, path,
                          "%s argument %d is %d-D; the corpus loader fills "
                          "one-hot [rows, positions, vocabulary] tensors",
                          what, b->index, b->ndims);
    if (b->dims[2] < c->vocab_size)
      return corpus_error(err, err_size, path,
                          "the corpus has %d distinct characters, but %s "
                          "argument %d has room for %lld",
                          c->vocab_size, what, b->index, (long long)b->dims[2]);
    if (c->length <= b->dims[1])
      return corpus_error(err, err_size, path,
                          "the corpus has %lld characters; a context of %lld "
                          "positions needs at least %lld",
                          (long long)c->length, (long long)b->dims[1],
                          (long long)b->dims[1] + 1);
  }
  return true;
}

bool pprt_corpus_load(pprt_context *ctx, char *err, size_t err_size) {
  const char *path = ctx->opts.corpus_path;
  pprt_corpus *c = pprt_xcalloc(ctx, 1, sizeof *c);
  c->text = read_file(path, &c->length);
  if (!c->text) {
    free(c);
    return corpus_error(err, err_size, path, "cannot read: %s",
                        strerror(errno));
  }
  build_vocab(c);
  ctx->corpus = c;
  return check_data_buffers(ctx, c, err, err_size);
}

void pprt_corpus_free(pprt_corpus *c) {
  if (!c)
    return;
  free(c->text);
  free(c);
}

/* Where the window of global row `row` at `step` starts: uniform over the
   corpus, from a hash of the coordinates alone. */
static int64_t window_start(const pprt_context *ctx, int64_t step, int64_t row,
                            int64_t positions) {
  uint64_t keys[] = {TAG_CORPUS, (uint64_t)step, (uint64_t)row};
  uint64_t starts = (uint64_t)(ctx->corpus->length - positions);
  return (int64_t)(pprt_hash(ctx->opts.seed, keys, 3) % starts);
}

void pprt_corpus_fill(const pprt_context *ctx, const pprt_buffer_desc *b,
                      int64_t step, int64_t first_row, float *out) {
  const pprt_corpus *c = ctx->corpus;
  int64_t rows = b->dims[0], positions = b->dims[1], vocab = b->dims[2];
  /* Targets are the inputs' next characters. */
  int64_t shift = b->kind == PPRT_TARGET ? 1 : 0;
  memset(out, 0, (size_t)b->numel * sizeof *out);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t start = window_start(ctx, step, first_row + r, positions) + shift;
    for (int64_t t = 0; t < positions; ++t) {
      int64_t v = c->char_index[c->text[start + t]];
      out[(r * positions + t) * vocab + v] = 1.0f;
    }
  }
}
