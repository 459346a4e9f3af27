/* The driver's data source: deterministic parameter initialisation (or
   --init-weights, --resume) and synthetic training data (or --corpus,
   --tokens, --data). */
#include "driver/driver.h"
#include "driver/samples.h"
#include "pprt_math.h"

#include <stdio.h>
#include <stdlib.h>

/* Replaces the built-in generator when a linked object defines it. */
#pragma weak pprt_user_load_data

/* Domain tags keep the hash streams of params, data and teacher apart. */
enum {
  TAG_PARAM = 0x50415241,   /* "PARA" */
  TAG_DATA = 0x44415441,    /* "DATA" */
  TAG_TEACHER = 0x54434852, /* "TCHR" */
};

/* Maps a hash to a float in [-1, 1). */
static float uniform_pm1(uint64_t h) {
  return (float)((double)(h >> 11) * 0x1.0p-52 - 1.0);
}

static void init_param(const pprt_driver *d, const pprt_buffer_desc *b,
                       float *out) {
  if (d->init_weights) {
    pprt_weights_init_param(d, b, out);
    return;
  }
  if (b->kind == PPRT_STATE) { /* batch norm's statistics start at zero */
    memset(out, 0, (size_t)b->bytes);
    return;
  }
  int64_t d0 = b->ndims > 0 ? b->dims[0] : 1;
  float a = (float)(1.0 / pprt_sqrt((double)d0));
  for (int64_t i = 0; i < b->numel; ++i) {
    uint64_t keys[] = {TAG_PARAM, (uint32_t)b->index, (uint64_t)i};
    out[i] = a * uniform_pm1(pprt_hash(d->opts.seed, keys, 3));
  }
}

static float input_value(const pprt_driver *d, int32_t index, int64_t step,
                         int64_t row, int64_t col) {
  uint64_t keys[] = {TAG_DATA, (uint64_t)step, (uint32_t)index, (uint64_t)row,
                     (uint64_t)col};
  return uniform_pm1(pprt_hash(d->opts.seed, keys, 5));
}

static float teacher_value(const pprt_driver *d, int64_t k, int64_t j,
                           int64_t din) {
  if (d->teacher && k < d->teacher_din && j < d->teacher_dout)
    return d->teacher[k * d->teacher_dout + j];
  uint64_t keys[] = {TAG_TEACHER, (uint64_t)k, (uint64_t)j};
  return uniform_pm1(pprt_hash(d->opts.seed, keys, 3)) /
         (float)pprt_sqrt((double)din);
}

/* Returns the buffer standing for data argument (kind, index), if any. */
static const pprt_buffer_desc *find_data(const pprt_context *ctx, int32_t kind,
                                         int32_t index) {
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == kind && b->index == index)
      return b;
  }
  return NULL;
}

/* The teacher's input x0: the 2-D INPUT with the lowest index. */
static const pprt_buffer_desc *find_x0(const pprt_context *ctx) {
  const pprt_buffer_desc *x0 = NULL;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == PPRT_INPUT && b->ndims == 2 &&
        (!x0 || b->index < x0->index))
      x0 = b;
  }
  return x0;
}

/* Caches the teacher matrix once all buffers are defined. */
static void prepare_teacher(pprt_driver *d) {
  const pprt_context *ctx = d->ctx;
  const pprt_buffer_desc *x0 = find_x0(ctx);
  if (!x0)
    return;
  int64_t dout = 0;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->kind == PPRT_TARGET && b->ndims == 2 &&
        b->dims[1] > dout)
      dout = b->dims[1];
  }
  d->x0_index = x0->index;
  /* Scratch for one row of x0, so that loading data allocates nothing. */
  d->x0_row = pprt_xcalloc(ctx, (size_t)x0->dims[1], sizeof(float));
  if (dout == 0)
    return;
  int64_t din = x0->dims[1];
  d->teacher = pprt_xcalloc(ctx, (size_t)(din * dout), sizeof(float));
  for (int64_t k = 0; k < din; ++k)
    for (int64_t j = 0; j < dout; ++j)
      d->teacher[k * dout + j] = teacher_value(d, k, j, din);
  d->teacher_din = din;
  d->teacher_dout = dout;
}

