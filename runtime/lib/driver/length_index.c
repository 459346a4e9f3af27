/* Variable-length samples (--sample-lengths FILE with --corpus or
   --tokens): the index gives each step's sample lengths, the samples lie
   back to back in the tokens, and every step loads them sorted longest
   first, right-padded to the program's context, with token weights in the
   targets: one-hot f32 tensors, or integer ids beside an f32 tensor of
   weights. With --plan-lookahead K the index is a stream (a FIFO a data
   loader writes as it tokenizes): read a step at a time, K steps ahead of
   the running one, into a ring of K + 1 lines. Documents (documents.c)
   are such a stream too, a step of them at a time. */
#define _POSIX_C_SOURCE 200809L
#include "driver/documents.h"
#include "driver/driver.h"
#include "driver/input_file.h"
#include "driver/line_reader.h"
#include "driver/packing.h"
#include "driver/plan_choice.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line of the index: a step's samples. */
typedef struct index_step {
  int64_t num_samples;
  int64_t *length; /* predicted tokens of each sample, in file order */
  int64_t *start;  /* where each sample's tokens start */
  int64_t *order;  /* sample indices, longest first (ties in file order) */
  int64_t tokens;  /* the sum of `length` */
  /* Under step plans: the sample of each row of the step (the replicas'
     plans' rows one after another), -1 for a padding row. */
  int64_t *row_sample;
  int64_t num_rows;
  /* Under packing: the samples are the packed rows, and these say where
     each row's tokens lie and their offsets within their documents
     (packing.c). */
  int64_t *packed_at;
  int64_t *packed_offset;
} index_step;

struct pprt_length_index {
  const char *path;
  char label[4200];  /* what messages start with: "--sample-lengths FILE" */
  int64_t num_steps; /* lines; in a stream, the ring's */
  index_step *steps;
  int64_t corpus_length;
  int64_t cursor; /* where the next sample's tokens start */
  /* A stream (--plan-lookahead): step s in line s mod num_steps. */
  bool streaming;
  int64_t read;              /* steps read so far */
  pprt_line_reader *reader;  /* rank 0's */
  int64_t line_number;       /* of the file, for errors */
  pprt_documents *documents; /* the steps' samples; NULL: the index's */
};

/* The step that line `i` of the index holds: i, or in a stream the
   latest step read into it. */
static int64_t step_of_line(const pprt_length_index *x, int64_t i) {
  if (!x->streaming || x->read == 0)
    return i;
  int64_t last = x->read - 1;
  return last - (last - i) % x->num_steps;
}

/* `old` (n elements of `size` bytes) in twice the room, or 16. */
static void *grow(const pprt_driver *d, void *old, int64_t n, size_t size,
                  int64_t *capacity) {
  *capacity = n ? 2 * n : 16;
  void *p = pprt_xcalloc(d->ctx, (size_t)*capacity, size);
  if (n)
    memcpy(p, old, (size_t)n * size);
  free(old);
  return p;
}

