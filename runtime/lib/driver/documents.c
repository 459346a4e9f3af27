/* Documents as samples, read a step at a time: found in --tokens by their
   end-of-document id (--document-end ID, Megatron's EOD, Hugging Face's
   eos_token_id), or given by a .npy of document lengths (--sample-lengths
   FILE.npy). Each document of n tokens is one sample of n - 1 predicted
   tokens: its tokens but the last as inputs, its tokens but the first as
   targets, so the end id is its last target and no sample reaches into the
   next document. A document longer than every shape is refused, or with
   --long-documents split cut into pieces of the longest shape's positions
   plus one token, the last the remainder: each piece a sample of its own,
   its first token an input only, as Megatron's and Hugging Face's chunks
   are; a piece of one token predicts nothing and is no sample. Memory
   stays bounded: the tokens and the lengths are read through their files'
   windows. */
#include "driver/documents.h"
#include "driver/input_file.h"
#include "driver/int_array.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct pprt_documents {
  char label[4200];       /* "--document-end ID" or "--sample-lengths FILE" */
  int64_t end_id;         /* --document-end; -1: lengths from the .npy */
  int64_t corpus_length;  /* tokens */
  int64_t per_step;       /* samples a step, over all replicas */
  int64_t longest;        /* the program's longest micro-batch positions */
  bool split;             /* --long-documents split */
  int64_t cursor;         /* the next piece's first token */
  int64_t document;       /* the next piece's document's index */
  int64_t document_start; /* that document's first token */
  bool found;             /* a sample since the tokens last began again */
  /* --sample-lengths FILE.npy: the lengths, through a window. */
  pprt_int_array lengths;
};

static bool documents_error(char *err, size_t err_size,
                            const pprt_documents *docs, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool documents_error(char *err, size_t err_size,
                            const pprt_documents *docs, const char *fmt, ...) {
  char prefix[4300];
  snprintf(prefix, sizeof prefix, "%s: ", docs->label);
  va_list ap;
  va_start(ap, fmt);
  pprt_input_error(err, err_size, prefix, fmt, ap);
  va_end(ap);
  return false;
}

bool pprt_documents_wanted(const pprt_driver_options *o) {
  return o->document_end >= 0 ||
         (o->sample_lengths_path && pprt_is_npy_path(o->sample_lengths_path));
}

const char *pprt_documents_option_problem(const pprt_driver_options *o) {
  bool documents = pprt_documents_wanted(o);
  if (o->document_end >= 0 && o->sample_lengths_path)
    return "--document-end finds the samples in --tokens: it excludes "
           "--sample-lengths";
  if (o->samples_per_step && !documents)
    return "--samples-per-step counts the documents of --document-end or "
           "--sample-lengths FILE.npy";
  if (o->long_documents_set && !documents)
    return "--long-documents treats the documents of --document-end or "
           "--sample-lengths FILE.npy";
  if (documents && !o->tokens_path)
    return "documents (--document-end, --sample-lengths FILE.npy) need "
           "--tokens: the documents' ids";
  if (documents && !o->choose_plans)
    return "documents (--document-end, --sample-lengths FILE.npy) are "
           "placed into a program's step plans: give --choose-plans, with "
           "a program compiled by pp-compile --step-plans";
  if (documents && (o->first_step_set || o->resume_dir || o->profile_path ||
                    o->check_gradients))
    return "documents (--document-end, --sample-lengths FILE.npy) train "
           "from the first document: they exclude --first-step, --resume, "
           "--profile and --check-gradients";
  return NULL;
}

/*---- Checks against the program ----*/

static bool is_data(const pprt_buffer_desc *b) {
  return b->defined && (b->kind == PPRT_INPUT || b->kind == PPRT_TARGET) &&
         b->ndims >= 2;
}

/* The most positions of any micro-batch shape of this rank's data. */
static int64_t longest_positions(const pprt_context *ctx) {
  int64_t longest = 0;
  for (int32_t id = 0; id < ctx->num_buffers; ++id)
    if (is_data(&ctx->buffers[id]) && ctx->buffers[id].dims[1] > longest)
      longest = ctx->buffers[id].dims[1];
  return longest;
}

/* The end id must be a token the program's data can hold. */
static bool check_end_id(const pprt_context *ctx, const pprt_documents *docs,
                         char *err, size_t err_size) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    bool ids = b->dtype == PPRT_I32 || b->dtype == PPRT_I64;
    int64_t bound = ids ? b->id_bound : b->ndims == 3 ? b->dims[2] : 0;
    if (is_data(b) && !b->packed_input && bound > 0 && docs->end_id >= bound)
      return documents_error(err, err_size, docs,
                             "the end-of-document id is not in the program's "
                             "vocabulary: %s argument %d holds ids below "
                             "%lld",
                             b->kind == PPRT_INPUT ? "input" : "target",
                             b->index, (long long)bound);
  }
  return true;
}

