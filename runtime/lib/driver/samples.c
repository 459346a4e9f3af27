/* Training data from arrays a user writes with numpy (--data): .npy files
   or tensors of safetensors files, one per data argument of the step,
   indexed by sample along their first dimension and drawn in a shuffled
   order per epoch; and the synthetic class ids of --classes. */
#include "driver/samples.h"
#include "driver/input_file.h"
#include "driver/npy.h"
#include "driver/safetensors.h"
#include "pprt_math.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keep these hash streams apart from the others (data.c, corpus.c). */
enum {
  TAG_SAMPLES = 0x53414D50, /* "SAMP" */
  TAG_CLASSES = 0x434C5353, /* "CLSS" */
};

#define MAX_DATA_ARGS 64

/* One array of --data: where its samples are and what they hold. */
typedef struct sample_array {
  char spec[512]; /* the --data entry, for messages */
  int32_t index;  /* the model argument it fills */
  int32_t dtype;  /* a pprt_dtype, or -1 if none matches */
  int32_t ndims;  /* including the sample dimension */
  int64_t dims[PPRT_ST_MAX_DIMS];
  const uint8_t *bytes;   /* sample 0 */
  uint8_t *data;          /* an .npy file, read whole */
  pprt_safetensors *file; /* a safetensors file read whole */
} sample_array;

struct pprt_samples {
  sample_array arrays[MAX_DATA_ARGS];
  int32_t num_arrays;
  int64_t num_samples;
  pprt_epoch_order order;
};

static bool fail(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t err_size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pprt_input_error(err, err_size, "--data ", fmt, ap);
  va_end(ap);
  return false;
}

/*---- .npy ----*/