static bool index_error(char *err, size_t err_size, const char *label,
                        const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool index_error(char *err, size_t err_size, const char *label,
                        const char *fmt, ...) {
  char prefix[4300];
  snprintf(prefix, sizeof prefix, "%s: ", label);
  va_list ap;
  va_start(ap, fmt);
  pprt_input_error(err, err_size, prefix, fmt, ap);
  va_end(ap);
  return false;
}

/* Parses one line's lengths (separated by blanks or commas) into `s`;
   false with the reason in `why` on anything but positive integers below
   2^31 (more than any context, and so a step's sum fits in 64 bits). */
static bool parse_line(const pprt_driver *d, char *line, index_step *s,
                       char *why, size_t why_size) {
  int64_t capacity = 0;
  for (char *p = line; *p;) {
    if (*p == ' ' || *p == '\t' || *p == ',' || *p == '\r') {
      ++p;
      continue;
    }
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    int word = (int)strcspn(p, " \t,\r");
    if (end != p + word || v < 1 || errno == ERANGE || v > INT32_MAX) {
      snprintf(why, why_size, "'%.*s' is not a positive length below 2^31",
               word < 24 ? word : 24, p);
      return false;
    }
    if (s->num_samples == capacity)
      s->length =
          grow(d, s->length, s->num_samples, sizeof *s->length, &capacity);
    s->length[s->num_samples++] = v;
    p = end;
  }
  return true;
}

typedef struct sample_key {
  int64_t length, index;
} sample_key;

/* Longest first, then in file order: a total order, so qsort is stable. */
static int compare_samples(const void *a, const void *b) {
  const sample_key *x = a, *y = b;
  if (x->length != y->length)
    return x->length > y->length ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts a step's samples longest first, ties in file order. */
static void sort_step(const pprt_driver *d, index_step *s) {
  size_t n = (size_t)s->num_samples;
  sample_key *keys = pprt_xcalloc(d->ctx, n ? n : 1, sizeof *keys);
  for (int64_t i = 0; i < s->num_samples; ++i) {
    keys[i] = (sample_key){s->length[i], i};
    s->tokens += s->length[i];
  }
  qsort(keys, n, sizeof *keys, compare_samples);
  s->order = pprt_xcalloc(d->ctx, n, sizeof *s->order);
  for (size_t i = 0; i < n; ++i)
    s->order[i] = keys[i].index;
  free(keys);
}

/* The line number of byte `at` of `text`. */
static int64_t line_of(const char *text, size_t at) {
  int64_t line = 1;
  for (size_t i = 0; i < at; ++i)
    line += text[i] == '\n';
  return line;
}

static bool parse_index(pprt_driver *d, pprt_length_index *x, char *text,
                        size_t size, char *err, size_t err_size) {
  const char *nul = memchr(text, '\0', size);
  if (nul)
    return index_error(err, err_size, x->label,
                       "line %lld holds a NUL byte: not a text index",
                       (long long)line_of(text, (size_t)(nul - text)));
  int64_t capacity = 0, line_number = 0;
  for (char *line = text; line;) {
    char *next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    ++line_number;
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    index_step s = {0};
    char why[96];
    if (!parse_line(d, line, &s, why, sizeof why)) {
      free(s.length);
      return index_error(err, err_size, x->label, "line %lld: %s",
                         (long long)line_number, why);
    }
    line = next;
    if (s.num_samples == 0)
      continue;
    if (x->num_steps == capacity)
      x->steps = grow(d, x->steps, x->num_steps, sizeof *x->steps, &capacity);
    sort_step(d, &s);
    x->steps[x->num_steps++] = s;
  }
  if (x->num_steps == 0)
    return index_error(err, err_size, x->label, "no step has a sample");
  return true;
}

/* Sample k of the whole index (file order) starts after samples 0..k-1,
   each taking its tokens plus the last one's target, wrapping around the
   tokens where they run out. Places step `s`, the next in file order. */
static void place_step(const pprt_driver *d, pprt_length_index *x,
                       index_step *s) {
  s->start = pprt_xcalloc(d->ctx, (size_t)s->num_samples, sizeof *s->start);
  for (int64_t k = 0; k < s->num_samples; ++k) {
    int64_t span = s->length[k] + 1;
    if (x->cursor + span > x->corpus_length)
      x->cursor = 0;
    s->start[k] = x->cursor;
    x->cursor += span;
  }
}

/* Under packing (pprt_set_packing): the step's packed rows become its
   samples. */
static void pack_step(const pprt_driver *d, index_step *s) {
  int64_t row = d->ctx->packed_row;
  if (!row)
    return;
  int64_t *lengths;
  s->packed_at =
      pprt_pack_rows(d->ctx, s->num_samples, s->length, s->start, row,
                     &s->num_samples, &lengths, &s->packed_offset);
  free(s->length);
  free(s->order);
  s->length = lengths;
  s->tokens = 0;
  sort_step(d, s);
}

/*---- What each data argument holds ----*/

/* A data argument's part in a step of samples: one-hot tokens (f32
   [rows, positions, vocabulary]; as targets, times the token weights), or
   integer ids of the tokens or of their targets ([rows, positions]) beside
   the targets' weights (f32 [rows, positions]), as a PyTorch loss
   `(cross_entropy(logits, targets, reduction="none") * weights).sum()`
   takes them; and inputs a model declares (pprt_set_packed_input) to mask
   attention between the documents of a row: each token's document index
   within its row and position within its document. */
typedef enum sample_role {
  ROLE_NONE,
  ROLE_ONE_HOT_INPUT,
  ROLE_ONE_HOT_TARGET,
  ROLE_INPUT_IDS,
  ROLE_TARGET_IDS,
  ROLE_TOKEN_WEIGHTS,
  ROLE_DOCUMENT_IDS,
  ROLE_POSITION_IDS,
  NUM_ROLES
} sample_role;

static bool is_data(const pprt_buffer_desc *b) {
  return b->defined && (b->kind == PPRT_INPUT || b->kind == PPRT_TARGET);
}

static sample_role role_of(const pprt_buffer_desc *b) {
  bool input = b->kind == PPRT_INPUT;
  bool ids = b->dtype == PPRT_I32 || b->dtype == PPRT_I64;
  if (b->packed_input)
    return b->packed_input == PPRT_DOCUMENT_IDS ? ROLE_DOCUMENT_IDS
                                                : ROLE_POSITION_IDS;
  if (b->dtype == PPRT_F32 && b->ndims == 3)
    return input ? ROLE_ONE_HOT_INPUT : ROLE_ONE_HOT_TARGET;
  if (ids && b->ndims == 2)
    return input ? ROLE_INPUT_IDS : ROLE_TARGET_IDS;
  if (!input && b->dtype == PPRT_F32 && b->ndims == 2)
    return ROLE_TOKEN_WEIGHTS;
  return ROLE_NONE;
}

static const char *kind_word(const pprt_buffer_desc *b) {
  return b->kind == PPRT_INPUT ? "input" : "target";
}

static const char *const role_names[NUM_ROLES] = {
    "",           "one-hot tokens", "one-hot targets", "token ids",
    "target ids", "token weights",  "document ids",    "position ids"};

/* The data argument of `role` in variant `variant` on this rank, or NULL;
   `*other` is set to one of another argument in the same role. */
static const pprt_buffer_desc *find_role(const pprt_context *ctx,
                                         sample_role role, int32_t variant,
                                         const pprt_buffer_desc **other) {
  const pprt_buffer_desc *found = NULL;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!is_data(b) || b->variant != variant || role_of(b) != role)
      continue;
    if (found && found->index != b->index)
      *other = b;
    if (!found)
      found = b;
  }
  return found;
}