/* The samples of a step: --samples-per-step, or as many as the first step
   of the index the program was planned for (rows, if it packs them). */
static int64_t samples_per_step(const pprt_driver *d) {
  if (d->opts.samples_per_step)
    return d->opts.samples_per_step;
  const pprt_context *ctx = d->ctx;
  int64_t n = 0;
  for (int32_t r = 0; r < ctx->plan_replicas; ++r) {
    const int32_t *entry = pprt_plan_entry(ctx, 0, r);
    for (int32_t mb = 0; mb < entry[1]; ++mb)
      n += entry[2 + mb];
  }
  return n;
}

/* Refuses the next document, of `n` tokens (`how`: "has", "is longer
   than"), longer than any micro-batch: -1. */
static int64_t refuse_long(const pprt_documents *docs, const char *how,
                           int64_t n, char *err, size_t err_size) {
  documents_error(err, err_size, docs,
                  "the document at token %lld (document %lld) %s %lld "
                  "tokens: the program's longest micro-batch has %lld "
                  "positions (give --long-documents split, or compile a "
                  "longer shape)",
                  (long long)docs->cursor, (long long)docs->document, how,
                  (long long)n, (long long)docs->longest);
  return -1;
}

/*---- Document lengths from a .npy ----*/

static bool open_lengths(pprt_documents *docs, const char *path, char *err,
                         size_t err_size) {
  char why[256];
  if (!pprt_int_array_open(&docs->lengths, path, why, sizeof why) ||
      !pprt_int_array_read_npy(&docs->lengths, why, sizeof why))
    return documents_error(err, err_size, docs, "%s", why);
  const pprt_npy *npy = &docs->lengths.npy;
  if (!pprt_int_array_readable(npy) || npy->ndims != 1 || npy->fortran_order ||
      npy->numel == 0)
    return documents_error(err, err_size, docs,
                           "document lengths are a non-empty 1-D array of "
                           "integers (int16 to int64, uint16 to uint64), not "
                           "'%s' of %d dimensions",
                           npy->descr, npy->ndims);
  return true;
}

/* The length of document `k` of the .npy; -1 if it cannot be read. */
static int64_t length_of(pprt_documents *docs, int64_t k, char *err,
                         size_t err_size) {
  int64_t length = pprt_int_array_at(&docs->lengths, k);
  if (docs->lengths.failed) {
    documents_error(err, err_size, docs, "cannot read document %lld's length",
                    (long long)k);
    return -1;
  }
  /* A uint64 past 2^63 - 1 reads as negative: no file is that long. */
  if (length < 0 && docs->lengths.npy.descr[1] == 'u')
    documents_error(err, err_size, docs,
                    "document %lld has length %llu, more tokens than any "
                    "file holds",
                    (long long)k, (unsigned long long)length);
  else if (length < 0)
    documents_error(err, err_size, docs, "document %lld has length %lld",
                    (long long)k, (long long)length);
  return length < 0 ? -1 : length;
}

/* The document's tokens from the cursor (its end included) from the .npy;
   -1 on an error. */
static int64_t next_listed(pprt_documents *docs, char *err, size_t err_size) {
  int64_t n = length_of(docs, docs->document, err, err_size);
  if (n >= 0 && n > docs->corpus_length - docs->document_start) {
    documents_error(err, err_size, docs,
                    "document %lld ends at token %llu, past the %lld tokens "
                    "of --tokens: the lengths are not those of its documents",
                    (long long)docs->document,
                    (unsigned long long)docs->document_start +
                        (unsigned long long)n,
                    (long long)docs->corpus_length);
    return -1;
  }
  return n < 0 ? -1 : n - (docs->cursor - docs->document_start);
}

/*---- Documents found by their end id ----*/

/* The document's tokens from the cursor (its end included) from the end
   id, scanning no further than the longest sample the program holds: one
   more than a piece if the end is further, under --long-documents split;
   -1 on an error. */