/* The pprt dtype of an .npy descr ("<f4", ...), or -1. */
static int32_t npy_dtype(const char *descr) {
  static const struct {
    const char *descr;
    int32_t dtype;
  } known[] = {{"<f4", PPRT_F32},
               {"<f2", PPRT_F16},
               {"<i4", PPRT_I32},
               {"<i8", PPRT_I64},
               {"|b1", PPRT_I1}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
    if (strcmp(descr, known[i].descr) == 0)
      return known[i].dtype;
  return -1;
}

/* Reads the header of the .npy image `bytes`: dtype, shape and where the
   elements start. */
static bool parse_npy(sample_array *a, const uint8_t *bytes, size_t size,
                      char *err, size_t err_size) {
  pprt_npy npy;
  char why[320];
  if (!pprt_npy_parse(bytes, size, &npy, why, sizeof why))
    return fail(err, err_size, "%s: %s", a->spec, why);
  if (npy.fortran_order)
    return fail(err, err_size,
                "%s: the array is in Fortran order; write it C-contiguous "
                "(np.ascontiguousarray)",
                a->spec);
  a->dtype = npy_dtype(npy.descr);
  if (a->dtype < 0)
    return fail(err, err_size,
                "%s: the array's dtype '%s' is none of float32, float16, "
                "int32, int64 and bool",
                a->spec, npy.descr);
  a->ndims = npy.ndims;
  memcpy(a->dims, npy.dims, sizeof npy.dims);
  a->bytes = bytes + npy.data_offset;
  return true;
}

/* Reads the .npy file into private memory: a mapping would read what the
   file holds when a sample comes up, zeros or SIGBUS once it is truncated,
   other samples once it is rewritten. */
static bool read_npy(sample_array *a, char *err, size_t err_size) {
  char why[256];
  size_t size = 0;
  a->data = pprt_read_input(a->spec, &size, why, sizeof why);
  if (!a->data)
    return fail(err, err_size, "%s: %s", a->spec, why);
  return parse_npy(a, a->data, size, err, err_size);
}

_Static_assert(PPRT_NPY_MAX_DIMS <= PPRT_ST_MAX_DIMS,
               "an .npy shape fits a sample array");

/*---- safetensors: FILE.safetensors:NAME ----*/

static int32_t st_dtype(const char *name) {
  for (int32_t t = PPRT_F32; t <= PPRT_I1; ++t)
    if (strcmp(name, pprt_st_dtype_name(t)) == 0)
      return t;
  return -1;
}

static bool read_st_tensor(sample_array *a, char *err, size_t err_size) {
  char path[sizeof a->spec];
  snprintf(path, sizeof path, "%s", a->spec);
  char *colon = strrchr(path, ':');
  if (!colon || colon[1] == '\0')
    return fail(err, err_size,
                "%s: name the tensor of a safetensors file, as "
                "FILE.safetensors:NAME",
                a->spec);
  *colon = '\0';
  const char *name = colon + 1;
  a->file = calloc(1, sizeof *a->file);
  char why[256];
  if (!a->file || !pprt_st_read(path, a->file, why, sizeof why))
    return fail(err, err_size, "%s: %s", path, a->file ? why : "out of memory");
  const pprt_st_tensor *t = pprt_st_find(a->file, name);
  if (!t)
    return fail(err, err_size, "%s has no tensor '%s'", path, name);
  a->dtype = st_dtype(t->dtype);
  if (a->dtype < 0)
    return fail(err, err_size,
                "%s: the tensor's dtype %s is none of F32, F16, BF16, I32, "
                "I64 and BOOL",
                a->spec, t->dtype);
  a->ndims = t->ndims;
  memcpy(a->dims, t->dims, sizeof a->dims);
  a->bytes = a->file->data + t->begin;
  return true;
}

/*---- matching arrays with data arguments ----*/

static bool is_data(const pprt_buffer_desc *b) {
  return b->defined && (b->kind == PPRT_INPUT || b->kind == PPRT_TARGET);
}

/* The model arguments of the step's data arguments, ascending, into
   `indices` (at most MAX_DATA_ARGS); their count. A rank defines only its
   stages' buffers, so the ranks pool theirs. Collective. */
static int32_t data_arguments(pprt_context *ctx, int32_t *indices) {
  int32_t last = -1;
  for (int32_t id = 0; id < ctx->num_buffers; ++id)
    if (is_data(&ctx->buffers[id]) && ctx->buffers[id].index > last)
      last = ctx->buffers[id].index;
  int32_t negated = -last;
  pprt_min_everywhere(ctx, &negated, 1, "the data arguments");
  last = -negated;
  if (last < 0)
    return 0;
  int32_t *absent = pprt_xcalloc(ctx, (size_t)last + 1, sizeof *absent);
  for (int32_t i = 0; i <= last; ++i)
    absent[i] = 1;
  for (int32_t id = 0; id < ctx->num_buffers; ++id)
    if (is_data(&ctx->buffers[id]))
      absent[ctx->buffers[id].index] = 0;
  pprt_min_everywhere(ctx, absent, last + 1, "the data arguments");
  int32_t n = 0;
  for (int32_t i = 0; i <= last && n < MAX_DATA_ARGS; ++i)
    if (!absent[i])
      indices[n++] = i;
  free(absent);
  return n;
}

static const char *kind_word(int32_t kind) {
  return kind == PPRT_INPUT ? "input" : "target";
}

/* Formats a shape "[a, b, c]" from dims[first..ndims). */
static void format_dims(char *out, size_t size, const int64_t *dims,
                        int32_t first, int32_t ndims) {
  size_t n = (size_t)snprintf(out, size, "[");
  for (int32_t i = first; i < ndims && n < size; ++i)
    n += (size_t)snprintf(out + n, size - n, "%s%lld", i > first ? ", " : "",
                          (long long)dims[i]);
  if (n < size)
    snprintf(out + n, size - n, "]");
}

/* Checks that array `a` can fill buffer `b`: its dtype, and a shape of
   [samples] followed by the buffer's dimensions past its rows. */
static bool check_array(const sample_array *a, const pprt_buffer_desc *b,
                        char *err, size_t err_size) {
  if (a->dtype != b->dtype)
    return fail(err, err_size, "%s holds %s; %s argument %d is %s", a->spec,
                pprt_dtype_name(a->dtype), kind_word(b->kind), b->index,
                pprt_dtype_name(b->dtype));
  bool same = a->ndims == (b->ndims > 0 ? b->ndims : 1);
  for (int32_t d = 1; same && d < b->ndims; ++d)
    same = a->dims[d] == b->dims[d];
  if (same && a->ndims > 0 && a->dims[0] > 0)
    return true;
  char want[160], have[160];
  format_dims(want, sizeof want, b->dims, 1, b->ndims);
  format_dims(have, sizeof have, a->dims, 0, a->ndims);
  return fail(err, err_size,
              "%s has shape %s; %s argument %d needs [samples] + %s (one "
              "sample is one row of its %lld per micro-batch)",
              a->spec, have, kind_word(b->kind), b->index, want,
              (long long)(b->ndims > 0 ? b->dims[0] : 1));
}

/* Checks that integer array `a`, when buffer `b` indexes a table with its
   ids, holds none outside [0, id_bound): found here, before the first
   step, rather than when the sample comes up. */
static bool check_ids(const sample_array *a, const pprt_buffer_desc *b,
                      char *err, size_t err_size) {
  if (b->id_bound <= 0 || (a->dtype != PPRT_I32 && a->dtype != PPRT_I64))
    return true;
  int64_t per_sample = b->numel / (b->ndims > 0 ? b->dims[0] : 1);
  int64_t count = a->dims[0] * per_sample;
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    if (a->dtype == PPRT_I64)
      memcpy(&v, a->bytes + 8 * i, 8);
    else {
      int32_t v32;
      memcpy(&v32, a->bytes + 4 * i, 4);
      v = v32;
    }
    if ((v >= 0 && v < b->id_bound) ||
        (b->has_id_ignored && v == b->id_ignored))
      continue;
    char ignored[48] = "";
    if (b->has_id_ignored)
      snprintf(ignored, sizeof ignored, " (or %lld, which it ignores)",
               (long long)b->id_ignored);
    return fail(err, err_size,
                "%s: sample %lld holds id %lld at position %lld, but %s "
                "argument %d indexes a table of %lld rows: ids must be in "
                "[0, %lld)%s",
                a->spec, (long long)(i / per_sample), (long long)v,
                (long long)(i % per_sample), kind_word(b->kind), b->index,
                (long long)b->id_bound, (long long)b->id_bound, ignored);
  }
  return true;
}