/* The document and position ids go with the tokens, at their rows and
   positions, and positions must lie within the table they index. */
static bool check_packed_inputs(const pprt_length_index *x,
                                const pprt_buffer_desc *const *of, char *err,
                                size_t err_size) {
  const pprt_buffer_desc *tokens =
      of[ROLE_INPUT_IDS] ? of[ROLE_INPUT_IDS] : of[ROLE_ONE_HOT_INPUT];
  for (int32_t role = ROLE_DOCUMENT_IDS; role <= ROLE_POSITION_IDS; ++role) {
    const pprt_buffer_desc *b = of[role];
    if (!b)
      continue;
    if (tokens &&
        (b->dims[0] != tokens->dims[0] || b->dims[1] != tokens->dims[1]))
      return index_error(err, err_size, x->label,
                         "input argument %d (the %s) is [%lld, %lld]; input "
                         "argument %d (the tokens) is [%lld, %lld]",
                         b->index, role_names[role], (long long)b->dims[0],
                         (long long)b->dims[1], tokens->index,
                         (long long)tokens->dims[0],
                         (long long)tokens->dims[1]);
    if (b->id_bound > 0 && b->id_bound < b->dims[1])
      return index_error(err, err_size, x->label,
                         "input argument %d (the %s) indexes a table of %lld "
                         "rows; its %lld positions need %lld",
                         b->index, role_names[role], (long long)b->id_bound,
                         (long long)b->dims[1], (long long)b->dims[1]);
  }
  return true;
}

/* Integer targets need the weights that make the loss the mean over the
   step's real tokens, and weights need the targets they weigh, at the same
   rows and positions; each role is one argument. Checked per shape variant
   among the arguments of this rank's stages (the loss reads targets and
   weights together, so one stage holds both). */
static bool check_variant_roles(const pprt_context *ctx,
                                const pprt_length_index *x, int32_t variant,
                                char *err, size_t err_size) {
  const pprt_buffer_desc *of[NUM_ROLES] = {NULL};
  for (int32_t role = ROLE_ONE_HOT_INPUT; role < NUM_ROLES; ++role) {
    const pprt_buffer_desc *twice = NULL;
    of[role] = find_role(ctx, (sample_role)role, variant, &twice);
    if (twice)
      return index_error(err, err_size, x->label,
                         "%s argument %d and %s argument %d both take %s; "
                         "variable-length samples fill one argument of each "
                         "kind",
                         kind_word(of[role]), of[role]->index, kind_word(twice),
                         twice->index, role_names[role]);
  }
  const pprt_buffer_desc *ids = of[ROLE_TARGET_IDS];
  const pprt_buffer_desc *weights = of[ROLE_TOKEN_WEIGHTS];
  if (ids && !weights)
    return index_error(err, err_size, x->label,
                       "target argument %d holds token ids, but no f32 "
                       "[rows, positions] target argument weighs them: "
                       "padding would count in the loss (weigh the "
                       "per-token loss, docs/VariableLength.md)",
                       ids->index);
  if (weights && !ids)
    return index_error(err, err_size, x->label,
                       "target argument %d is f32 [rows, positions] token "
                       "weights, but no i32/i64 target argument holds the "
                       "tokens they weigh",
                       weights->index);
  if (ids &&
      (weights->dims[0] != ids->dims[0] || weights->dims[1] != ids->dims[1]))
    return index_error(err, err_size, x->label,
                       "target argument %d (the token weights) is [%lld, "
                       "%lld]; target argument %d (the target ids) is [%lld, "
                       "%lld]",
                       weights->index, (long long)weights->dims[0],
                       (long long)weights->dims[1], ids->index,
                       (long long)ids->dims[0], (long long)ids->dims[1]);
  if (ids && of[ROLE_ONE_HOT_TARGET])
    return index_error(err, err_size, x->label,
                       "target argument %d is one-hot and target argument %d "
                       "holds ids: give the targets one way",
                       of[ROLE_ONE_HOT_TARGET]->index, ids->index);
  return check_packed_inputs(x, of, err, err_size);
}

