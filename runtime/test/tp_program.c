/* Hand-written stand-in for tensor-parallel pp-compile output: a 2-stage
   MLP with column-split, row-split and replicated weights. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "pprt/pprt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * Model (global shapes): stage 0: h = tanh(x @ W0), u = h @ W1 + b1;
 * stage 1: p = u @ W2, loss = sum((p - y)^2) / (BATCH * DOUT). GPipe.
 *
 * With T tensor-parallel processes (env PPRT_TP, default 1), Megatron
 * style: W0 [DIN, DH] is split by columns (dim 1), W1 [DH, DM] by rows
 * (dim 0) and b1 [DM] replicated, so stage 0 all-reduces u in the forward;
 * W2 [DM, DOUT] is split by columns, so stage 1 all-gathers p in the
 * forward and all-reduces du in the backward. Env PPRT_TP_RANKS (1 or 2,
 * default 2) places the stages on that many pipeline ranks; T = 1 on one
 * rank is the unsplit reference of every other layout.
 *
 * Test hooks (env): PPRT_TP_SPLIT_DIM and PPRT_TP_PARTS replace W0's split
 * dim and parts; PPRT_TP_STALL_STEP=N makes tp index 1 of pipeline rank 0
 * hang before its forward all-reduce in (1-based) step N; PPRT_TP_DTYPE=1
 * all-reduces as f16; PPRT_TP_DRIFT=1 makes tp index 1 add to the
 * replicated b1's gradient, so that the tensor group's copies differ.
 */

enum { DIN = 8, DH = 16, DM = 12, DOUT = 4, BATCH = 32, NUM_MB = 2 };
enum { ROWS = BATCH / NUM_MB };

/* Model arguments (x, y, W0, W1, b1, W2) are indices 0..5. */
enum {
  W0,
  W1,
  B1,
  W2,
  GW0,
  GW1,
  GB1,
  GW2,
  X,
  Y,
  H,
  U,
  DU,
  P,
  DW0_MB,
  DW1_MB,
  DB1_MB,
  DW2_MB,
  LOSS,
  LOSS_GRAD,
};

static int tp = 1, num_ranks = 2;

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : fallback;
}

static void define(pprt_context *ctx, int32_t id, int32_t kind, int32_t stage,
                   int32_t index, int64_t d0, int64_t d1) {
  int64_t dims[2] = {d0, d1};
  pprt_define_buffer(ctx, id, kind, stage, index, PPRT_F32, d1 ? 2 : 1, dims);
}

/* A param and its gradient, split along `dim` unless T = 1. */
static void define_param(pprt_context *ctx, int32_t id, int32_t grad,
                         int32_t stage, int32_t index, int64_t d0, int64_t d1,
                         int32_t dim, int32_t parts) {
  define(ctx, id, PPRT_PARAM, stage, index, d0, d1);
  define(ctx, grad, PPRT_PARAM_GRAD, stage, index, d0, d1);
  if (tp > 1 || parts != 1) {
    pprt_set_buffer_split(ctx, id, dim, parts);
    pprt_set_buffer_split(ctx, grad, dim, parts);
  }
}

void pp_define_program(pprt_context *ctx) {
  tp = (int)env_long("PPRT_TP", 1);
  num_ranks = (int)env_long("PPRT_TP_RANKS", 2);
  pprt_set_program(ctx, PPRT_ABI_VERSION, num_ranks, 2, NUM_MB);
  pprt_set_tensor_parallel(ctx, tp);
  int32_t dim0 = (int32_t)env_long("PPRT_TP_SPLIT_DIM", 1);
  int32_t parts0 = (int32_t)env_long("PPRT_TP_PARTS", tp);
  define_param(ctx, W0, GW0, 0, 2, DIN, DH / tp, dim0, parts0);
  define_param(ctx, W1, GW1, 0, 3, DH / tp, DM, 0, tp);
  define(ctx, B1, PPRT_PARAM, 0, 4, DM, 0);
  define(ctx, GB1, PPRT_PARAM_GRAD, 0, 4, DM, 0);
  define_param(ctx, W2, GW2, 1, 5, DM, DOUT / tp, 1, tp);
  define(ctx, X, PPRT_INPUT, 0, 0, ROWS, DIN);
  define(ctx, Y, PPRT_TARGET, 1, 1, ROWS, DOUT);
  define(ctx, H, PPRT_MICROBATCH, 0, 0, ROWS, DH / tp);
  define(ctx, U, PPRT_MICROBATCH, 0, 0, ROWS, DM);
  define(ctx, DU, PPRT_MICROBATCH, 1, 0, ROWS, DM);
  define(ctx, P, PPRT_MICROBATCH, 1, 0, ROWS, DOUT);
  define(ctx, DW0_MB, PPRT_MICROBATCH, 0, 0, DIN, DH / tp);
  define(ctx, DW1_MB, PPRT_MICROBATCH, 0, 0, DH / tp, DM);
  define(ctx, DB1_MB, PPRT_MICROBATCH, 0, 0, DM, 0);
  define(ctx, DW2_MB, PPRT_MICROBATCH, 1, 0, DM, DOUT / tp);
  pprt_define_buffer(ctx, LOSS, PPRT_LOSS, 1, 0, PPRT_F32, 0, NULL);
  pprt_define_buffer(ctx, LOSS_GRAD, PPRT_LOSS_GRAD, 1, 0, PPRT_F32, 0, NULL);
}

