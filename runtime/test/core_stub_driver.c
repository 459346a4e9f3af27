/* The runtime core driven by a stub driver: linked without libpprt's driver. */
#include "backends/backend.h"
#include "core/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * A one-rank, two-stage program trains on the CPU backend through the
 * pprt_* ABI as generated code does; a loopback transport carries its
 * activation from stage 0 to stage 1 (the rank sends buffer h to itself). The
 * test installs a data source that writes known values and records what it is
 * asked for, and an observer that counts steps, actions and transfers, then
 * checks both and the losses and weights the known values give: stage 0: h = x
 * * w (w broadcast over the rows), sent to stage 1; stage 1: loss = sum(h - y);
 *   backward: dw[j] = sum_r x[r][j], accumulated into gw; SGD on w.
 */

enum { ROWS = 2, COLS = 4, NUM_MB = 2, NUM_STEPS = 3 };
static const float LR = 0.125f;

/* Buffer ids. */
enum { W, GW, X, Y, H, LOSS, LOSS_GRAD, DW, NUM_IDS };

static int failures;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "core_stub_driver: " __VA_ARGS__);                       \
      fputc('\n', stderr);                                                     \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* ---- The program, as pp-compile would emit it. ---- */

void pp_define_program(pprt_context *ctx) {
  pprt_set_program(ctx, PPRT_ABI_VERSION, 1, 2, NUM_MB);
  int64_t rows[] = {ROWS, COLS}, vec[] = {COLS};
  pprt_define_buffer(ctx, W, PPRT_PARAM, 0, 2, PPRT_F32, 1, vec);
  pprt_define_buffer(ctx, GW, PPRT_PARAM_GRAD, 0, 2, PPRT_F32, 1, vec);
  pprt_define_buffer(ctx, X, PPRT_INPUT, 0, 0, PPRT_F32, 2, rows);
  pprt_define_buffer(ctx, Y, PPRT_TARGET, 1, 1, PPRT_F32, 2, rows);
  pprt_define_buffer(ctx, H, PPRT_MICROBATCH, 0, 0, PPRT_F32, 2, rows);
  pprt_define_buffer(ctx, LOSS, PPRT_LOSS, 1, 0, PPRT_F32, 0, NULL);
  pprt_define_buffer(ctx, LOSS_GRAD, PPRT_LOSS_GRAD, 1, 0, PPRT_F32, 0, NULL);
  pprt_define_buffer(ctx, DW, PPRT_MICROBATCH, 0, 0, PPRT_F32, 1, vec);
  pprt_define_saved(ctx, X, 0, PPRT_BACKWARD);
}

static float *buf(pprt_context *ctx, int32_t id, int32_t mb) {
  return pprt_buffer(ctx, id, mb);
}

static void forward0(pprt_context *ctx, int32_t mb) {
  const float *x = buf(ctx, X, mb), *w = buf(ctx, W, 0);
  float *h = buf(ctx, H, mb);
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < COLS; ++j)
      h[r * COLS + j] = x[r * COLS + j] * w[j];
}

static void forward1(pprt_context *ctx, int32_t mb) {
  const float *h = buf(ctx, H, mb), *y = buf(ctx, Y, mb);
  float loss = 0.0f;
  for (int i = 0; i < ROWS * COLS; ++i)
    loss += h[i] - y[i];
  buf(ctx, LOSS, mb)[0] = loss;
}

static void backward0(pprt_context *ctx, int32_t mb) {
  const float *x = buf(ctx, X, mb);
  float *dw = buf(ctx, DW, mb);
  for (int j = 0; j < COLS; ++j) {
    dw[j] = 0.0f;
    for (int r = 0; r < ROWS; ++r)
      dw[j] += x[r * COLS + j];
  }
}

static void action(pprt_context *ctx, void (*fn)(pprt_context *, int32_t),
                   int32_t phase, int32_t stage, int32_t mb) {
  pprt_action_begin(ctx, phase, stage, mb);
  fn(ctx, mb);
  pprt_action_end(ctx);
}

void pp_run_step(pprt_context *ctx, int32_t rank) {
  (void)rank;
  for (int32_t mb = 0; mb < NUM_MB; ++mb) {
    action(ctx, forward0, PPRT_FORWARD, 0, mb);
    pprt_send(ctx, H, mb, 0, 1, PPRT_ACTIVATION);
    pprt_recv(ctx, H, mb, 0, 1, PPRT_ACTIVATION);
    action(ctx, forward1, PPRT_FORWARD, 1, mb);
    pprt_record_loss(ctx, LOSS, mb);
  }
  for (int32_t mb = 0; mb < NUM_MB; ++mb) {
    action(ctx, backward0, PPRT_BACKWARD, 0, mb);
    pprt_accumulate(ctx, GW, DW, mb);
  }
  pprt_optimizer_step(ctx, 0);
  pprt_optimizer_step(ctx, 1);
}