/* Every data argument has a role, and the roles go together. */
static bool check_roles(const pprt_context *ctx, const pprt_length_index *x,
                        char *err, size_t err_size) {
  int32_t variants = 1;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!is_data(b))
      continue;
    if (b->variant >= variants)
      variants = b->variant + 1;
    if (role_of(b) == ROLE_NONE)
      return index_error(
          err, err_size, x->label,
          "%s argument %d is %d-D %s; variable-length samples fill token ids "
          "(i32/i64 [rows, positions]) with f32 [rows, positions] token "
          "weights as a target, or one-hot f32 [rows, positions, "
          "vocabulary] tensors",
          kind_word(b), b->index, b->ndims, pprt_dtype_name(b->dtype));
  }
  for (int32_t v = 0; v < variants; ++v)
    if (!check_variant_roles(ctx, x, v, err, err_size))
      return false;
  return true;
}

/* Whether micro-batch `mb` runs the variant of data buffer `b`. */
static bool runs_variant(const pprt_context *ctx, int32_t mb,
                         const pprt_buffer_desc *b) {
  int32_t variant = ctx->microbatch_variant ? ctx->microbatch_variant[mb] : 0;
  return variant == b->variant;
}

/* The samples of step `i` that data buffer `b` of micro-batch `mb` of
   replica `replica` holds must fit its context and the tokens; names the
   first that does not. */
static bool check_microbatch(const pprt_driver *d, const pprt_length_index *x,
                             const pprt_buffer_desc *b, int64_t i,
                             int32_t replica, int32_t mb, int64_t corpus_length,
                             char *err, size_t err_size) {
  const index_step *s = &x->steps[i];
  int64_t first = pprt_microbatch_first_row(d->ctx, b, replica, mb);
  for (int64_t g = first; g < first + b->dims[0]; ++g) {
    int64_t length = s->length[s->order[g]];
    if (length <= b->dims[1] && length < corpus_length)
      continue;
    return index_error(
        err, err_size, x->label,
        "step %lld: sample %lld has %lld tokens, more than %s (replica %d, "
        "micro-batch %d, stage %d)",
        (long long)i, (long long)s->order[g], (long long)length,
        length > b->dims[1] ? "the micro-batch's context" : "the corpus holds",
        replica, mb, b->stage);
  }
  return true;
}

/* Under step plans: the rows of line `i` for each replica's plan, the
   replica's samples (the sorted ones at positions r, r + D, r + 2D, ...)
   filling each micro-batch's first rows, as many as the table says. */
