/* Deterministic parameter initialisation and synthetic training data. */
#include "core/core.h"
#include "pprt_math.h"

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

void pprt_init_param(const pprt_context *ctx, const pprt_buffer_desc *b,
                     float *out) {
  if (ctx->init_weights) {
    pprt_weights_init_param(ctx, b, out);
    return;
  }
  int64_t d0 = b->ndims > 0 ? b->dims[0] : 1;
  float a = (float)(1.0 / pprt_sqrt((double)d0));
  for (int64_t i = 0; i < b->numel; ++i) {
    uint64_t keys[] = {TAG_PARAM, (uint32_t)b->index, (uint64_t)i};
    out[i] = a * uniform_pm1(pprt_hash(ctx->opts.seed, keys, 3));
  }
}

static float input_value(const pprt_context *ctx, int32_t index, int64_t step,
                         int64_t row, int64_t col) {
  uint64_t keys[] = {TAG_DATA, (uint64_t)step, (uint32_t)index, (uint64_t)row,
                     (uint64_t)col};
  return uniform_pm1(pprt_hash(ctx->opts.seed, keys, 5));
}

static float teacher_value(const pprt_context *ctx, int64_t k, int64_t j,
                           int64_t din) {
  if (ctx->teacher && k < ctx->teacher_din && j < ctx->teacher_dout)
    return ctx->teacher[k * ctx->teacher_dout + j];
  uint64_t keys[] = {TAG_TEACHER, (uint64_t)k, (uint64_t)j};
  return uniform_pm1(pprt_hash(ctx->opts.seed, keys, 3)) /
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

void pprt_prepare_teacher(pprt_context *ctx) {
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
  ctx->x0_index = x0->index;
  /* Scratch for one row of x0, so that loading data allocates nothing. */
  ctx->x0_row = pprt_xcalloc(ctx, (size_t)x0->dims[1], sizeof(float));
  if (dout == 0)
    return;
  int64_t din = x0->dims[1];
  ctx->teacher = pprt_xcalloc(ctx, (size_t)(din * dout), sizeof(float));
  for (int64_t k = 0; k < din; ++k)
    for (int64_t j = 0; j < dout; ++j)
      ctx->teacher[k * dout + j] = teacher_value(ctx, k, j, din);
  ctx->teacher_din = din;
  ctx->teacher_dout = dout;
}

/* Fills one row of a target as tanh(x0[row] @ T). */
static void teacher_row(const pprt_context *ctx, int64_t din, int64_t step,
                        int64_t row, int64_t dout, float *x0_row, float *out) {
  for (int64_t k = 0; k < din; ++k)
    x0_row[k] = input_value(ctx, ctx->x0_index, step, row, k);
  for (int64_t j = 0; j < dout; ++j) {
    double acc = 0.0;
    for (int64_t k = 0; k < din; ++k)
      acc += (double)x0_row[k] * teacher_value(ctx, k, j, din);
    out[j] = (float)pprt_tanh(acc);
  }
}

/* Whether target `index` is produced by the teacher rather than drawn. */
static int64_t teacher_din(const pprt_context *ctx, int32_t kind,
                           int32_t index) {
  if (kind != PPRT_TARGET || ctx->x0_index < 0)
    return 0;
  const pprt_buffer_desc *t = find_data(ctx, PPRT_TARGET, index);
  if (!t || t->ndims != 2)
    return 0;
  return find_data(ctx, PPRT_INPUT, ctx->x0_index)->dims[1];
}

void pprt_builtin_load_data(const pprt_context *ctx, int32_t kind,
                            int32_t index, int64_t step, int64_t first_row,
                            int64_t num_rows, int64_t row_size, float *out) {
  int64_t din = teacher_din(ctx, kind, index);
  if (din > 0) {
    for (int64_t r = 0; r < num_rows; ++r)
      teacher_row(ctx, din, step, first_row + r, row_size, ctx->x0_row,
                  out + r * row_size);
    return;
  }
  for (int64_t r = 0; r < num_rows; ++r)
    for (int64_t j = 0; j < row_size; ++j)
      out[r * row_size + j] = input_value(ctx, index, step, first_row + r, j);
}

void pprt_load_slot_data(pprt_context *ctx, const pprt_buffer_desc *b,
                         int32_t slot, void *out) {
  int64_t rows = b->ndims > 0 ? b->dims[0] : 1;
  int64_t row_size = b->numel / rows;
  /* Replica r owns rows [r*B, (r+1)*B) of the step's global batch. */
  int64_t batch = rows * ctx->num_microbatches;
  int64_t first_row = pprt_data_replica(ctx) * batch + slot * rows;
  if (ctx->corpus) {
    pprt_corpus_fill(ctx, b, pprt_action_step(ctx), first_row, out);
    return;
  }
  if (pprt_user_load_data)
    pprt_user_load_data(ctx, b->kind, b->index, pprt_action_step(ctx),
                        first_row, rows, row_size, out);
  else
    pprt_builtin_load_data(ctx, b->kind, b->index, pprt_action_step(ctx),
                           first_row, rows, row_size, out);
}