/* ---- A loopback transport: one rank that sends to itself. ---- */

typedef struct mailbox {
  int32_t tag;
  int64_t bytes;
  char data[ROWS * COLS * sizeof(float)];
  int full;
} mailbox;

static mailbox boxes[NUM_MB];

static void lb_none(pprt_transport *t) { (void)t; }
static int32_t lb_split(pprt_transport *t, int32_t color, int32_t key) {
  (void)t, (void)color, (void)key;
  return 0;
}

static int32_t lb_isend(pprt_transport *t, const void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  (void)t, (void)peer;
  mailbox *m = &boxes[tag % NUM_MB];
  if (m->full || bytes > (int64_t)sizeof m->data) {
    fprintf(stderr, "core_stub_driver: send of tag %d has no mailbox\n", tag);
    exit(1);
  }
  memcpy(m->data, buf, (size_t)bytes);
  m->tag = tag;
  m->bytes = bytes;
  m->full = 1;
  return tag;
}

static pprt_recv_status lb_recv(pprt_transport *t, void *buf, int64_t bytes,
                                int32_t peer, int32_t tag, double timeout_s) {
  (void)t, (void)peer, (void)timeout_s;
  mailbox *m = &boxes[tag % NUM_MB];
  if (!m->full || m->tag != tag)
    return PPRT_RECV_TIMEOUT;
  if (m->bytes != bytes)
    return PPRT_RECV_SIZE_MISMATCH;
  memcpy(buf, m->data, (size_t)bytes);
  m->full = 0;
  return PPRT_RECV_OK;
}

static int32_t lb_irecv(pprt_transport *t, void *buf, int64_t bytes,
                        int32_t peer, int32_t tag) {
  (void)t, (void)buf, (void)bytes, (void)peer, (void)tag;
  return -1; /* the program posts no exchange groups */
}

static pprt_recv_status lb_wait_recv(pprt_transport *t, int32_t h,
                                     double timeout_s) {
  (void)t, (void)h, (void)timeout_s;
  return PPRT_RECV_TIMEOUT;
}

static int32_t lb_iallreduce(pprt_transport *t, int32_t group, void *buf,
                             int64_t count, pprt_reduction op) {
  (void)t, (void)group, (void)buf, (void)count, (void)op;
  return 0;
}

static bool lb_wait_for(pprt_transport *t, int32_t h, double timeout_s) {
  (void)t, (void)h, (void)timeout_s;
  return true;
}

static bool lb_wait_all(pprt_transport *t, double timeout_s) {
  (void)t, (void)timeout_s;
  return true;
}

static bool lb_reduce_f64(pprt_transport *t, double *vals, int32_t n,
                          double timeout_s) {
  (void)t, (void)vals, (void)n, (void)timeout_s; /* one rank: its own sum */
  return true;
}

static bool lb_min_i32(pprt_transport *t, int32_t *vals, int32_t n,
                       double timeout_s) {
  (void)t, (void)vals, (void)n, (void)timeout_s;
  return true;
}

static void lb_find_silent(pprt_transport *t, int32_t peer, double timeout_s,
                           pprt_silence *out) {
  (void)t, (void)timeout_s;
  *out = (pprt_silence){.rank = peer, .found_by = 0};
}

static void lb_abort(pprt_transport *t, int code) {
  (void)t;
  exit(code);
}

static const pprt_transport_ops loopback_ops = {
    .split_groups = lb_split,
    .isend = lb_isend,
    .wait_all = lb_wait_all,
    .recv = lb_recv,
    .irecv = lb_irecv,
    .wait_recv = lb_wait_recv,
    .group_begin = lb_none,
    .group_end = lb_none,
    .iallreduce_group_f32 = lb_iallreduce,
    .wait_for = lb_wait_for,
    .reduce_world_f64 = lb_reduce_f64,
    .allreduce_world_min_i32 = lb_min_i32,
    .find_silent = lb_find_silent,
    .abort = lb_abort,
    .destroy = lb_none,
};

/* ---- The stub driver's data source and observer. ---- */