/* Whether element `i` of float array `a` is finite; its value, or -1 for
   NaN and +-2 for the infinities, in `*what`. */
static bool finite_element(const sample_array *a, int64_t i, double *what) {
  uint16_t h;
  float f;
  switch (a->dtype) {
  case PPRT_F32:
    memcpy(&f, a->bytes + 4 * i, 4);
    *what = isnan(f) ? -1.0 : f > 0 ? 2.0 : -2.0;
    return isfinite(f);
  case PPRT_F16:
  case PPRT_BF16: {
    memcpy(&h, a->bytes + 2 * i, 2);
    bool half = a->dtype == PPRT_F16;
    uint16_t exponent = half ? 0x7C00 : 0x7F80, mantissa = half ? 0x3FF : 0x7F;
    if ((h & exponent) != exponent)
      return true;
    *what = (h & mantissa) ? -1.0 : (h & 0x8000) ? -2.0 : 2.0;
    return false;
  }
  default:
    return true;
  }
}

/* Checks that float array `a` holds no NaN or infinity (unless
   --allow-non-finite): found here, naming the sample, rather than as a NaN
   loss when it comes up. */
static bool check_finite(const pprt_driver *d, const sample_array *a,
                         const pprt_buffer_desc *b, char *err,
                         size_t err_size) {
  if (d->opts.run.allow_non_finite)
    return true;
  int64_t per_sample = b->numel / (b->ndims > 0 ? b->dims[0] : 1);
  int64_t count = a->dims[0] * per_sample;
  double what = 0.0;
  for (int64_t i = 0; i < count; ++i)
    if (!finite_element(a, i, &what))
      return fail(err, err_size,
                  "%s: sample %lld holds %s at position %lld; training data "
                  "must be finite (--allow-non-finite takes it as it is)",
                  a->spec, (long long)(i / per_sample),
                  what < -1.5  ? "-inf"
                  : what > 1.5 ? "inf"
                               : "nan",
                  (long long)(i % per_sample));
  return true;
}

/* The rows of one step, over its micro-batches and data-parallel
   replicas, of data buffer `b` (sequence slices of a micro-batch share
   its rows). */
