/* --profile: times every stage-function call and writes the measured
   per-stage costs as a pp-profile-v1 cost profile (docs/CostProfile.md);
   for a program of several shape variants, each stage's costs per variant
   too. */
#define _POSIX_C_SOURCE 200809L

#include "driver/driver.h"
#include "driver/input_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NUM_PHASES = 4 };

/* Per stage: the phases' samples, then the optimizer step's. */
enum { OPTIMIZER_SLOT = NUM_PHASES, NUM_SLOTS = NUM_PHASES + 1 };

/* Round trips of the transfer probe, after as many unmeasured ones. */
enum { PROBE_ROUND_TRIPS = 20 };

/* A growable list of durations in milliseconds. */
typedef struct samples {
  double *v;
  int64_t n;
  int64_t cap;
} samples;

typedef struct pprt_profile {
  bool measuring; /* false during the warm-up steps */
  bool in_action;
  int32_t phase;
  int32_t stage;
  int32_t variant;
  double action_start;
  clockid_t action_clock; /* CLOCK_MONOTONIC or the thread CPU-time clock */
  samples *actions;       /* [stage * NUM_SLOTS + phase or OPTIMIZER_SLOT] */
  /* Shape variants of the program (1 without), and under several the
     phases' samples per variant: [(stage * num_variants + variant) *
     NUM_PHASES + phase]. */
  int32_t num_variants;
  samples *variant_actions;
  samples steps;
  samples step_actions; /* per step: the sum of this process's actions */
  samples step_rest;    /* per step: the time outside actions and updates */
  samples step_setup;   /* per step: pprt_begin_step's time */
  samples step_busy;    /* per step: the time in actions and updates */
  double actions_this_step, updates_this_step;
  double update_start;
  int64_t max_send_bytes;
} pprt_profile;