typedef struct calls {
  int init_param[NUM_IDS];
  int param_state[NUM_IDS];
  int load_rows[NUM_IDS][NUM_STEPS][NUM_MB]; /* by first row / ROWS */
  int stray;                                 /* calls with other arguments */
} calls;

/* The known values: weights 1 + j, data from the coordinates; all of them,
   and every sum and product the program makes of them, are exact in
   floats, so losses and weights are compared exactly. */
static float weight0(int j) { return 1.0f + (float)j; }
static float data_value(int32_t id, int64_t step, int64_t row, int j) {
  float x = (float)(step * 16 + row * 4 + j) / 64.0f;
  return id == X ? x : 0.5f * x;
}

static void stub_init_param(void *self, pprt_context *ctx,
                            const pprt_buffer_desc *b, int32_t id, void *out) {
  (void)ctx;
  calls *c = self;
  ++c->init_param[id];
  for (int j = 0; j < b->numel; ++j)
    ((float *)out)[j] = weight0(j);
}

static bool stub_param_state(void *self, pprt_context *ctx,
                             const pprt_buffer_desc *b, int32_t id,
                             int64_t *num_updates, const void **m,
                             const void **v) {
  (void)ctx, (void)b, (void)num_updates, (void)m, (void)v;
  calls *c = self;
  ++c->param_state[id];
  return false;
}

static void stub_load_rows(void *self, pprt_context *ctx,
                           const pprt_buffer_desc *b, int32_t id, int64_t step,
                           int64_t first_row, void *out) {
  (void)ctx;
  calls *c = self;
  int64_t mb = first_row / ROWS;
  if (step < 0 || step >= NUM_STEPS || first_row % ROWS || mb >= NUM_MB ||
      b->dims[0] != ROWS)
    ++c->stray;
  else
    ++c->load_rows[id][step][mb];
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < COLS; ++j)
      ((float *)out)[r * COLS + j] = data_value(id, step, first_row + r, j);
}

typedef struct events {
  int steps_begun, steps_ended;
  int actions_begun, actions_ended, mismatched_ends;
  int32_t phase, stage, mb; /* the open action's */
  int sends, recvs;
  int64_t bytes_sent, bytes_received;
} events;

static void obs_step_begin(void *self, pprt_context *ctx, int64_t step) {
  (void)ctx;
  events *e = self;
  CHECK(step == e->steps_begun, "step %lld began out of order",
        (long long)step);
  ++e->steps_begun;
}

static void obs_step_end(void *self, pprt_context *ctx, int64_t step) {
  (void)ctx;
  events *e = self;
  CHECK(step == e->steps_ended, "step %lld ended out of order",
        (long long)step);
  ++e->steps_ended;
}

static void obs_action_begin(void *self, pprt_context *ctx, int32_t phase,
                             int32_t stage, int32_t mb) {
  (void)ctx;
  events *e = self;
  ++e->actions_begun;
  e->phase = phase, e->stage = stage, e->mb = mb;
}

static void obs_action_end(void *self, pprt_context *ctx, int32_t phase,
                           int32_t stage, int32_t mb) {
  (void)ctx;
  events *e = self;
  ++e->actions_ended;
  if (phase != e->phase || stage != e->stage || mb != e->mb)
    ++e->mismatched_ends;
}

static void obs_send(void *self, pprt_context *ctx, int32_t id, int32_t mb,
                     int32_t peer, int64_t bytes) {
  (void)ctx, (void)mb, (void)peer;
  events *e = self;
  CHECK(id == H, "sent buffer %d", id);
  ++e->sends;
  e->bytes_sent += bytes;
}

static void obs_recv(void *self, pprt_context *ctx, int32_t id, int32_t mb,
                     int32_t peer, int64_t bytes) {
  (void)ctx, (void)mb, (void)peer;
  events *e = self;
  CHECK(id == H, "received buffer %d", id);
  ++e->recvs;
  e->bytes_received += bytes;
}

/* ---- The checks. ---- */

/* The loss of `step` with weights `w`, and the gradient it leaves. */
static double expected_loss(int64_t step, const float *w, float *grad) {
  double loss = 0.0;
  for (int j = 0; j < COLS; ++j)
    grad[j] = 0.0f;
  for (int mb = 0; mb < NUM_MB; ++mb) {
    float mb_loss = 0.0f;
    for (int r = 0; r < ROWS; ++r)
      for (int j = 0; j < COLS; ++j) {
        int64_t row = mb * ROWS + r;
        float x = data_value(X, step, row, j);
        mb_loss += x * w[j] - data_value(Y, step, row, j);
        grad[j] += x;
      }
    loss += mb_loss;
  }
  return loss;
}