static bool place_planned(const pprt_driver *d, pprt_length_index *x, int64_t i,
                          char *err, size_t err_size) {
  const pprt_context *ctx = d->ctx;
  index_step *s = &x->steps[i];
  int32_t replicas = ctx->plan_replicas;
  s->num_rows = pprt_plan_first_row(ctx, (int32_t)i, replicas - 1, 0);
  const int32_t *last = pprt_plan_entry(ctx, (int32_t)i, replicas - 1);
  s->num_rows += ctx->plans[last[0]].rows_before[last[1]];
  s->row_sample =
      pprt_xcalloc(d->ctx, (size_t)s->num_rows, sizeof *s->row_sample);
  for (int32_t r = 0; r < replicas; ++r) {
    const int32_t *entry = pprt_plan_entry(ctx, (int32_t)i, r);
    int64_t position = r;
    for (int32_t mb = 0; mb < entry[1]; ++mb) {
      int64_t row = pprt_plan_first_row(ctx, (int32_t)i, r, mb);
      int64_t rows = ctx->plans[entry[0]].rows_before[mb + 1] -
                     ctx->plans[entry[0]].rows_before[mb];
      for (int64_t k = 0; k < rows; ++k, ++row) {
        bool real = k < entry[2 + mb] && position < s->num_samples;
        s->row_sample[row] = real ? s->order[position] : -1;
        position += real ? replicas : 0;
      }
    }
    int64_t planned = 0, own = (s->num_samples - r + replicas - 1) / replicas;
    for (int32_t mb = 0; mb < entry[1]; ++mb)
      planned += entry[2 + mb];
    if (planned != own)
      return index_error(err, err_size, x->label,
                         "step %lld has %lld samples; the program's plan of "
                         "it (pp-compile --step-plans) holds others: compile "
                         "with this index, or choose among its plans with "
                         "--choose-plans",
                         (long long)step_of_line(x, i),
                         (long long)s->num_samples);
  }
  return true;
}

/* --choose-plans: a step table for this index, each step's replicas on
   the compiled plans that hold their samples best. */
static bool choose_plans(pprt_driver *d, const pprt_length_index *x, char *err,
                         size_t err_size) {
  int64_t n = x->num_steps;
  int64_t **sorted = pprt_xcalloc(d->ctx, (size_t)n, sizeof *sorted);
  int64_t *counts = pprt_xcalloc(d->ctx, (size_t)n, sizeof *counts);
  for (int64_t i = 0; i < n; ++i) {
    const index_step *s = &x->steps[i];
    counts[i] = s->num_samples;
    sorted[i] = pprt_xcalloc(d->ctx, (size_t)s->num_samples, sizeof *sorted[i]);
    for (int64_t k = 0; k < s->num_samples; ++k)
      sorted[i][k] = s->length[s->order[k]];
  }
  int64_t step = 0;
  int32_t replica = 0;
  bool ok = pprt_choose_step_plans(d->ctx, n, (const int64_t *const *)sorted,
                                   counts, &step, &replica);
  int64_t longest = ok ? 0 : sorted[step][replica];
  for (int64_t i = 0; i < n; ++i)
    free(sorted[i]);
  free(sorted);
  free(counts);
  if (ok && !x->streaming)
    pprt_report_step_plans(d->ctx, x->path);
  if (ok)
    return true;
  return index_error(err, err_size, x->label,
                     "step %lld: no plan of the program holds replica %d's "
                     "samples, the longest of %lld tokens (--choose-plans): "
                     "compile with an index like this one",
                     (long long)step_of_line(x, step), replica,
                     (long long)longest);
}

/* Under step plans: each micro-batch's samples fit its variant's context
   and the tokens. */
static bool check_planned(const pprt_driver *d, const pprt_length_index *x,
                          const pprt_buffer_desc *b, int64_t corpus_length,
                          char *err, size_t err_size) {
  const pprt_context *ctx = d->ctx;
  for (int64_t i = 0; i < x->num_steps; ++i) {
    const index_step *s = &x->steps[i];
    for (int32_t r = 0; r < ctx->plan_replicas; ++r) {
      const int32_t *entry = pprt_plan_entry(ctx, (int32_t)i, r);
      const pprt_plan *plan = &ctx->plans[entry[0]];
      for (int32_t mb = 0; mb < entry[1]; ++mb) {
        if (plan->variant[mb] != b->variant)
          continue;
        int64_t first = pprt_plan_first_row(ctx, (int32_t)i, r, mb);
        for (int64_t g = first; g < first + b->dims[0]; ++g) {
          int64_t k = s->row_sample[g];
          if (k < 0 ||
              (s->length[k] <= b->dims[1] && s->length[k] < corpus_length))
            continue;
          return index_error(
              err, err_size, x->label,
              "step %lld: sample %lld has %lld tokens, more than %s "
              "(replica %d, micro-batch %d, stage %d)",
              (long long)step_of_line(x, i), (long long)k,
              (long long)s->length[k],
              s->length[k] > b->dims[1] ? "the micro-batch's context"
                                        : "the corpus holds",
              r, mb, b->stage);
        }
      }
    }
  }
  return true;
}

/* Each step needs as many samples as the program's global batch has rows,
   each within its micro-batch's context and the tokens. */