static float *buf(pprt_context *ctx, int32_t id, int32_t mb) {
  return pprt_buffer(ctx, id, mb);
}

/* c[m][n] = a[m][k] @ b[k][n], with a's and c's row strides. */
static void matmul(const float *a, int lda, const float *b, float *c, int ldc,
                   int m, int k, int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int l = 0; l < k; ++l)
        acc += a[i * lda + l] * b[l * n + j];
      c[i * ldc + j] = acc;
    }
}

/* c[k][n] = a[m][k]^T @ b[m][n], b with row stride ldb. */
static void matmul_tn(const float *a, const float *b, int ldb, float *c, int m,
                      int k, int n) {
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int l = 0; l < m; ++l)
        acc += a[l * k + i] * b[l * ldb + j];
      c[i * n + j] = acc;
    }
}

/* c[m][k] = a[m][n] @ b[k][n]^T, a with row stride lda. */
static void matmul_nt(const float *a, int lda, const float *b, float *c, int m,
                      int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j) {
      float acc = 0.0f;
      for (int l = 0; l < n; ++l)
        acc += a[i * lda + l] * b[j * n + l];
      c[i * k + j] = acc;
    }
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The group's max and min of (tp index, -tp index) are (T - 1, 0) and
   (0, 1 - T) on every process: the reductions a vocabulary-parallel
   cross-entropy needs, checked here and otherwise unused. */
static void check_extrema(pprt_context *ctx) {
  float hi[2] = {(float)pprt_tp_index(), -(float)pprt_tp_index()};
  float lo[2] = {hi[0], hi[1]};
  if (pprt_rank(ctx) == 0 && pprt_tp_index() == 1 &&
      env_long("PPRT_TP_STALL_MAX_STEP", 0) == pprt_step(ctx) + 1)
    for (;;)
      sleep_ms(1000);
  pprt_tp_all_reduce(PPRT_F32, hi, 2, PPRT_REDUCE_MAX);
  pprt_tp_all_reduce(PPRT_F32, lo, 2, PPRT_REDUCE_MIN);
  if (hi[0] != (float)(tp - 1) || hi[1] != 0.0f || lo[0] != 0.0f ||
      lo[1] != (float)(1 - tp)) {
    fprintf(stderr,
            "tp_program: max (%g, %g) and min (%g, %g) over the tensor "
            "group\n",
            hi[0], hi[1], lo[0], lo[1]);
    exit(1);
  }
}

static void forward0(pprt_context *ctx, int mb) {
  int dh = DH / tp;
  float *h = buf(ctx, H, mb), *u = buf(ctx, U, mb);
  matmul(buf(ctx, X, mb), DIN, buf(ctx, W0, 0), h, dh, ROWS, DIN, dh);
  for (int i = 0; i < ROWS * dh; ++i)
    h[i] = tanhf(h[i]);
  matmul(h, dh, buf(ctx, W1, 0), u, DM, ROWS, dh, DM);
  if (pprt_rank(ctx) == 0 && pprt_tp_index() == 1 &&
      env_long("PPRT_TP_STALL_STEP", 0) == pprt_step(ctx) + 1)
    for (;;)
      sleep_ms(1000);
  pprt_tp_all_reduce((int32_t)env_long("PPRT_TP_DTYPE", PPRT_F32), u, ROWS * DM,
                     PPRT_REDUCE_SUM);
  check_extrema(ctx);
  const float *b1 = buf(ctx, B1, 0);
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < DM; ++j)
      u[i * DM + j] += b1[j];
}

