/* Hand-written stand-in for pp-compile output: a 2-stage linear model. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "pprt/pprt.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Model: h = x @ W0 (stage 0), p = h @ W1 and
 * loss = sum((p - y)^2) / (BATCH * DOUT) (stage 1), GPipe schedule.
 *
 * Built twice: pprt-toy runs the stages on 2 ranks with 2 micro-batches;
 * pprt-toy-ref (TOY_REFERENCE) runs both stages on 1 rank over the whole
 * batch as one micro-batch, so its losses must match pprt-toy's.
 * pprt-toy-user (TOY_USER_DATA) overrides the data through the
 * pprt_user_load_data hook.
 *
 * Test hooks (env): PPRT_TOY_SLEEP_MS sleeps that long every step (on
 * pipeline rank PPRT_TOY_SLEEP_RANK only, if set, so the others wait);
 * PPRT_TOY_STALL_STEP=N makes pipeline rank 0 hang instead of sending in
 * (1-based) step N; PPRT_TOY_REPLICAS=D declares D data-parallel replicas;
 * PPRT_TOY_REDUCE=skip|twice|late skips the gradient all-reduce, runs it
 * twice, or accumulates a gradient after it; PPRT_TOY_TOUCH_OUTSIDE=1
 * reads a weight outside any stage function (which the guarded backend
 * must catch); PPRT_TOY_STATE=1 gives stage 0 two STATE buffers its
 * forward updates: a running mean of h's columns (momentum 0.5, f32, model
 * argument 4) and a count of forwards (i64, argument 5).
 */

enum { DIN = 8, DH = 16, DOUT = 4, BATCH = 32 };

#ifdef TOY_REFERENCE
enum { NUM_RANKS = 1, NUM_MB = 1 };
#else
enum { NUM_RANKS = 2, NUM_MB = 2 };
#endif
enum { ROWS = BATCH / NUM_MB }; /* rows per micro-batch */

/* Buffer ids; model arguments are (x, y, W0, W1) = indices 0..3. */
enum {
  W0,
  W1,
  GW0,
  GW1,
  X,
  Y,
  H,
  DH_,
  DW0_MB,
  DW1_MB,
  LOSS,
  LOSS_GRAD,
  P,
  RUNNING,
  COUNT,
  RUNNING_NEW,
  COUNT_NEW,
};

static long env_long(const char *name) {
  const char *v = getenv(name);
  return v ? strtol(v, NULL, 10) : 0;
}

static bool reduce_bug(const char *name) {
  const char *v = getenv("PPRT_TOY_REDUCE");
  return v && strcmp(v, name) == 0;
}

void pp_define_program(pprt_context *ctx) {
  pprt_set_program(ctx, PPRT_ABI_VERSION, NUM_RANKS, 2, NUM_MB);
  if (getenv("PPRT_TOY_REPLICAS"))
    pprt_set_data_parallel(ctx, (int32_t)env_long("PPRT_TOY_REPLICAS"));
  pprt_define_buffer(ctx, W0, PPRT_PARAM, 0, 2, PPRT_F32, 2,
                     (int64_t[]){DIN, DH});
  pprt_define_buffer(ctx, W1, PPRT_PARAM, 1, 3, PPRT_F32, 2,
                     (int64_t[]){DH, DOUT});
  pprt_define_buffer(ctx, GW0, PPRT_PARAM_GRAD, 0, 2, PPRT_F32, 2,
                     (int64_t[]){DIN, DH});
  pprt_define_buffer(ctx, GW1, PPRT_PARAM_GRAD, 1, 3, PPRT_F32, 2,
                     (int64_t[]){DH, DOUT});
  pprt_define_buffer(ctx, X, PPRT_INPUT, 0, 0, PPRT_F32, 2,
                     (int64_t[]){ROWS, DIN});
  pprt_define_buffer(ctx, Y, PPRT_TARGET, 1, 1, PPRT_F32, 2,
                     (int64_t[]){ROWS, DOUT});
  pprt_define_buffer(ctx, H, PPRT_MICROBATCH, 0, 0, PPRT_F32, 2,
                     (int64_t[]){ROWS, DH});
  pprt_define_buffer(ctx, DH_, PPRT_MICROBATCH, 1, 0, PPRT_F32, 2,
                     (int64_t[]){ROWS, DH});
  pprt_define_buffer(ctx, DW0_MB, PPRT_MICROBATCH, 0, 0, PPRT_F32, 2,
                     (int64_t[]){DIN, DH});
  pprt_define_buffer(ctx, DW1_MB, PPRT_MICROBATCH, 1, 0, PPRT_F32, 2,
                     (int64_t[]){DH, DOUT});
  pprt_define_buffer(ctx, LOSS, PPRT_LOSS, 1, 0, PPRT_F32, 0, NULL);
  pprt_define_buffer(ctx, LOSS_GRAD, PPRT_LOSS_GRAD, 1, 0, PPRT_F32, 0, NULL);
  pprt_define_buffer(ctx, P, PPRT_MICROBATCH, 1, 0, PPRT_F32, 2,
                     (int64_t[]){ROWS, DOUT});
  /* What each forward leaves for its backward (--profile's memory). */
  pprt_define_saved(ctx, X, 0, PPRT_BACKWARD);
  pprt_define_saved(ctx, H, 1, PPRT_BACKWARD);
  pprt_define_saved(ctx, P, 1, PPRT_BACKWARD);
  pprt_define_saved(ctx, Y, 1, PPRT_BACKWARD);
  if (env_long("PPRT_TOY_STATE")) {
    pprt_define_buffer(ctx, RUNNING, PPRT_STATE, 0, 4, PPRT_F32, 1,
                       (int64_t[]){DH});
    pprt_define_buffer(ctx, COUNT, PPRT_STATE, 0, 5, PPRT_I64, 0, NULL);
    pprt_define_buffer(ctx, RUNNING_NEW, PPRT_MICROBATCH, 0, 0, PPRT_F32, 1,
                       (int64_t[]){DH});
    pprt_define_buffer(ctx, COUNT_NEW, PPRT_MICROBATCH, 0, 0, PPRT_I64, 0,
                       NULL);
  }
}