static bool check_fits(const pprt_driver *d, const pprt_length_index *x,
                       const pprt_buffer_desc *b, int64_t corpus_length,
                       char *err, size_t err_size) {
  const pprt_context *ctx = d->ctx;
  int32_t replicas = pprt_num_data_replicas(ctx);
  /* Replica 1 starts after replica 0's rows. */
  int64_t replica_rows = pprt_microbatch_first_row(ctx, b, 1, 0);
  int64_t batch = replica_rows * replicas;
  for (int64_t i = 0; i < x->num_steps; ++i) {
    const index_step *s = &x->steps[i];
    if (s->num_samples != batch)
      return index_error(err, err_size, x->label,
                         "step %lld has %lld samples; the program's global "
                         "batch has %lld rows (%d micro-batches on %d "
                         "replica%s)",
                         (long long)i, (long long)s->num_samples,
                         (long long)batch, ctx->num_microbatches, replicas,
                         replicas == 1 ? "" : "s");
    for (int32_t r = 0; r < replicas; ++r)
      for (int32_t mb = 0; mb < ctx->num_microbatches; ++mb)
        if (runs_variant(ctx, mb, b) &&
            !check_microbatch(d, x, b, i, r, mb, corpus_length, err, err_size))
          return false;
  }
  return true;
}

/* Checks each data argument against the index's steps. */
static bool check_data(const pprt_driver *d, const pprt_length_index *x,
                       char *err, size_t err_size) {
  const pprt_context *ctx = d->ctx;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!is_data(b))
      continue;
    if (ctx->num_plans
            ? !check_planned(d, x, b, x->corpus_length, err, err_size)
            : !check_fits(d, x, b, x->corpus_length, err, err_size))
      return false;
  }
  return true;
}

/* A stream starts empty: its steps come with pprt_length_index_advance.
   Documents are read a step ahead of the running one without
   --plan-lookahead. */
static bool start_stream(pprt_driver *d, pprt_length_index *x, char *err,
                         size_t err_size) {
  x->streaming = true;
  x->num_steps = (d->opts.plan_lookahead > 0 ? d->opts.plan_lookahead : 0) + 1;
  x->steps = pprt_xcalloc(d->ctx, (size_t)x->num_steps, sizeof *x->steps);
  return check_roles(d->ctx, x, err, err_size);
}

bool pprt_length_index_load(pprt_driver *d, int64_t corpus_length, char *err,
                            size_t err_size) {
  pprt_length_index *x = pprt_xcalloc(d->ctx, 1, sizeof *x);
  d->length_index = x;
  x->path = d->opts.sample_lengths_path;
  snprintf(x->label, sizeof x->label, "--sample-lengths %s", x->path);
  x->corpus_length = corpus_length;
  if (pprt_documents_wanted(&d->opts)) {
    x->documents = pprt_documents_open(d, corpus_length, err, err_size);
    if (!x->documents)
      return false;
    snprintf(x->label, sizeof x->label, "%s",
             pprt_documents_label(x->documents));
  }
  if (d->opts.plan_lookahead >= 0 || x->documents)
    return start_stream(d, x, err, err_size);
  char why[256];
  size_t size = 0;
  char *text = (char *)pprt_read_input(x->path, &size, why, sizeof why);
  if (!text)
    return index_error(err, err_size, x->label, "%s", why);
  bool ok = parse_index(d, x, text, size, err, err_size);
  free(text);
  if (!ok)
    return false;
  for (int64_t i = 0; i < x->num_steps; ++i) {
    place_step(d, x, &x->steps[i]);
    pack_step(d, &x->steps[i]);
  }
  const pprt_context *ctx = d->ctx;
  if (ctx->num_plans && d->opts.choose_plans &&
      !choose_plans(d, x, err, err_size))
    return false;
  if (ctx->num_plans && x->num_steps != ctx->plan_lines)
    return index_error(err, err_size, x->label,
                       "%lld steps; the program was planned for %d "
                       "(pp-compile --step-plans): compile with this index, "
                       "or choose among its plans with --choose-plans",
                       (long long)x->num_steps, ctx->plan_lines);
  for (int64_t i = 0; ctx->num_plans && i < x->num_steps; ++i)
    if (!place_planned(d, x, i, err, err_size))
      return false;
  return check_roles(ctx, x, err, err_size) && check_data(d, x, err, err_size);
}

/*---- A stream (--plan-lookahead) ----*/

/* Rank 0: the next step of the file into `s`; its sample count, 0 at the
   file's end, -1 (the reason in `err`) if it cannot be read: a line that
   is not lengths, or one that does not come within --timeout. */