static void forward1(pprt_context *ctx, int mb) {
  int dl = DOUT / tp;
  float local[ROWS * DOUT], gathered[ROWS * DOUT];
  matmul(buf(ctx, U, mb), DM, buf(ctx, W2, 0), local, dl, ROWS, DM, dl);
  pprt_tp_all_gather(PPRT_F32, local, gathered, ROWS * dl);
  /* Block t holds columns [t * dl, (t + 1) * dl) of every row. */
  float *p = buf(ctx, P, mb);
  const float *y = buf(ctx, Y, mb);
  float loss = 0.0f;
  for (int t = 0; t < tp; ++t)
    for (int i = 0; i < ROWS; ++i)
      for (int j = 0; j < dl; ++j)
        p[i * DOUT + t * dl + j] = gathered[(t * ROWS + i) * dl + j];
  for (int i = 0; i < ROWS * DOUT; ++i)
    loss += (p[i] - y[i]) * (p[i] - y[i]);
  buf(ctx, LOSS, mb)[0] = loss / (BATCH * DOUT);
}

static void backward1(pprt_context *ctx, int mb) {
  int dl = DOUT / tp, first = pprt_tp_index() * dl;
  const float *p = buf(ctx, P, mb), *y = buf(ctx, Y, mb);
  float scale = 2.0f * buf(ctx, LOSS_GRAD, 0)[0] / (BATCH * DOUT);
  float dp[ROWS * DOUT];
  for (int i = 0; i < ROWS * DOUT; ++i)
    dp[i] = scale * (p[i] - y[i]);
  /* This rank's columns of dp, against its block of W2. */
  matmul_tn(buf(ctx, U, mb), dp + first, DOUT, buf(ctx, DW2_MB, mb), ROWS, DM,
            dl);
  float *du = buf(ctx, DU, mb);
  matmul_nt(dp + first, DOUT, buf(ctx, W2, 0), du, ROWS, dl, DM);
  pprt_tp_all_reduce(PPRT_F32, du, ROWS * DM, PPRT_REDUCE_SUM);
}

static void backward0(pprt_context *ctx, int mb) {
  int dh = DH / tp;
  const float *du = buf(ctx, DU, mb), *h = buf(ctx, H, mb);
  float *db1 = buf(ctx, DB1_MB, mb);
  float drift =
      pprt_tp_index() == 1 && env_long("PPRT_TP_DRIFT", 0) ? 1.0f : 0.0f;
  for (int j = 0; j < DM; ++j) {
    db1[j] = drift;
    for (int i = 0; i < ROWS; ++i)
      db1[j] += du[i * DM + j];
  }
  matmul_tn(h, du, DM, buf(ctx, DW1_MB, mb), ROWS, dh, DM);
  float dz[ROWS * DH];
  matmul_nt(du, DM, buf(ctx, W1, 0), dz, ROWS, DM, dh);
  for (int i = 0; i < ROWS * dh; ++i)
    dz[i] *= 1.0f - h[i] * h[i];
  matmul_tn(buf(ctx, X, mb), dz, dh, buf(ctx, DW0_MB, mb), ROWS, DIN, dh);
}

static void action(pprt_context *ctx, void (*fn)(pprt_context *, int),
                   int32_t phase, int32_t stage, int mb) {
  pprt_action_begin(ctx, phase, stage, mb);
  fn(ctx, mb);
  pprt_action_end(ctx);
}

static int32_t owner(int stage) { return stage % num_ranks; }

void pp_run_step(pprt_context *ctx, int32_t rank) {
  bool s0 = owner(0) == rank, s1 = owner(1) == rank, local = s0 && s1;
  for (int mb = 0; mb < NUM_MB; ++mb) {
    if (s0) {
      action(ctx, forward0, PPRT_FORWARD, 0, mb);
      if (!local)
        pprt_send(ctx, U, mb, owner(1), 1, PPRT_ACTIVATION);
    }
    if (s1) {
      if (!local)
        pprt_recv(ctx, U, mb, owner(0), 1, PPRT_ACTIVATION);
      action(ctx, forward1, PPRT_FORWARD, 1, mb);
      pprt_record_loss(ctx, LOSS, mb);
    }
  }
  for (int mb = NUM_MB - 1; mb >= 0; --mb) {
    if (s1) {
      action(ctx, backward1, PPRT_BACKWARD, 1, mb);
      pprt_accumulate(ctx, GW2, DW2_MB, mb);
      if (!local)
        pprt_send(ctx, DU, mb, owner(0), 0, PPRT_GRADIENT);
    }
    if (s0) {
      if (!local)
        pprt_recv(ctx, DU, mb, owner(1), 0, PPRT_GRADIENT);
      action(ctx, backward0, PPRT_BACKWARD, 0, mb);
      pprt_accumulate(ctx, GW0, DW0_MB, mb);
      pprt_accumulate(ctx, GW1, DW1_MB, mb);
      pprt_accumulate(ctx, GB1, DB1_MB, mb);
    }
  }
  for (int stage = 0; stage < 2; ++stage)
    if (owner(stage) == rank) {
      pprt_all_reduce(ctx, stage);
      pprt_optimizer_step(ctx, stage);
    }
}
