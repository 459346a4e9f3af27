/* Training tokens from a text file (--corpus FILE, characters) or a token
   dataset (--tokens FILE), as one-hot windows or integer ids. */
#include "driver/driver.h"
#include "driver/input_file.h"
#include "driver/int_array.h"
#include "pprt_math.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the window stream apart from the other hashed streams. */
enum { TAG_CORPUS = 0x434F5250 /* "CORP" */ };

/* The training tokens: a text's characters as indices into its sorted
   vocabulary (--corpus), or the ids of a token file (--tokens). */
struct pprt_corpus {
  const char *option; /* "--corpus" or "--tokens", for messages */
  const char *path;
  unsigned char *text;     /* --corpus */
  int16_t char_index[256]; /* position in the sorted vocabulary, or -1 */
  pprt_int_array *file;    /* --tokens: read through a window it keeps */
  int64_t length;
  int64_t vocab_size; /* distinct characters, or the largest id + 1 */
};

static bool corpus_error(char *err, size_t err_size, const pprt_corpus *c,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool corpus_error(char *err, size_t err_size, const pprt_corpus *c,
                         const char *fmt, ...) {
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s %s: ", c->option, c->path);
  va_list ap;
  va_start(ap, fmt);
  pprt_input_error(err, err_size, prefix, fmt, ap);
  va_end(ap);
  return false;
}

/* An id of --tokens at or past the vocabulary its load found means the
   file changed since (the check after the reads stops the run): 0 until
   then, so that no one-hot write lands past its row. */
static int64_t token_at(const pprt_corpus *c, int64_t i) {
  if (c->text)
    return (int64_t)c->char_index[c->text[i]];
  int64_t id = pprt_int_array_at(c->file, i);
  return id < c->vocab_size ? id : 0;
}

int64_t pprt_corpus_token(const pprt_corpus *c, int64_t i) {
  return token_at(c, i);
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

/* The position of the first token of `b` past its table (but the id the
   model ignores), or -1. */
static int64_t first_token_past(const pprt_corpus *c,
                                const pprt_buffer_desc *b) {
  for (int64_t i = 0; i < c->length; ++i) {
    int64_t id = token_at(c, i);
    if (id >= b->id_bound && !(b->has_id_ignored && id == b->id_ignored))
      return i;
  }
  return -1;
}

/* One-hot data needs room for every id; ids need an integer buffer. */
static bool check_data_buffer(const pprt_buffer_desc *b, const pprt_corpus *c,
                              char *err, size_t err_size) {
  const char *what = b->kind == PPRT_INPUT ? "input" : "target";
  bool ids = b->dtype == PPRT_I32 || b->dtype == PPRT_I64;
  if (ids && b->ndims != 2)
    return corpus_error(err, err_size, c,
                        "%s argument %d is %d-D; token ids fill [rows, "
                        "positions] tensors",
                        what, b->index, b->ndims);
  if (b->dtype == PPRT_I32 && c->vocab_size - 1 > INT32_MAX)
    return corpus_error(err, err_size, c,
                        "the largest id is %lld, more than i32 %s argument %d "
                        "holds",
                        (long long)(c->vocab_size - 1), what, b->index);
  if (!ids && (b->dtype != PPRT_F32 || b->ndims != 3))
    return corpus_error(err, err_size, c,
                        "%s argument %d is %d-D %s; the loader fills one-hot "
                        "[rows, positions, vocabulary] f32 tensors or i32/i64 "
                        "ids [rows, positions]",
                        what, b->index, b->ndims, pprt_dtype_name(b->dtype));
  int64_t at = ids && b->id_bound > 0 && c->vocab_size > b->id_bound
                   ? first_token_past(c, b)
                   : -1;
  if (at >= 0) {
    return corpus_error(err, err_size, c,
                        "the largest id is %lld, but %s argument %d indexes a "
                        "table of %lld rows: ids must be below %lld (token "
                        "%lld is %lld)",
                        (long long)(c->vocab_size - 1), what, b->index,
                        (long long)b->id_bound, (long long)b->id_bound,
                        (long long)at, (long long)token_at(c, at));
  }
  if (!ids && b->dims[2] < c->vocab_size)
    return corpus_error(
        err, err_size, c,
        c->text ? "the corpus has %lld distinct characters, but %s argument "
                  "%d has room for %lld"
                : "the largest id is %lld, but %s argument %d has room for "
                  "%lld ids",
        (long long)(c->text ? c->vocab_size : c->vocab_size - 1), what,
        b->index, (long long)b->dims[2]);
  if (c->length <= b->dims[1])
    return corpus_error(err, err_size, c,
                        "the corpus has %lld %s; a context of %lld positions "
                        "needs at least %lld",
                        (long long)c->length, c->text ? "characters" : "tokens",
                        (long long)b->dims[1], (long long)b->dims[1] + 1);
  return true;
}

/* Token weights, document ids and positions (--sample-lengths) hold no
   tokens to check. */
static bool check_data_buffers(const pprt_driver *d, const pprt_corpus *c,
                               char *err, size_t err_size) {
  const pprt_context *ctx = d->ctx;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && (b->kind == PPRT_INPUT || b->kind == PPRT_TARGET) &&
        pprt_length_index_holds_tokens(d->length_index, b) &&
        !check_data_buffer(b, c, err, err_size))
      return false;
  }
  return true;
}