static int64_t read_step(pprt_driver *d, pprt_length_index *x, index_step *s,
                         char *err, size_t err_size) {
  char why[160];
  if (!x->reader &&
      !(x->reader = pprt_line_reader_open(x->path, why, sizeof why))) {
    index_error(err, err_size, x->label, "%s", why);
    return -1;
  }
  while (s->num_samples == 0) {
    char *line;
    int got = pprt_line_reader_next(x->reader, d->ctx->opts.timeout_s, &line,
                                    why, sizeof why);
    if (got <= 0) {
      if (got < 0)
        index_error(err, err_size, x->label, "line %lld: %s",
                    (long long)x->line_number + 1, why);
      return got;
    }
    ++x->line_number;
    line[strcspn(line, "#")] = '\0';
    if (!parse_line(d, line, s, why, sizeof why)) {
      index_error(err, err_size, x->label, "line %lld: %s",
                  (long long)x->line_number, why);
      return -1;
    }
  }
  return s->num_samples;
}

/* The next step of the stream on every rank: rank 0 reads it and sends its
   lengths to the others. Its sample count, 0 at the stream's end, -1 if
   rank 0 could not read it (the reason in rank 0's `err`). */
static int64_t next_step(pprt_driver *d, pprt_length_index *x, index_step *s,
                         char *err, size_t err_size) {
  pprt_context *ctx = d->ctx;
  if (x->documents) /* every rank reads the same tokens */
    return s->num_samples = pprt_documents_next_step(
               d, x->documents, &s->length, &s->start, err, err_size);
  pprt_transport *t = pprt_host_transport(ctx->transport);
  int32_t tag = (int32_t)t->max_tag; /* above every transfer's */
  int64_t n = 0;
  if (t->world_rank == 0)
    n = read_step(d, x, s, err, err_size);
  for (int32_t peer = 1; t->world_rank == 0 && peer < t->world_size; ++peer)
    if (!t->ops->wait_for(t, t->ops->isend(t, &n, sizeof n, peer, tag),
                          ctx->opts.timeout_s) ||
        (n > 0 && !t->ops->wait_for(
                      t,
                      t->ops->isend(t, s->length,
                                    n * (int64_t)sizeof *s->length, peer, tag),
                      ctx->opts.timeout_s)))
      pprt_fatal_silent(ctx, peer, "rank %d to take step %lld of %s", peer,
                        (long long)x->read, x->path);
  if (t->world_rank == 0)
    return n;
  /* Rank 0 waits for its writer within --timeout, then says so. */
  pprt_recv_status got =
      t->ops->recv(t, &n, sizeof n, 0, tag, 2 * ctx->opts.timeout_s);
  if (got == PPRT_RECV_OK && n > 0) {
    s->length = pprt_xcalloc(ctx, (size_t)n, sizeof *s->length);
    s->num_samples = n;
    got = t->ops->recv(t, s->length, n * (int64_t)sizeof *s->length, 0, tag,
                       ctx->opts.timeout_s);
  }
  if (got != PPRT_RECV_OK)
    pprt_fatal_silent(ctx, 0, "rank 0 to read step %lld of %s",
                      (long long)x->read, x->path);
  snprintf(err, err_size, "rank 0 could not read %s", x->path);
  return n;
}

static void free_step(index_step *s) {
  free(s->length);
  free(s->start);
  free(s->order);
  free(s->row_sample);
  free(s->packed_at);
  free(s->packed_offset);
  memset(s, 0, sizeof *s);
}

/* Reads the stream up to step `want` (exclusive) into the ring; false
   if it ends before (the run having `end` steps). */
static bool read_until(pprt_driver *d, pprt_length_index *x, int64_t want,
                       int64_t end, char *err, size_t err_size) {
  while (x->read < want) {
    index_step s = {0};
    int64_t n = next_step(d, x, &s, err, err_size);
    if (n <= 0) {
      free_step(&s);
      return n < 0 ? false
                   : index_error(err, err_size, x->label,
                                 "the index ended after %lld steps; the run "
                                 "has %lld (--steps)",
                                 (long long)x->read, (long long)end);
    }
    sort_step(d, &s);
    if (!s.start) /* documents start where they are */
      place_step(d, x, &s);
    pack_step(d, &s);
    index_step *line = &x->steps[x->read % x->num_steps];
    free_step(line);
    *line = s;
    ++x->read;
  }
  return true;
}

/* The ring's plans, rows and checks after new steps came in. */
static bool plan_ring(pprt_driver *d, pprt_length_index *x, char *err,
                      size_t err_size) {
  if (!choose_plans(d, x, err, err_size))
    return false;
  for (int64_t i = 0; i < x->num_steps; ++i) {
    free(x->steps[i].row_sample);
    if (!place_planned(d, x, i, err, err_size))
      return false;
  }
  return check_data(d, x, err, err_size);
}