static void check_data_source(const calls *c) {
  CHECK(c->init_param[W] == 1, "init_param of the weight: %d calls, not 1",
        c->init_param[W]);
  CHECK(c->param_state[W] == 1, "param_state of the weight: %d calls, not 1",
        c->param_state[W]);
  for (int id = 0; id < NUM_IDS; ++id)
    CHECK(id == W || (!c->init_param[id] && !c->param_state[id]),
          "buffer %d initialised as a param", id);
  for (int id = 0; id < NUM_IDS; ++id)
    for (int s = 0; s < NUM_STEPS; ++s)
      for (int mb = 0; mb < NUM_MB; ++mb) {
        int want = id == X || id == Y;
        CHECK(c->load_rows[id][s][mb] == want,
              "rows of buffer %d, step %d, micro-batch %d: %d loads, not %d",
              id, s, mb, c->load_rows[id][s][mb], want);
      }
  CHECK(!c->stray, "%d loads of rows out of range", c->stray);
}

static void check_observer(const events *e) {
  int actions = NUM_STEPS * NUM_MB * 3;
  CHECK(e->steps_begun == NUM_STEPS && e->steps_ended == NUM_STEPS,
        "steps: %d begun, %d ended, not %d", e->steps_begun, e->steps_ended,
        NUM_STEPS);
  CHECK(e->actions_begun == actions && e->actions_ended == actions,
        "actions: %d begun, %d ended, not %d", e->actions_begun,
        e->actions_ended, actions);
  CHECK(!e->mismatched_ends, "%d actions ended as another", e->mismatched_ends);
  int transfers = NUM_STEPS * NUM_MB;
  int64_t bytes = transfers * ROWS * COLS * (int64_t)sizeof(float);
  CHECK(e->sends == transfers && e->recvs == transfers,
        "transfers: %d sends, %d receives, not %d", e->sends, e->recvs,
        transfers);
  CHECK(e->bytes_sent == bytes && e->bytes_received == bytes,
        "transfers: %lld bytes sent, %lld received, not %lld",
        (long long)e->bytes_sent, (long long)e->bytes_received,
        (long long)bytes);
}

/* Runs the steps, checking each loss and the weights SGD leaves. */
static void train(pprt_context *ctx) {
  float w[COLS], grad[COLS];
  for (int j = 0; j < COLS; ++j)
    w[j] = weight0(j);
  pprt_set_run(ctx, 0, NUM_STEPS);
  for (int64_t step = 0; step < NUM_STEPS; ++step) {
    pprt_begin_step(ctx, step);
    pprt_run_step(ctx);
    double loss = pprt_end_step(ctx);
    double want = expected_loss(step, w, grad);
    CHECK(loss == want, "step %lld: loss %.9g, not %.9g", (long long)step, loss,
          want);
    for (int j = 0; j < COLS; ++j)
      w[j] -= LR * grad[j];
  }
  const float *trained =
      pprt_to_host(ctx, ctx->buffers[W].slots[0].data, COLS * sizeof(float));
  for (int j = 0; j < COLS; ++j)
    CHECK(trained[j] == w[j], "weight %d: %.9g after training, not %.9g", j,
          (double)trained[j], (double)w[j]);
}

/* ---- Ids past their table, from any data source. ---- */

/* A second program, in a child: one stage whose input (buffer 0, i64 or
   i32) indexes a table of COLS * ROWS rows, with -100 ignored if
   `ignores`. The data source writes ids 0..7 into micro-batch 0 and `bad`
   at row 1 position 2 of micro-batch 1, which the core must refuse,
   naming them, unless it is the ignored id. */
static int64_t bad_id;
static bool ignores;

static void ids_load_rows(void *self, pprt_context *ctx,
                          const pprt_buffer_desc *b, int32_t id, int64_t step,
                          int64_t first_row, void *out) {
  (void)self, (void)ctx, (void)id, (void)step;
  for (int64_t i = 0; i < b->numel; ++i) {
    int64_t v = first_row > 0 && i == COLS + 2 ? bad_id : i;
    if (b->dtype == PPRT_I64)
      ((int64_t *)out)[i] = v;
    else
      ((int32_t *)out)[i] = (int32_t)v;
  }
}