static int64_t next_ended(const pprt_driver *d, pprt_documents *docs, char *err,
                          size_t err_size) {
  int64_t last = docs->cursor + docs->longest;
  if (last >= docs->corpus_length)
    last = docs->corpus_length - 1;
  for (int64_t i = docs->cursor; i <= last; ++i)
    if (pprt_corpus_token(d->corpus, i) == docs->end_id)
      return i - docs->cursor + 1;
  if (docs->split && last == docs->cursor + docs->longest)
    return docs->longest + 2;
  if (docs->split) { /* only a file changed since it was opened ends so */
    documents_error(err, err_size, docs,
                    "--tokens %s ends mid-document at token %lld",
                    d->opts.tokens_path, (long long)last);
    return -1;
  }
  return refuse_long(docs, "is longer than", docs->longest + 1, err, err_size);
}

/*---- Steps ----*/

/* The next document or piece with a token to predict: its predicted
   tokens, its first token in `*start`; -1 on an error. */
static int64_t next_sample(const pprt_driver *d, pprt_documents *docs,
                           int64_t *start, char *err, size_t err_size) {
  int64_t piece = docs->longest + 1; /* tokens: the longest sample's */
  for (;;) {
    int64_t n = docs->end_id >= 0 ? next_ended(d, docs, err, err_size)
                                  : next_listed(docs, err, err_size);
    if (n < 0)
      return -1;
    if (n > piece && !docs->split)
      return refuse_long(docs, "has", n, err, err_size);
    bool ends = n <= piece; /* the document, or its last piece */
    n = ends ? n : piece;
    *start = docs->cursor;
    docs->cursor += n;
    if (ends)
      docs->document += 1, docs->document_start = docs->cursor;
    bool wraps =
        ends && (docs->end_id >= 0 ? docs->cursor == docs->corpus_length
                                   : docs->document == docs->lengths.npy.numel);
    if (n > 1)
      docs->found = true;
    if (wraps && !docs->found) {
      documents_error(err, err_size, docs,
                      "no document has a token to predict (each is its end "
                      "alone)");
      return -1;
    }
    if (wraps) /* the next epoch */
      docs->cursor = docs->document = docs->document_start = 0,
      docs->found = false;
    if (n > 1)
      return n - 1;
  }
}

int64_t pprt_documents_next_step(pprt_driver *d, pprt_documents *docs,
                                 int64_t **length, int64_t **start, char *err,
                                 size_t err_size) {
  int64_t n = docs->per_step;
  *length = pprt_xcalloc(d->ctx, (size_t)n, sizeof **length);
  *start = pprt_xcalloc(d->ctx, (size_t)n, sizeof **start);
  for (int64_t k = 0; k < n; ++k)
    if (((*length)[k] = next_sample(d, docs, &(*start)[k], err, err_size)) < 0)
      return -1;
  return n;
}

pprt_documents *pprt_documents_open(pprt_driver *d, int64_t corpus_length,
                                    char *err, size_t err_size) {
  pprt_documents *docs = pprt_xcalloc(d->ctx, 1, sizeof *docs);
  const pprt_driver_options *o = &d->opts;
  docs->end_id = o->document_end;
  docs->corpus_length = corpus_length;
  docs->per_step = samples_per_step(d);
  docs->longest = longest_positions(d->ctx);
  docs->split = o->split_long_documents;
  if (docs->end_id >= 0)
    snprintf(docs->label, sizeof docs->label, "--document-end %lld",
             (long long)docs->end_id);
  else
    snprintf(docs->label, sizeof docs->label, "--sample-lengths %s",
             o->sample_lengths_path);
  /* A packed program's plans count rows, not documents. */
  bool ok = !d->ctx->packed_row || o->samples_per_step ||
            documents_error(err, err_size, docs,
                            "the program packs samples into rows "
                            "(pp-compile --packing): give the documents a "
                            "step with --samples-per-step");
  ok = ok && (docs->end_id >= 0
                  ? check_end_id(d->ctx, docs, err, err_size)
                  : open_lengths(docs, o->sample_lengths_path, err, err_size));
  int64_t last = docs->end_id >= 0
                     ? pprt_corpus_token(d->corpus, corpus_length - 1)
                     : docs->end_id;
  if (ok && last != docs->end_id)
    ok = documents_error(err, err_size, docs,
                         "--tokens %s ends mid-document: its last token (at "
                         "%lld) is %lld, not the end-of-document id",
                         o->tokens_path, (long long)(corpus_length - 1),
                         (long long)last);
  if (ok)
    return docs;
  pprt_documents_free(docs);
  return NULL;
}

const char *pprt_documents_label(const pprt_documents *docs) {
  return docs->label;
}

void pprt_documents_free(pprt_documents *docs) {
  if (!docs)
    return;
  pprt_int_array_close(&docs->lengths);
  free(docs);
}