static int64_t step_rows(const pprt_driver *d, const pprt_buffer_desc *b) {
  int64_t rows = b->ndims > 0 ? b->dims[0] : 1;
  return rows * (d->ctx->num_microbatches / d->ctx->num_slices) *
         pprt_num_data_replicas(d->ctx);
}

/* Checks that the samples fill a step, and says once (rank 0) how many
   each epoch leaves out: a step never takes a sample twice, as PyTorch's
   DataLoader with drop_last=True. */
static bool check_epoch(const pprt_driver *d, int64_t samples, int64_t batch,
                        char *err, size_t err_size) {
  if (samples < batch)
    return fail(err, err_size,
                "has %lld sample%s; a step takes %lld rows (rows per "
                "micro-batch x micro-batches x data-parallel replicas), each "
                "a different sample: give at least %lld",
                (long long)samples, samples == 1 ? "" : "s", (long long)batch,
                (long long)batch);
  int64_t left = samples % batch;
  if (left > 0 && d->ctx->transport->world_rank == 0) {
    fprintf(stderr,
            "pprt: --data: %lld samples make %lld step%s of %lld rows an "
            "epoch; the last %lld of each epoch's shuffled order are left "
            "out (as PyTorch's DataLoader with drop_last=True)\n",
            (long long)samples, (long long)(samples / batch),
            samples / batch == 1 ? "" : "s", (long long)batch, (long long)left);
    fflush(stderr);
  }
  return true;
}

/* Splits --data at its commas into the arrays' specs. */
static bool split_specs(pprt_samples *s, const char *list, char *err,
                        size_t err_size) {
  const char *at = list;
  while (*at) {
    const char *comma = strchr(at, ',');
    size_t len = comma ? (size_t)(comma - at) : strlen(at);
    if (s->num_arrays == MAX_DATA_ARGS)
      return fail(err, err_size, "gives more than %d arrays", MAX_DATA_ARGS);
    sample_array *a = &s->arrays[s->num_arrays++];
    if (len == 0 || len >= sizeof a->spec)
      return fail(err, err_size, "has an empty or too long entry");
    memcpy(a->spec, at, len);
    a->spec[len] = '\0';
    at += len + (comma ? 1 : 0);
  }
  return true;
}

static bool open_array(sample_array *a, char *err, size_t err_size) {
  if (pprt_is_npy_path(a->spec))
    return read_npy(a, err, err_size);
  if (strstr(a->spec, ".safetensors:"))
    return read_st_tensor(a, err, err_size);
  return fail(err, err_size, "%s: give an .npy file or FILE.safetensors:NAME",
              a->spec);
}

bool pprt_samples_load(pprt_driver *d, char *err, size_t err_size) {
  pprt_samples *s = pprt_xcalloc(d->ctx, 1, sizeof *s);
  d->samples = s;
  s->order.epoch = -1;
  if (!split_specs(s, d->opts.data_spec, err, err_size))
    return false;
  int32_t indices[MAX_DATA_ARGS];
  int32_t n = data_arguments(d->ctx, indices);
  int64_t batch = 0;
  if (n != s->num_arrays)
    return fail(err, err_size,
                "gives %d array%s; the step has %d data argument%s (inputs, "
                "then targets, in argument order)",
                s->num_arrays, s->num_arrays == 1 ? "" : "s", n,
                n == 1 ? "" : "s");
  for (int32_t i = 0; i < n; ++i) {
    sample_array *a = &s->arrays[i];
    a->index = indices[i];
    if (!open_array(a, err, err_size))
      return false;
    for (int32_t id = 0; id < d->ctx->num_buffers; ++id) {
      const pprt_buffer_desc *b = &d->ctx->buffers[id];
      if (!is_data(b) || b->index != a->index)
        continue;
      if (!(check_array(a, b, err, err_size) &&
            check_ids(a, b, err, err_size) &&
            check_finite(d, a, b, err, err_size)))
        return false;
      batch = step_rows(d, b);
    }
    if (i > 0 && a->dims[0] != s->num_samples)
      return fail(err, err_size, "%s has %lld samples but %s has %lld", a->spec,
                  (long long)a->dims[0], s->arrays[0].spec,
                  (long long)s->num_samples);
    s->num_samples = a->dims[0];
  }
  return check_epoch(d, s->num_samples, batch, err, err_size);
}