#ifdef TOY_USER_DATA
/* Replaces the built-in targets by zeros, keeping the built-in inputs. */
void pprt_user_load_data(const pprt_context *ctx, int32_t kind, int32_t index,
                         int64_t step, int64_t first_row, int64_t num_rows,
                         int64_t row_size, float *out) {
  if (kind == PPRT_INPUT) {
    pprt_builtin_load_data(ctx, kind, index, step, first_row, num_rows,
                           row_size, out);
    return;
  }
  for (int64_t i = 0; i < num_rows * row_size; ++i)
    out[i] = 0.0f;
}
#endif

static float *buf(pprt_context *ctx, int32_t id, int32_t mb) {
  return pprt_buffer(ctx, id, mb);
}

/* c[m][n] = a[m][k] @ b[k][n] */
static void matmul(const float *a, const float *b, float *c, int m, int k,
                   int n) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int l = 0; l < k; ++l)
        acc += a[i * k + l] * b[l * n + j];
      c[i * n + j] = acc;
    }
}

/* c[k][n] = a[m][k]^T @ b[m][n] */
static void matmul_tn(const float *a, const float *b, float *c, int m, int k,
                      int n) {
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int l = 0; l < m; ++l)
        acc += a[l * k + i] * b[l * n + j];
      c[i * n + j] = acc;
    }
}

/* c[m][k] = a[m][n] @ b[k][n]^T */
static void matmul_nt(const float *a, const float *b, float *c, int m, int n,
                      int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j) {
      float acc = 0.0f;
      for (int l = 0; l < n; ++l)
        acc += a[i * n + l] * b[j * n + l];
      c[i * k + j] = acc;
    }
}

/* The new running mean and count from micro-batch `mb`'s h, which replace
   the state after the call, as generated code does. */
static void update_state(pprt_context *ctx, int mb) {
  const float *h = buf(ctx, H, mb), *running = buf(ctx, RUNNING, 0);
  float *next = buf(ctx, RUNNING_NEW, mb);
  for (int j = 0; j < DH; ++j) {
    float mean = 0.0f;
    for (int i = 0; i < ROWS; ++i)
      mean += h[i * DH + j];
    next[j] = 0.5f * running[j] + 0.5f * (mean / ROWS);
  }
  int64_t *count = pprt_buffer(ctx, COUNT_NEW, mb);
  *count = *(const int64_t *)pprt_buffer(ctx, COUNT, 0) + 1;
  pprt_update_state(ctx, RUNNING, RUNNING_NEW, mb);
  pprt_update_state(ctx, COUNT, COUNT_NEW, mb);
}

static void forward0(pprt_context *ctx, int mb) {
  matmul(buf(ctx, X, mb), buf(ctx, W0, 0), buf(ctx, H, mb), ROWS, DIN, DH);
  if (env_long("PPRT_TOY_STATE"))
    update_state(ctx, mb);
}