bool pprt_length_index_advance(pprt_driver *d, int64_t step, int64_t end) {
  pprt_length_index *x = d->length_index;
  int64_t want = x && x->streaming ? step + x->num_steps : 0;
  want = want < end ? want : end;
  if (!x || x->read >= want)
    return true;
  char err[640] = "";
  bool ok = read_until(d, x, want, end, err, sizeof err) &&
            plan_ring(d, x, err, sizeof err);
  return pprt_report_first_failure(d, ok, err, "the sample lengths' checks");
}

void pprt_length_index_free(pprt_length_index *x) {
  if (!x)
    return;
  for (int64_t i = 0; i < x->num_steps; ++i)
    free_step(&x->steps[i]);
  pprt_line_reader_close(x->reader);
  pprt_documents_free(x->documents);
  free(x->steps);
  free(x);
}

bool pprt_length_index_holds_tokens(const pprt_length_index *x,
                                    const pprt_buffer_desc *b) {
  sample_role role = role_of(b);
  return !x || (role != ROLE_TOKEN_WEIGHTS && role != ROLE_DOCUMENT_IDS &&
                role != ROLE_POSITION_IDS);
}

/* Writes token `v` at element `at` of `b`'s buffer `out`, in its role. */
static void put_token(const pprt_buffer_desc *b, sample_role role, void *out,
                      int64_t at, int64_t v, float weight) {
  if (role == ROLE_ONE_HOT_INPUT || role == ROLE_ONE_HOT_TARGET)
    ((float *)out)[at * b->dims[2] + v] = weight;
  else if (role == ROLE_TOKEN_WEIGHTS)
    ((float *)out)[at] = weight;
  else if (b->dtype == PPRT_I64)
    ((int64_t *)out)[at] = v;
  else
    ((int32_t *)out)[at] = (int32_t)v;
}

/* The offset of position `t` of row sample `k` (-1: a padding row) within
   its document, or within the padding after the row's last. */
static int64_t document_offset(const pprt_driver *d, const index_step *s,
                               int64_t k, int64_t t) {
  if (k < 0)
    return t;
  if (s->packed_offset)
    return s->packed_offset[k * d->ctx->packed_row + t];
  return t < s->length[k] ? t : t - s->length[k];
}

/* A row's document ids (a new document where an offset is 0, the padding
   its own) or its positions within their documents. */
static void fill_packed_input(const pprt_driver *d, const pprt_buffer_desc *b,
                              sample_role role, const index_step *s,
                              int64_t first_row, void *out) {
  int64_t positions = b->dims[1];
  for (int64_t r = 0; r < b->dims[0]; ++r) {
    int64_t k =
        s->row_sample ? s->row_sample[first_row + r] : s->order[first_row + r];
    int64_t document = 0;
    for (int64_t t = 0; t < positions; ++t) {
      int64_t offset = document_offset(d, s, k, t);
      document += t > 0 && offset == 0;
      put_token(b, ROLE_INPUT_IDS, out, r * positions + t,
                role == ROLE_DOCUMENT_IDS ? document : offset, 0.0f);
    }
  }
}

void pprt_length_index_fill(const pprt_driver *d, const pprt_buffer_desc *b,
                            int64_t step, int64_t first_row, void *out) {
  const pprt_length_index *x = d->length_index;
  const index_step *s = &x->steps[step % x->num_steps];
  int64_t rows = b->dims[0], positions = b->dims[1];
  sample_role role = role_of(b);
  if (role == ROLE_DOCUMENT_IDS || role == ROLE_POSITION_IDS) {
    fill_packed_input(d, b, role, s, first_row, out);
    return;
  }
  bool target = b->kind == PPRT_TARGET;
  /* The step's loss is the mean over its real tokens: each target weighs
     1/N, padding nothing, whatever micro-batch holds it. */
  float weight = target ? (float)(1.0 / (double)s->tokens) : 1.0f;
  memset(out, 0, (size_t)b->bytes);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t k =
        s->row_sample ? s->row_sample[first_row + r] : s->order[first_row + r];
    if (k < 0)
      continue;
    for (int64_t t = 0; t < s->length[k]; ++t) {
      int64_t at = s->packed_at ? s->packed_at[k * d->ctx->packed_row + t]
                                : s->start[k] + t;
      int64_t v = pprt_corpus_token(d->corpus, at + target);
      put_token(b, role, out, r * positions + t, v, weight);
    }
  }
}