/* Fills one row of a target as tanh(x0[row] @ T). */
static void teacher_row(const pprt_driver *d, int64_t din, int64_t step,
                        int64_t row, int64_t dout, float *x0_row, float *out) {
  for (int64_t k = 0; k < din; ++k)
    x0_row[k] = input_value(d, d->x0_index, step, row, k);
  for (int64_t j = 0; j < dout; ++j) {
    double acc = 0.0;
    for (int64_t k = 0; k < din; ++k)
      acc += (double)x0_row[k] * teacher_value(d, k, j, din);
    out[j] = (float)pprt_tanh(acc);
  }
}

/* Whether target `index` is produced by the teacher rather than drawn. */
static int64_t teacher_din(const pprt_driver *d, int32_t kind, int32_t index) {
  if (kind != PPRT_TARGET || d->x0_index < 0)
    return 0;
  const pprt_buffer_desc *t = find_data(d->ctx, PPRT_TARGET, index);
  if (!t || t->ndims != 2)
    return 0;
  return find_data(d->ctx, PPRT_INPUT, d->x0_index)->dims[1];
}

static void builtin_rows(const pprt_driver *d, int32_t kind, int32_t index,
                         int64_t step, int64_t first_row, int64_t num_rows,
                         int64_t row_size, float *out) {
  int64_t din = teacher_din(d, kind, index);
  if (din > 0) {
    for (int64_t r = 0; r < num_rows; ++r)
      teacher_row(d, din, step, first_row + r, row_size, d->x0_row,
                  out + r * row_size);
    return;
  }
  for (int64_t r = 0; r < num_rows; ++r)
    for (int64_t j = 0; j < row_size; ++j)
      out[r * row_size + j] = input_value(d, index, step, first_row + r, j);
}

static void source_init_param(void *self, pprt_context *ctx,
                              const pprt_buffer_desc *b, int32_t id,
                              void *out) {
  (void)ctx;
  (void)id;
  init_param(self, b, out);
}

static bool source_param_state(void *self, pprt_context *ctx,
                               const pprt_buffer_desc *b, int32_t id,
                               int64_t *num_updates, const void **m,
                               const void **v) {
  (void)ctx;
  (void)id;
  return pprt_checkpoint_param_state(self, b, num_updates, m, v);
}

static void source_load_rows(void *self, pprt_context *ctx,
                             const pprt_buffer_desc *b, int32_t id,
                             int64_t step, int64_t first_row, void *out) {
  const pprt_driver *d = self;
  if (d->corpus)
    pprt_corpus_check(d);
  if (d->length_index) {
    pprt_length_index_fill(d, b, step, first_row, out);
    if (d->corpus)
      pprt_corpus_check(d);
    return;
  }
  if (d->corpus) {
    /* Token ids fill integer buffers; a file changed during the reads
       (a read came short, or read other bytes) is found after them. */
    pprt_corpus_fill(d, b, step, first_row, out);
    pprt_corpus_check(d);
    return;
  }
  if (d->samples) {
    pprt_samples_fill(self, b, step, first_row, out);
    return;
  }
  if ((b->dtype == PPRT_I32 || b->dtype == PPRT_I64) && d->opts.num_classes) {
    pprt_class_ids_fill(d, b, step, first_row, out);
    return;
  }
  pprt_require_f32(ctx, b, id, "loading training data");
  int64_t rows = b->ndims > 0 ? b->dims[0] : 1;
  int64_t row_size = b->numel / rows;
  if (pprt_user_load_data)
    pprt_user_load_data(ctx, b->kind, b->index, step, first_row, rows, row_size,
                        out);
  else
    builtin_rows(d, b->kind, b->index, step, first_row, rows, row_size, out);
}

/* The driver behind the data source installed in `ctx`. */
static const pprt_driver *driver_of(const pprt_context *ctx) {
  const pprt_data_source *src = pprt_get_data_source(ctx);
  if (src->load_rows != source_load_rows)
    pprt_fatal(ctx, "pprt_builtin_load_data: the runtime's driver does not "
                    "feed this program");
  return src->self;
}

void pprt_builtin_load_data(const pprt_context *ctx, int32_t kind,
                            int32_t index, int64_t step, int64_t first_row,
                            int64_t num_rows, int64_t row_size, float *out) {
  builtin_rows(driver_of(ctx), kind, index, step, first_row, num_rows, row_size,
               out);
}

void pprt_driver_install_data_source(pprt_driver *d) {
  d->x0_index = -1;
  pprt_data_source src = {d, source_init_param, source_param_state,
                          source_load_rows};
  pprt_set_data_source(d->ctx, &src);
}