static void forward1(pprt_context *ctx, int mb) {
  float *p = buf(ctx, P, mb);
  const float *y = buf(ctx, Y, mb);
  matmul(buf(ctx, H, mb), buf(ctx, W1, 0), p, ROWS, DH, DOUT);
  float loss = 0.0f;
  for (int i = 0; i < ROWS * DOUT; ++i)
    loss += (p[i] - y[i]) * (p[i] - y[i]);
  buf(ctx, LOSS, mb)[0] = loss / (BATCH * DOUT);
}

static void backward1(pprt_context *ctx, int mb) {
  const float *p = buf(ctx, P, mb), *y = buf(ctx, Y, mb);
  float scale = 2.0f * buf(ctx, LOSS_GRAD, 0)[0] / (BATCH * DOUT);
  float dp[ROWS * DOUT];
  for (int i = 0; i < ROWS * DOUT; ++i)
    dp[i] = scale * (p[i] - y[i]);
  matmul_tn(buf(ctx, H, mb), dp, buf(ctx, DW1_MB, mb), ROWS, DH, DOUT);
  matmul_nt(dp, buf(ctx, W1, 0), buf(ctx, DH_, mb), ROWS, DOUT, DH);
}

static void backward0(pprt_context *ctx, int mb) {
  matmul_tn(buf(ctx, X, mb), buf(ctx, DH_, mb), buf(ctx, DW0_MB, mb), ROWS, DIN,
            DH);
}

/* Runs a stage function as generated code does: timed under --profile. */
static void timed(pprt_context *ctx, void (*fn)(pprt_context *, int),
                  int32_t phase, int32_t stage, int mb) {
  pprt_action_begin(ctx, phase, stage, mb);
  fn(ctx, mb);
  pprt_action_end(ctx);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Simulates a lost sender for the timeout test. */
static void maybe_stall(pprt_context *ctx, int32_t rank, bool local) {
  long stall = env_long("PPRT_TOY_STALL_STEP");
  if (local || rank != 0 || stall != pprt_step(ctx) + 1)
    return;
  for (;;)
    sleep_ms(1000);
}

static int32_t owner(int stage) { return stage % NUM_RANKS; }

static void forward_mb(pprt_context *ctx, int mb, bool s0, bool s1,
                       bool local) {
  if (s0) {
    timed(ctx, forward0, PPRT_FORWARD, 0, mb);
    if (!local)
      pprt_send(ctx, H, mb, owner(1), 1, PPRT_ACTIVATION);
  }
  if (s1) {
    if (!local)
      pprt_recv(ctx, H, mb, owner(0), 1, PPRT_ACTIVATION);
    timed(ctx, forward1, PPRT_FORWARD, 1, mb);
    pprt_record_loss(ctx, LOSS, mb);
  }
}

static void backward_mb(pprt_context *ctx, int mb, bool s0, bool s1,
                        bool local) {
  if (s1) {
    timed(ctx, backward1, PPRT_BACKWARD, 1, mb);
    pprt_accumulate(ctx, GW1, DW1_MB, mb);
    if (!local)
      pprt_send(ctx, DH_, mb, owner(0), 0, PPRT_GRADIENT);
  }
  if (s0) {
    if (!local)
      pprt_recv(ctx, DH_, mb, owner(1), 0, PPRT_GRADIENT);
    timed(ctx, backward0, PPRT_BACKWARD, 0, mb);
    pprt_accumulate(ctx, GW0, DW0_MB, mb);
  }
}

void pp_run_step(pprt_context *ctx, int32_t rank) {
  bool s0 = owner(0) == rank, s1 = owner(1) == rank, local = s0 && s1;
  const char *sleeper = getenv("PPRT_TOY_SLEEP_RANK");
  if (!sleeper || env_long("PPRT_TOY_SLEEP_RANK") == rank)
    sleep_ms(env_long("PPRT_TOY_SLEEP_MS"));
  maybe_stall(ctx, rank, local);
  if (env_long("PPRT_TOY_TOUCH_OUTSIDE")) {
    volatile float w = buf(ctx, s0 ? W0 : W1, 0)[0];
    (void)w;
  }
  for (int mb = 0; mb < NUM_MB; ++mb)
    forward_mb(ctx, mb, s0, s1, local);
  for (int mb = NUM_MB - 1; mb >= 0; --mb)
    backward_mb(ctx, mb, s0, s1, local);
  for (int stage = 0; stage < 2; ++stage) {
    if (owner(stage) != rank)
      continue;
    if (!reduce_bug("skip"))
      pprt_all_reduce(ctx, stage);
    if (reduce_bug("twice"))
      pprt_all_reduce(ctx, stage);
    if (reduce_bug("late"))
      pprt_accumulate(ctx, stage == 0 ? GW0 : GW1, stage == 0 ? DW0_MB : DW1_MB,
                      0);
    pprt_optimizer_step(ctx, stage);
  }
}