static double clock_ms(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

static void push_sample(const pprt_context *ctx, samples *s, double v) {
  pprt_reserve(ctx, (void **)&s->v, &s->cap, s->n, sizeof *s->v,
               "the profiler's samples");
  s->v[s->n++] = v;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of the samples (reorders them); 0 if there are none. */
static double median(samples *s) {
  if (s->n == 0)
    return 0.0;
  qsort(s->v, (size_t)s->n, sizeof *s->v, compare_doubles);
  int64_t h = s->n / 2;
  return s->n % 2 ? s->v[h] : 0.5 * (s->v[h - 1] + s->v[h]);
}

/* The observer's slots: time the stage actions pprt_action_begin/end
   bracket, and note the largest send for the transfer probe. */
static void profile_action_begin(void *self, pprt_context *ctx, int32_t phase,
                                 int32_t stage, int32_t mb) {
  pprt_profile *p = self;
  if (!p->measuring)
    return;
  if (p->in_action)
    pprt_fatal(ctx, "pprt_action_begin: stage %d is already in an action",
               p->stage);
  if (phase < 0 || phase >= NUM_PHASES || stage < 0 || stage >= ctx->num_stages)
    pprt_fatal(ctx, "pprt_action_begin: bad phase %d or stage %d", phase,
               stage);
  p->in_action = true;
  p->phase = phase;
  p->stage = stage;
  p->variant = ctx->microbatch_variant ? ctx->microbatch_variant[mb] : 0;
  if (p->variant >= p->num_variants)
    pprt_fatal(ctx, "pprt_action_begin: micro-batch %d runs variant %d of %d",
               mb, p->variant, p->num_variants);
  p->action_start = clock_ms(p->action_clock);
}

static void profile_action_end(void *self, pprt_context *ctx, int32_t phase,
                               int32_t stage, int32_t mb) {
  (void)phase;
  (void)stage;
  (void)mb;
  pprt_profile *p = self;
  if (!p->in_action)
    return;
  double elapsed = clock_ms(p->action_clock) - p->action_start;
  p->in_action = false;
  p->actions_this_step += elapsed;
  push_sample(ctx, &p->actions[p->stage * NUM_SLOTS + p->phase], elapsed);
  if (p->variant_actions)
    push_sample(
        ctx,
        &p->variant_actions[((int64_t)p->stage * p->num_variants + p->variant) *
                                NUM_PHASES +
                            p->phase],
        elapsed);
}

/* Times each stage's parameter updates: its optimizer step's own work. */
static void profile_update_begin(void *self, pprt_context *ctx, int32_t stage) {
  (void)ctx;
  (void)stage;
  pprt_profile *p = self;
  p->update_start = clock_ms(p->action_clock);
}

static void profile_update_end(void *self, pprt_context *ctx, int32_t stage) {
  pprt_profile *p = self;
  if (!p->measuring || stage < 0 || stage >= ctx->num_stages)
    return;
  double elapsed = clock_ms(p->action_clock) - p->update_start;
  p->updates_this_step += elapsed;
  push_sample(ctx, &p->actions[stage * NUM_SLOTS + OPTIMIZER_SLOT], elapsed);
}

static void profile_send(void *self, pprt_context *ctx, int32_t id, int32_t mb,
                         int32_t peer, int64_t bytes) {
  (void)ctx;
  (void)id;
  (void)mb;
  (void)peer;
  pprt_profile *p = self;
  if (bytes > p->max_send_bytes)
    p->max_send_bytes = bytes;
}

/* Runs the warm-up and measured steps, recording each measured step's
   duration (rank 0's view: it ends after every rank's loss arrived). */
static void run_steps(const pprt_driver *d, pprt_profile *p) {
  pprt_context *ctx = d->ctx;
  bool root = ctx->transport->world_rank == 0;
  int64_t total = d->opts.warmup_steps + d->opts.steps;
  pprt_set_run(ctx, 0, total);
  for (int64_t step = 0; step < total; ++step) {
    p->measuring = step >= d->opts.warmup_steps;
    double start = now_ms();
    p->actions_this_step = p->updates_this_step = 0.0;
    pprt_begin_step(ctx, step);
    double setup = now_ms() - start;
    pprt_run_step(ctx);
    double loss = pprt_end_step(ctx);
    if (p->measuring) {
      double elapsed = now_ms() - start;
      push_sample(ctx, &p->steps, elapsed);
      push_sample(ctx, &p->step_actions, p->actions_this_step);
      double busy = p->actions_this_step + p->updates_this_step;
      push_sample(ctx, &p->step_rest, elapsed - busy);
      push_sample(ctx, &p->step_busy, busy);
      push_sample(ctx, &p->step_setup, setup);
    }
    if (root) {
      printf("step %lld loss %.9g\n", (long long)(step + 1), loss);
      fflush(stdout);
    }
  }
  p->measuring = false;
}

static void expect_recv(pprt_context *ctx, void *buf, int64_t n, int32_t peer) {
  pprt_transport *t = ctx->transport;
  pprt_recv_status s = t->ops->recv(t, buf, n, peer, 0, ctx->opts.timeout_s);
  if (s == PPRT_RECV_TIMEOUT)
    pprt_fatal_silent(ctx, peer, "the transfer probe from rank %d", peer);
  if (s != PPRT_RECV_OK)
    pprt_fatal(ctx, "transfer probe: a wrong reply from rank %d", peer);
}

static void send_probe(pprt_context *ctx, void *buf, int64_t n, int32_t peer) {
  pprt_transport *t = ctx->transport;
  if (!t->ops->wait_for(t, t->ops->isend(t, buf, n, peer, 0),
                        ctx->opts.timeout_s))
    pprt_fatal_silent(ctx, peer, "rank %d to take the transfer probe", peer);
}

/* One-way time of the largest message a step sends, between pipeline ranks
   r and r + 1 of replica 0 and tp index 0 (half the median round trip); the
   slowest pair.
   Valid on world rank 0; 0 with one rank. Every process takes part. */
static double measure_transfer(pprt_context *ctx, pprt_profile *p) {
  pprt_transport *t = ctx->transport;
  int32_t largest =
      -(int32_t)(p->max_send_bytes < INT32_MAX ? p->max_send_bytes : INT32_MAX);
  pprt_min_everywhere(ctx, &largest, 1, "the largest transfer");
  int64_t n = -(int64_t)largest;
  if (ctx->num_ranks < 2 || n == 0)
    return 0.0;
  /* Device memory, like the buffers a step sends. */
  void *buf = pprt_device_alloc(ctx, (size_t)n, "the transfer probe");
  double *one_way = pprt_xcalloc(ctx, (size_t)ctx->num_ranks, sizeof *one_way);
  int32_t me = t->world_rank, tp = ctx->tensor_parallel;
  for (int32_t r = 0; r + 1 < ctx->num_ranks; ++r) {
    int32_t from = tp * r, to = tp * (r + 1); /* world ranks */
    if (me != from && me != to)
      continue;
    samples trips = {0};
    for (int32_t k = 0; k < 2 * PROBE_ROUND_TRIPS; ++k) {
      double start = now_ms();
      if (me == from) {
        send_probe(ctx, buf, n, to);
        expect_recv(ctx, buf, n, to);
      } else {
        expect_recv(ctx, buf, n, from);
        send_probe(ctx, buf, n, from);
      }
      if (k >= PROBE_ROUND_TRIPS)
        push_sample(ctx, &trips, now_ms() - start);
    }
    if (me == from)
      one_way[r] = 0.5 * median(&trips);
    free(trips.v);
  }
  pprt_sum_to_rank0(ctx, one_way, ctx->num_ranks, "transfer times");
  double slowest = 0.0;
  for (int32_t r = 0; r < ctx->num_ranks; ++r)
    slowest = one_way[r] > slowest ? one_way[r] : slowest;
  free(one_way);
  ctx->backend->ops->free(ctx->backend, buf);
  return slowest;
}

/* Per (stage, slot): the median on the rank of replica 0 and tp index 0
   that ran it, and 1 where it ran, summed over the world into world rank
   0. */
static double *gather_medians(pprt_context *ctx, pprt_profile *p) {
  int32_t n = ctx->num_stages * NUM_SLOTS;
  double *out = pprt_xcalloc(ctx, 2 * (size_t)n, sizeof *out);
  for (int32_t i = 0; i < n && ctx->replica == 0 && ctx->tp_index == 0; ++i) {
    if (p->actions[i].n == 0)
      continue;
    out[i] = median(&p->actions[i]);
    out[n + i] = 1.0;
  }
  pprt_sum_to_rank0(ctx, out, 2 * n, "action times");
  return out;
}

/* Every process's median of `s`, in world rank order on world rank 0;
   the caller frees it. */
static double *gather_per_process(pprt_context *ctx, samples *s,
                                  const char *what) {
  int32_t n = ctx->transport->world_size;
  double *all = pprt_xcalloc(ctx, (size_t)n, sizeof *all);
  all[ctx->transport->world_rank] = median(s);
  pprt_sum_to_rank0(ctx, all, n, what);
  return all;
}

/* The step's set-up on world rank 0: on one process, the median time a
   step spends outside actions and parameter updates (nothing waits there);
   on more, where that time also holds waits for other processes, the
   step's start alone (pprt_begin_step: zeroing gradients). The least over
   processes. */
static double gather_step_overhead(pprt_context *ctx, pprt_profile *p) {
  bool alone = ctx->transport->world_size == 1;
  double *rest = gather_per_process(ctx, alone ? &p->step_rest : &p->step_setup,
                                    "step set-up times");
  double least = rest[0];
  for (int32_t r = 1; r < ctx->transport->world_size; ++r)
    least = rest[r] < least ? rest[r] : least;
  free(rest);
  return least > 0.0 ? least : 0.0;
}

/* Whether every stage's optimizer step was timed. */
static bool all_updates_timed(const pprt_context *ctx, const double *medians) {
  int32_t n = ctx->num_stages * NUM_SLOTS;
  for (int32_t s = 0; s < ctx->num_stages; ++s)
    if (medians[n + s * NUM_SLOTS + OPTIMIZER_SLOT] == 0.0)
      return false;
  return true;
}

/* Bytes each stage's forward holds per micro-batch: all of its saved
   buffers (`activation`) and those W still reads (`stash`); those of shape
   variant `variant` only, unless it is -1. */
static void held_bytes(const pprt_context *ctx, int32_t variant,
                       double *activation, double *stash) {
  for (int64_t i = 0; i < ctx->num_saved; ++i) {
    const pprt_saved_buffer *s = &ctx->saved[i];
    const pprt_buffer_desc *b = &ctx->buffers[s->id];
    if (variant >= 0 && b->variant != variant)
      continue;
    activation[s->stage] += (double)b->bytes;
    if (s->until == PPRT_BACKWARD_WEIGHT)
      stash[s->stage] += (double)b->bytes;
  }
}

/* The highest shape variant of at most `limit` that a plan
   (pprt_set_plan_microbatch_variant) or a micro-batch
   (pprt_set_microbatch_variant) runs; -1 if none. */
static int32_t highest_variant(const pprt_context *ctx, int32_t limit) {
  int32_t highest = -1;
  for (int32_t k = 0; k <= ctx->num_plans; ++k) {
    /* The plans, then the micro-batches' own variants. */
    bool plan = k < ctx->num_plans;
    const int32_t *variant =
        plan ? ctx->plans[k].variant : ctx->microbatch_variant;
    int32_t n = plan ? ctx->plans[k].num_microbatches
                     : (variant ? ctx->num_microbatches : 0);
    for (int32_t mb = 0; mb < n; ++mb)
      if (variant[mb] > highest && variant[mb] <= limit)
        highest = variant[mb];
  }
  return highest;
}

static bool runs_variant(const pprt_context *ctx, int32_t variant) {
  return highest_variant(ctx, variant) == variant;
}

/* The shape variants of the program: one past the highest run on any
   process (1 where none is named). Every process takes part. */
static int32_t count_variants(pprt_context *ctx) {
  int32_t highest = highest_variant(ctx, INT32_MAX);
  int32_t least = highest > 0 ? -highest : 0;
  pprt_min_everywhere(ctx, &least, 1, "the shape variants");
  return 1 - least;
}

/* Per (stage, variant, phase): the mean over the processes of tp index 0
   that ran it (every replica: replicas may run different plans) of their
   medians, and how many ran it, on world rank 0; NULL for one variant. */
static double *gather_variant_medians(pprt_context *ctx, pprt_profile *p) {
  if (!p->variant_actions)
    return NULL;
  int32_t n = ctx->num_stages * p->num_variants * NUM_PHASES;
  double *out = pprt_xcalloc(ctx, 2 * (size_t)n, sizeof *out);
  for (int32_t i = 0; i < n && ctx->tp_index == 0; ++i) {
    if (p->variant_actions[i].n == 0)
      continue;
    out[i] = median(&p->variant_actions[i]);
    out[n + i] = 1.0;
  }
  pprt_sum_to_rank0(ctx, out, 2 * n, "action times per shape variant");
  for (int32_t i = 0; i < n; ++i)
    if (out[n + i] > 0)
      out[i] /= out[n + i];
  return out;
}

/* What write_profile writes beside the per-stage medians (ms). */
typedef struct step_times {
  double transfer, step, actions, overhead;
  const double *busy; /* per process: its actions and updates */
  /* gather_variant_medians' for a program of several shape variants. */
  int32_t num_variants;
  const double *variant_medians;
} step_times;

/* B and W of a stage from the medians `m` of its phases and whether each
   ran, `ran`: a fused backward is all B (a program compiled without
   --split-backward cannot tell B from W). */
static void backward_times(const double *m, const double *ran, double *b,
                           double *w) {
  bool split = ran[PPRT_BACKWARD_INPUT] > 0 || ran[PPRT_BACKWARD_WEIGHT] > 0;
  *b = split ? m[PPRT_BACKWARD_INPUT] : m[PPRT_BACKWARD];
  *w = split ? m[PPRT_BACKWARD_WEIGHT] : 0.0;
}

/* Stage `s`'s `variants` entries: one per shape variant, in order. */
static void write_variants(const pprt_context *ctx, FILE *f, int32_t s,
                           step_times t) {
  int32_t n = ctx->num_stages * t.num_variants * NUM_PHASES;
  double *activation =
      pprt_xcalloc(ctx, 2 * (size_t)ctx->num_stages, sizeof *activation);
  double *stash = activation + ctx->num_stages;
  fprintf(f, ", \"variants\": [");
  for (int32_t v = 0; v < t.num_variants; ++v) {
    memset(activation, 0, 2 * (size_t)ctx->num_stages * sizeof *activation);
    held_bytes(ctx, v, activation, stash);
    int64_t at = ((int64_t)s * t.num_variants + v) * NUM_PHASES;
    const double *m = t.variant_medians + at;
    double b, w;
    backward_times(m, t.variant_medians + n + at, &b, &w);
    fprintf(f,
            "%s\n      {\"variant\": %d, \"forward\": %.6g, "
            "\"backward_input\": %.6g, \"backward_weight\": %.6g, "
            "\"activation_memory\": %.17g, \"stash_memory\": %.17g}",
            v ? "," : "", v, m[PPRT_FORWARD], b, w, activation[s], stash[s]);
  }
  fprintf(f, "]");
  free(activation);
}

/* Writes the profile; `medians` as gather_medians returns them. */
static bool write_profile(const pprt_driver *d, FILE *f, const double *medians,
                          step_times t) {
  pprt_context *ctx = d->ctx;
  int32_t n = ctx->num_stages * NUM_SLOTS;
  bool updates = all_updates_timed(ctx, medians);
  double *activation =
      pprt_xcalloc(ctx, 2 * (size_t)ctx->num_stages, sizeof *activation);
  double *stash = activation + ctx->num_stages;
  held_bytes(ctx, -1, activation, stash);
  fprintf(f,
          "{\n  \"format\": \"pp-profile-v1\",\n  \"time_unit\": \"ms\",\n"
          "  \"memory_unit\": \"bytes\",\n  \"transfer\": %.6g,\n"
          "  \"step_overhead\": %.6g,\n  \"stages\": [\n",
          t.transfer, t.overhead);
  bool fused = false;
  for (int32_t s = 0; s < ctx->num_stages; ++s) {
    const double *m = medians + s * NUM_SLOTS;
    const double *ran = medians + n + s * NUM_SLOTS;
    fused |= ran[PPRT_BACKWARD] > 0;
    double b, w;
    backward_times(m, ran, &b, &w);
    fprintf(f,
            "    {\"stage\": %d, \"forward\": %.6g, \"backward_input\": %.6g, "
            "\"backward_weight\": %.6g, \"activation_memory\": %.17g, "
            "\"stash_memory\": %.17g",
            s, m[PPRT_FORWARD], b, w, activation[s], stash[s]);
    if (updates)
      fprintf(f, ", \"optimizer\": %.6g", m[OPTIMIZER_SLOT]);
    if (t.variant_medians)
      write_variants(ctx, f, s, t);
    fprintf(f, "}%s\n", s + 1 < ctx->num_stages ? "," : "");
  }
  fprintf(f,
          "  ],\n  \"meta\": {\"tool\": \"pprt --profile\", \"step_time\": "
          "%.6g, \"step_action_time\": %.6g, \"steps\": %lld, "
          "\"warmup_steps\": %lld, \"ranks\": %d, "
          "\"processes\": %d, \"microbatches\": %d, \"backward\": \"%s\", "
          "\"clock\": \"%s\", \"process_busy_time\": [",
          t.step, t.actions, (long long)d->opts.steps,
          (long long)d->opts.warmup_steps, ctx->num_ranks,
          ctx->transport->world_size, ctx->num_microbatches,
          fused ? "fused: backward_input is B + W" : "split",
          d->opts.profile_cpu_time ? "cpu" : "wall");
  for (int32_t r = 0; r < ctx->transport->world_size; ++r)
    fprintf(f, "%s%.6g", r ? ", " : "", t.busy[r]);
  fprintf(f, "]");
  if (d->opts.profile_model)
    fprintf(f, ", \"model\": \"%s\"", d->opts.profile_model);
  fprintf(f, "}\n}\n");
  free(activation);
  return !ferror(f);
}

static void free_profile(pprt_profile *p, int32_t num_stages) {
  for (int32_t i = 0; i < num_stages * NUM_SLOTS; ++i)
    free(p->actions[i].v);
  free(p->actions);
  int32_t n = num_stages * p->num_variants * NUM_PHASES;
  for (int32_t i = 0; p->variant_actions && i < n; ++i)
    free(p->variant_actions[i].v);
  free(p->variant_actions);
  free(p->steps.v);
  free(p->step_actions.v);
  free(p->step_rest.v);
  free(p->step_setup.v);
  free(p->step_busy.v);
  free(p);
}

/* The first stage with no timed forward, or -1: a program built before the
   action hooks existed times nothing. */
static int32_t find_untimed_stage(const pprt_context *ctx,
                                  const double *medians) {
  int32_t n = ctx->num_stages * NUM_SLOTS;
  for (int32_t s = 0; s < ctx->num_stages; ++s)
    if (medians[n + s * NUM_SLOTS + PPRT_FORWARD] == 0.0)
      return s;
  return -1;
}

/* Whether every (stage, variant) of `t` had its forward and backward
   timed; if not, says on world rank 0 which variant had no sample and how
   to get one, since a profile must list every variant and a zero would
   read as measured. */
static bool every_variant_timed(const pprt_driver *d, step_times t) {
  const pprt_context *ctx = d->ctx;
  int32_t n = ctx->num_stages * t.num_variants * NUM_PHASES;
  for (int32_t s = 0; t.variant_medians && s < ctx->num_stages; ++s)
    for (int32_t v = 0; v < t.num_variants; ++v) {
      const double *ran = t.variant_medians + n +
                          ((int64_t)s * t.num_variants + v) * NUM_PHASES;
      if (ran[PPRT_FORWARD] > 0 &&
          (ran[PPRT_BACKWARD_INPUT] > 0 || ran[PPRT_BACKWARD] > 0))
        continue;
      if (!runs_variant(ctx, v))
        fprintf(stderr,
                "pprt: --profile: no plan of the program runs shape variant "
                "%d, so it has no sample to write: compile the profiled "
                "program for an index (--step-plans) a step of which runs "
                "it\n",
                v);
      else
        fprintf(stderr,
                "pprt: --profile: no micro-batch of shape variant %d ran "
                "stage %d in the %lld timed steps, so it has no sample to "
                "write: time more steps (--steps; the index has %d lines) "
                "so that a step whose plan runs it is timed\n",
                v, s, (long long)d->opts.steps, ctx->plan_lines);
      return false;
    }
  return true;
}

int pprt_profile_run(pprt_driver *d) {
  pprt_context *ctx = d->ctx;
  pprt_profile *p = pprt_xcalloc(ctx, 1, sizeof *p);
  p->actions = pprt_xcalloc(ctx, (size_t)ctx->num_stages * NUM_SLOTS,
                            sizeof *p->actions);
  /* CPU time leaves out the time a process waits for a core: what a call
     takes on a core of its own, when the machine is oversubscribed. */
  p->action_clock =
      d->opts.profile_cpu_time ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
  pprt_observer observer = {.self = p,
                            .action_begin = profile_action_begin,
                            .action_end = profile_action_end,
                            .send = profile_send,
                            .update_begin = profile_update_begin,
                            .update_end = profile_update_end};
  p->num_variants = count_variants(ctx);
  if (p->num_variants > 1)
    p->variant_actions = pprt_xcalloc(
        ctx, (size_t)ctx->num_stages * (size_t)p->num_variants * NUM_PHASES,
        sizeof *p->variant_actions);
  pprt_set_observer(ctx, &observer);
  run_steps(d, p);
  double transfer = measure_transfer(ctx, p);
  double *medians = gather_medians(ctx, p);
  double *busy = gather_per_process(ctx, &p->step_busy, "busy times");
  double *variant_medians = gather_variant_medians(ctx, p);
  step_times times = {transfer,
                      median(&p->steps),
                      median(&p->step_actions),
                      gather_step_overhead(ctx, p),
                      busy,
                      p->num_variants,
                      variant_medians};
  int rc = 0;
  int32_t untimed = find_untimed_stage(ctx, medians);
  if (ctx->transport->world_rank == 0 && untimed >= 0) {
    fprintf(stderr,
            "pprt: --profile: no forward of stage %d was timed; rebuild the "
            "program with a pp-compile that brackets stage functions with "
            "pprt_action_begin/end\n",
            untimed);
    rc = 1;
  } else if (ctx->transport->world_rank == 0 &&
             !every_variant_timed(d, times)) {
    rc = 1;
  } else if (ctx->transport->world_rank == 0) {
    const char *path = d->opts.profile_path;
    char why[4400] = "";
    FILE *f = pprt_open_output(path, why, sizeof why);
    bool ok = f && write_profile(d, f, medians, times);
    if (f && !ok)
      snprintf(why, sizeof why, "cannot write '%s': %s", path, strerror(errno));
    if (f && fclose(f) != 0 && ok) {
      ok = false;
      snprintf(why, sizeof why, "cannot write '%s': %s", path, strerror(errno));
    }
    if (!ok) {
      fprintf(stderr, "pprt: rank 0: --profile: %s\n", why);
      rc = 1;
    }
  }
  free(medians);
  free(variant_medians);
  free(busy);
  pprt_set_observer(ctx, NULL);
  free_profile(p, ctx->num_stages);
  return rc;
}