/* Synthetic data fills f32 arguments, and integer ones with --classes. */
static bool check_synthetic(const pprt_driver *d, char *err, size_t size) {
  const pprt_context *ctx = d->ctx;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (!b->defined || (b->kind != PPRT_INPUT && b->kind != PPRT_TARGET) ||
        b->dtype == PPRT_F32)
      continue;
    bool ids = b->dtype == PPRT_I32 || b->dtype == PPRT_I64;
    if (ids && d->opts.num_classes && b->id_bound > 0 &&
        d->opts.num_classes > b->id_bound) {
      snprintf(err, size,
               "--classes %lld draws ids in [0, %lld), but %s argument %d "
               "indexes a table of %lld rows: give --classes %lld or fewer",
               (long long)d->opts.num_classes, (long long)d->opts.num_classes,
               b->kind == PPRT_INPUT ? "input" : "target", b->index,
               (long long)b->id_bound, (long long)b->id_bound);
      return false;
    }
    if (ids && d->opts.num_classes)
      continue;
    snprintf(err, size,
             "%s argument %d holds %s: synthetic data fills f32 arguments%s; "
             "give --data (or --tokens)",
             b->kind == PPRT_INPUT ? "input" : "target", b->index,
             pprt_dtype_name(b->dtype),
             ids ? ", and integer ones with --classes N (ids in [0, N))" : "");
    return false;
  }
  return true;
}

/* The input of the lowest index taking document ids or positions, which
   come from a step's samples, or NULL. */
static const pprt_buffer_desc *first_packed_input(const pprt_context *ctx) {
  const pprt_buffer_desc *first = NULL;
  for (int32_t id = 0; id < ctx->num_buffers; ++id) {
    const pprt_buffer_desc *b = &ctx->buffers[id];
    if (b->defined && b->packed_input && (!first || b->index < first->index))
      first = b;
  }
  return first;
}

bool pprt_driver_prepare_data(pprt_driver *d) {
  prepare_teacher(d);
  char err[640];
  bool ok = false;
  bool corpus = d->opts.corpus_path || d->opts.tokens_path;
  const pprt_buffer_desc *packed;
  if (corpus && d->opts.data_spec)
    snprintf(err, sizeof err, "--data excludes --corpus and --tokens");
  else if (d->ctx->num_plans && !d->opts.sample_lengths_path &&
           d->opts.document_end < 0)
    snprintf(err, sizeof err,
             "the program was planned per step for an index of sample "
             "lengths (pp-compile --step-plans): run it with "
             "--sample-lengths and --corpus or --tokens");
  else if (d->opts.choose_plans && !d->ctx->num_plans)
    snprintf(err, sizeof err,
             "--choose-plans chooses among a program's step plans: compile "
             "it with pp-compile --step-plans");
  else if (!d->opts.sample_lengths_path && d->opts.document_end < 0 &&
           (packed = first_packed_input(d->ctx)))
    snprintf(err, sizeof err,
             "input argument %d takes each token's %s (pp.packed_input), "
             "which only variable-length samples give: run with "
             "--sample-lengths (or --document-end) and --tokens or --corpus",
             packed->index,
             packed->packed_input == PPRT_DOCUMENT_IDS
                 ? "document index within its row"
                 : "position within its document");
  else if (!corpus && d->opts.sample_lengths_path)
    snprintf(err, sizeof err,
             "--sample-lengths needs --corpus or --tokens: the samples' "
             "tokens");
  else if (corpus ? pprt_corpus_load(d, err, sizeof err)
           : d->opts.data_spec
               ? pprt_samples_load(d, err, sizeof err)
               : pprt_user_load_data || check_synthetic(d, err, sizeof err))
    ok = true;
  return pprt_report_first_failure(d, ok, err, "the training data's checks");
}

bool pprt_report_first_failure(pprt_driver *d, bool ok, const char *err,
                               const char *what) {
  pprt_transport *t = d->ctx->transport;
  int32_t first_failed = ok ? INT32_MAX : t->world_rank;
  pprt_min_everywhere(d->ctx, &first_failed, 1, what);
  if (first_failed == t->world_rank) {
    fprintf(stderr, "pprt: %s\n", err);
    fflush(stderr);
  }
  return first_failed == INT32_MAX;
}

void pprt_driver_free_data(pprt_driver *d) {
  free(d->teacher);
  free(d->x0_row);
  pprt_corpus_free(d->corpus);
  pprt_length_index_free(d->length_index);
  pprt_samples_free(d->samples);
  pprt_weights_free(d);
}
