/* Prints the data the --corpus and --tokens loaders hand a program. */
#include "pprt/pprt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A 1-rank, 1-stage program with a one-hot input [ROWS, SEQ, VOCAB]
 * (argument 0) and target (argument 1) that computes nothing: every step it
 * prints, for each micro-batch and row, the character index at each
 * position of the input and of the target:
 *
 *   data step S replica R mb M row I in A B C ... target B C D ...
 *
 * A position that is not exactly one-hot prints as -1. The micro-batch
 * count comes from env PPRT_CORPUS_MB (default 2). With env PPRT_CORPUS_IDS
 * set to i32 or i64, input and target are instead [ROWS, SEQ] ids of that
 * type, printed as they are; like ids into an embedding of VOCAB rows, they
 * are declared below VOCAB (pprt_set_id_bound).
 */

enum { ROWS = 2, SEQ = 8, VOCAB = 32 };
enum { X, Y };

static int num_microbatches(void) {
  const char *env = getenv("PPRT_CORPUS_MB");
  int mb = env ? atoi(env) : 2;
  return mb > 0 ? mb : 1;
}

/* PPRT_F32 for one-hot data, else the integer type of env
   PPRT_CORPUS_IDS. */
static int32_t data_dtype(void) {
  const char *env = getenv("PPRT_CORPUS_IDS");
  if (!env)
    return PPRT_F32;
  return strcmp(env, "i64") == 0 ? PPRT_I64 : PPRT_I32;
}

void pp_define_program(pprt_context *ctx) {
  pprt_set_program(ctx, PPRT_ABI_VERSION, 1, 1, num_microbatches());
  int32_t dtype = data_dtype();
  int32_t ndims = dtype == PPRT_F32 ? 3 : 2;
  int64_t last = dtype == PPRT_F32 ? VOCAB : 0;
  const int64_t dims[] = {ROWS, SEQ, last};
  pprt_define_buffer(ctx, X, PPRT_INPUT, 0, 0, dtype, ndims, dims);
  pprt_define_buffer(ctx, Y, PPRT_TARGET, 0, 1, dtype, ndims, dims);
  if (dtype != PPRT_F32) {
    pprt_set_id_bound(ctx, X, VOCAB);
    pprt_set_id_bound(ctx, Y, VOCAB);
  }
}

/* The index of the single 1 in `v`, or -1 if `v` is not one-hot. */
static int one_hot_index(const float *v) {
  int index = -1;
  for (int k = 0; k < VOCAB; ++k) {
    if (v[k] == 0.0f)
      continue;
    if (v[k] != 1.0f || index >= 0)
      return -1;
    index = k;
  }
  return index;
}

/* The id at position `t` of a row of `dtype` data. */
static long long id_at(const void *row, int32_t dtype, int t) {
  if (dtype == PPRT_I64)
    return ((const int64_t *)row)[t];
  if (dtype == PPRT_I32)
    return ((const int32_t *)row)[t];
  return one_hot_index((const float *)row + t * VOCAB);
}

static int append_row(char *line, int len, const char *label, const void *data,
                      int32_t dtype, int r) {
  size_t row_bytes = dtype == PPRT_I64   ? SEQ * sizeof(int64_t)
                     : dtype == PPRT_I32 ? SEQ * sizeof(int32_t)
                                         : SEQ * VOCAB * sizeof(float);
  const char *row = (const char *)data + (size_t)r * row_bytes;
  len += snprintf(line + len, 16, " %s", label);
  for (int t = 0; t < SEQ; ++t)
    len += snprintf(line + len, 24, " %lld", id_at(row, dtype, t));
  return len;
}

void pp_run_step(pprt_context *ctx, int32_t rank) {
  (void)rank;
  for (int32_t mb = 0; mb < pprt_num_microbatches(ctx); ++mb) {
    const void *x = pprt_buffer(ctx, X, mb);
    const void *y = pprt_buffer(ctx, Y, mb);
    int32_t dtype = data_dtype();
    for (int r = 0; r < ROWS; ++r) {
      char line[1024];
      int len =
          snprintf(line, 64, "data step %lld replica %d mb %d row %d",
                   (long long)pprt_step(ctx) + 1, pprt_replica(ctx), mb, r);
      len = append_row(line, len, "in", x, dtype, r);
      len = append_row(line, len, "target", y, dtype, r);
      line[len++] = '\n';
      /* One write per line keeps the ranks' lines whole. */
      fwrite(line, 1, (size_t)len, stdout);
      fflush(stdout);
    }
  }
}