void pprt_samples_free(pprt_samples *s) {
  if (!s)
    return;
  for (int32_t i = 0; i < s->num_arrays; ++i) {
    sample_array *a = &s->arrays[i];
    free(a->data);
    if (a->file) {
      pprt_st_free(a->file);
      free(a->file);
    }
  }
  free(s->order.samples);
  free(s);
}

/*---- sampling ----*/

typedef struct keyed_sample {
  uint64_t key;
  int64_t sample;
} keyed_sample;

static int compare_keyed(const void *x, const void *y) {
  const keyed_sample *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return (a->sample > b->sample) - (a->sample < b->sample);
}

/* Orders the samples of `epoch` by their hash. */
static bool shuffle_epoch(pprt_epoch_order *order, uint64_t seed,
                          int64_t num_samples, int64_t epoch) {
  keyed_sample *keyed = malloc((size_t)num_samples * sizeof *keyed);
  int64_t *samples = order->samples
                         ? order->samples
                         : malloc((size_t)num_samples * sizeof *samples);
  if (!keyed || !samples) {
    free(keyed);
    if (!order->samples)
      free(samples);
    return false;
  }
  for (int64_t i = 0; i < num_samples; ++i) {
    uint64_t keys[] = {TAG_SAMPLES, (uint64_t)epoch, (uint64_t)i};
    keyed[i] = (keyed_sample){pprt_hash(seed, keys, 3), i};
  }
  qsort(keyed, (size_t)num_samples, sizeof *keyed, compare_keyed);
  for (int64_t i = 0; i < num_samples; ++i)
    samples[i] = keyed[i].sample;
  free(keyed);
  order->samples = samples;
  order->epoch = epoch;
  return true;
}

int64_t pprt_sample_index(pprt_epoch_order *order, uint64_t seed,
                          int64_t num_samples, int64_t batch, int64_t step,
                          int64_t row) {
  int64_t steps_per_epoch = num_samples / batch;
  int64_t epoch = step / steps_per_epoch;
  if (order->epoch != epoch && !shuffle_epoch(order, seed, num_samples, epoch))
    return -1;
  return order->samples[step % steps_per_epoch * batch + row];
}

void pprt_samples_fill(pprt_driver *d, const pprt_buffer_desc *b, int64_t step,
                       int64_t first_row, void *out) {
  pprt_samples *s = d->samples;
  const sample_array *a = NULL;
  for (int32_t i = 0; i < s->num_arrays && !a; ++i)
    if (s->arrays[i].index == b->index)
      a = &s->arrays[i];
  int64_t rows = b->ndims > 0 ? b->dims[0] : 1;
  size_t row_bytes = (size_t)(b->bytes / rows);
  int64_t batch = step_rows(d, b);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t sample = pprt_sample_index(&s->order, d->opts.seed, s->num_samples,
                                       batch, step, first_row + r);
    if (sample < 0)
      pprt_fatal(d->ctx, "--data: out of memory ordering %lld samples",
                 (long long)s->num_samples);
    memcpy((uint8_t *)out + (size_t)r * row_bytes,
           a->bytes + (size_t)sample * row_bytes, row_bytes);
  }
}

void pprt_class_ids_fill(const pprt_driver *d, const pprt_buffer_desc *b,
                         int64_t step, int64_t first_row, void *out) {
  int64_t rows = b->ndims > 0 ? b->dims[0] : 1;
  int64_t row_size = b->numel / rows;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < row_size; ++j) {
      uint64_t keys[] = {TAG_CLASSES, (uint64_t)step, (uint32_t)b->index,
                         (uint64_t)(first_row + r), (uint64_t)j};
      int64_t id = (int64_t)(pprt_hash(d->opts.seed, keys, 5) %
                             (uint64_t)d->opts.num_classes);
      int64_t at = r * row_size + j;
      if (b->dtype == PPRT_I64)
        ((int64_t *)out)[at] = id;
      else
        ((int32_t *)out)[at] = (int32_t)id;
    }
}