static pprt_backend *cpu_backend(void) {
  char err[512];
  pprt_backend *be = pprt_cpu_backend_create(-1, err, sizeof err);
  if (!be) {
    fprintf(stderr, "core_stub_driver: %s\n", err);
    exit(1);
  }
  return be;
}

static void run_ids_child(int32_t dtype) {
  pprt_transport loopback = {&loopback_ops, 0, 1, 0, 1 << 20, false, NULL};
  pprt_options opts = {.sequential_replicas = 1, .timeout_s = 10.0};
  pprt_context *ctx = pprt_context_create(&loopback, cpu_backend(), &opts);
  pprt_data_source source = {NULL, NULL, NULL, ids_load_rows};
  pprt_set_data_source(ctx, &source);
  pprt_set_program(ctx, PPRT_ABI_VERSION, 1, 1, NUM_MB);
  int64_t dims[] = {ROWS, COLS};
  pprt_define_buffer(ctx, 0, PPRT_INPUT, 0, 3, dtype, 2, dims);
  pprt_set_id_bound(ctx, 0, ROWS * COLS);
  if (ignores)
    pprt_set_id_ignored(ctx, 0, -100);
  if (!pprt_context_start(ctx))
    exit(3);
  pprt_set_run(ctx, 0, 1);
  pprt_begin_step(ctx, 0);
  for (int32_t mb = 0; mb < NUM_MB; ++mb)
    pprt_buffer(ctx, 0, mb);
  exit(0); /* the bad id went through */
}

/* Runs the child with `dtype` and `bad`; checks that it exits 1 with
   `want` as its line, or 0 and silent if `want` is "". */
static void check_bad_ids(int32_t dtype, int64_t bad, const char *want) {
  int fds[2];
  if (pipe(fds) != 0) {
    CHECK(0, "pipe: %s", strerror(errno));
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    bad_id = bad;
    run_ids_child(dtype);
  }
  close(fds[1]);
  char out[1024] = "";
  size_t n = 0;
  ssize_t got;
  while (n < sizeof out - 1 &&
         (got = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
    n += (size_t)got;
  out[n] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  int rc = *want ? 1 : 0;
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == rc &&
            strcmp(out, want) == 0,
        "id %lld: exit status %d and\n%s\nnot exit %d and\n%s", (long long)bad,
        WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, rc, want);
}

static void check_id_bounds(void) {
  check_bad_ids(PPRT_I64, ROWS * COLS,
                "pprt: rank 0: step 1: input argument 3 of stage 0 "
                "micro-batch 1 holds id 8 at row 1 position 2, but it indexes "
                "a table of 8 rows: ids must be in [0, 8)\n");
  check_bad_ids(PPRT_I32, -1,
                "pprt: rank 0: step 1: input argument 3 of stage 0 "
                "micro-batch 1 holds id -1 at row 1 position 2, but it "
                "indexes a table of 8 rows: ids must be in [0, 8)\n");
  ignores = true;
  check_bad_ids(PPRT_I64, -100, "");
  check_bad_ids(PPRT_I64, -99,
                "pprt: rank 0: step 1: input argument 3 of stage 0 "
                "micro-batch 1 holds id -99 at row 1 position 2, but it "
                "indexes a table of 8 rows: ids must be in [0, 8) (or -100, "
                "which it ignores)\n");
}

int main(void) {
  pprt_transport loopback = {&loopback_ops, 0, 1, 0, 1 << 20, false, NULL};
  pprt_backend *be = cpu_backend();
  pprt_options opts = {.optimizer = PPRT_SGD,
                       .lr = LR,
                       .sequential_replicas = 1,
                       .timeout_s = 10.0};
  pprt_context *ctx = pprt_context_create(&loopback, be, &opts);
  calls asked = {0};
  events seen = {0};
  pprt_data_source source = {&asked, stub_init_param, stub_param_state,
                             stub_load_rows};
  pprt_observer observer = {
      &seen,          obs_step_begin, obs_step_end, obs_action_begin,
      obs_action_end, obs_send,       obs_recv};
  pprt_set_data_source(ctx, &source);
  pprt_set_observer(ctx, &observer);
  pp_define_program(ctx);
  if (!pprt_context_start(ctx))
    return 1;
  train(ctx);
  check_data_source(&asked);
  check_observer(&seen);
  pprt_context_destroy(ctx);
  check_id_bounds();
  if (failures)
    return 1;
  printf("core_stub_driver: ok\n");
  return 0;
}