static bool load_text(pprt_corpus *c, char *err, size_t err_size) {
  char why[256];
  size_t length = 0;
  c->text = pprt_read_input(c->path, &length, why, sizeof why);
  if (!c->text)
    return corpus_error(err, err_size, c, "%s", why);
  c->length = (int64_t)length;
  build_vocab(c);
  return true;
}

/* Opens the token file `path`: a 1-D .npy of uint16 or uint32 ids by its
   name, else flat ids of `width` bytes. False, with why in `err` (without
   the path); the file must still be closed. */
static bool open_tokens(pprt_int_array *t, const char *path, int width,
                        char *err, size_t err_size) {
  if (!pprt_int_array_open(t, path, err, err_size))
    return false;
  if (t->size == 0)
    return pprt_format_error(err, err_size, "the file is empty");
  if (!pprt_is_npy_path(path)) {
    pprt_int_array_read_flat(t, width);
    return t->size % (uint64_t)width == 0 ||
           pprt_format_error(err, err_size,
                             "%llu bytes is not a whole number of uint%d ids",
                             (unsigned long long)t->size, 8 * width);
  }
  if (!pprt_int_array_read_npy(t, err, err_size))
    return false;
  const pprt_npy *npy = &t->npy;
  if (strcmp(npy->descr, "<u2") != 0 && strcmp(npy->descr, "|u2") != 0 &&
      strcmp(npy->descr, "<u4") != 0)
    return pprt_format_error(
        err, err_size,
        "the array's dtype is '%s'; token ids must be uint16 "
        "('<u2') or uint32 ('<u4')",
        npy->descr);
  if (npy->fortran_order || npy->ndims != 1) {
    char shape[200];
    pprt_npy_format_shape(npy, shape, sizeof shape);
    return pprt_format_error(
        err, err_size, "the array must be 1-D (shape (N,)), not %s", shape);
  }
  return true;
}

static bool load_tokens(const pprt_driver *d, pprt_corpus *c, char *err,
                        size_t err_size) {
  char why[256];
  c->file = pprt_xcalloc(d->ctx, 1, sizeof *c->file);
  if (!open_tokens(c->file, c->path, d->opts.token_width, why, sizeof why))
    return corpus_error(err, err_size, c, "%s", why);
  c->length = c->file->npy.numel;
  for (int64_t i = 0; i < c->length; ++i) {
    int64_t id = pprt_int_array_at(c->file, i);
    if (id >= c->vocab_size)
      c->vocab_size = id + 1;
  }
  if (!pprt_int_array_unchanged(c->file, why, sizeof why))
    return corpus_error(err, err_size, c, "%s", why);
  return true;
}

bool pprt_corpus_load(pprt_driver *d, char *err, size_t err_size) {
  pprt_corpus *c = pprt_xcalloc(d->ctx, 1, sizeof *c);
  d->corpus = c;
  bool text = d->opts.corpus_path != NULL;
  c->option = text ? "--corpus" : "--tokens";
  c->path = text ? d->opts.corpus_path : d->opts.tokens_path;
  if (text && d->opts.tokens_path)
    return corpus_error(err, err_size, c,
                        "give --corpus or --tokens, not both");
  bool loaded =
      text ? load_text(c, err, err_size) : load_tokens(d, c, err, err_size);
  if (loaded && (d->opts.sample_lengths_path || d->opts.document_end >= 0))
    return pprt_length_index_load(d, c->length, err, err_size) &&
           check_data_buffers(d, c, err, err_size);
  return loaded && check_data_buffers(d, c, err, err_size);
}

void pprt_corpus_free(pprt_corpus *c) {
  if (!c)
    return;
  free(c->text);
  if (c->file)
    pprt_int_array_close(c->file);
  free(c->file);
  free(c);
}

void pprt_corpus_check(const pprt_driver *d) {
  const pprt_corpus *c = d->corpus;
  char why[256];
  if (c->file && !pprt_int_array_unchanged(c->file, why, sizeof why))
    pprt_fatal(d->ctx,
               "%s %s: %s; the run stops rather than train on other "
               "data",
               c->option, c->path, why);
}

/* Where the window of global row `row` at `step` starts: uniform over the
   corpus, from a hash of the coordinates alone. */
static int64_t window_start(const pprt_driver *d, int64_t step, int64_t row,
                            int64_t positions) {
  uint64_t keys[] = {TAG_CORPUS, (uint64_t)step, (uint64_t)row};
  uint64_t starts = (uint64_t)(d->corpus->length - positions);
  return (int64_t)(pprt_hash(d->opts.seed, keys, 3) % starts);
}

void pprt_corpus_fill(const pprt_driver *d, const pprt_buffer_desc *b,
                      int64_t step, int64_t first_row, void *out) {
  const pprt_corpus *c = d->corpus;
  int64_t rows = b->dims[0], positions = b->dims[1];
  /* Targets are the inputs' next tokens. */
  int64_t shift = b->kind == PPRT_TARGET ? 1 : 0;
  if (b->dtype == PPRT_F32)
    memset(out, 0, (size_t)b->bytes);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t start = window_start(d, step, first_row + r, positions) + shift;
    for (int64_t t = 0; t < positions; ++t) {
      int64_t v = token_at(c, start + t), at = r * positions + t;
      if (b->dtype == PPRT_I64)
        ((int64_t *)out)[at] = v;
      else if (b->dtype == PPRT_I32)
        ((int32_t *)out)[at] = (int32_t)v;
      else
        ((float *)out)[at * b->dims[2] + v] = 1.0f;
    }
  }
}
