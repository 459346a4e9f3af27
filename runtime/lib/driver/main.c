/* main() of every pp training executable: options, then the step loop. */
#include "core/core.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PARSE_OK, PARSE_HELP, PARSE_ERROR };

static void usage(FILE *f, const char *prog) {
  fprintf(
      f,
      "usage: %s [options]\n"
      "  --steps N          training steps to run (default 10)\n"
      "  --optimizer NAME   sgd (default) or adam\n"
      "  --lr F             learning rate (default 0.01)\n"
      "  --beta1 F          Adam's first-moment decay (default 0.9)\n"
      "  --beta2 F          Adam's second-moment decay (default 0.999)\n"
      "  --eps F            Adam's denominator term (default 1e-8)\n"
      "  --seed N           seed of init and synthetic data (default 1)\n"
      "  --timeout SECONDS  receive timeout (default $PPRT_TIMEOUT or 60)\n"
      "  --sequential-replicas K\n"
      "                     each process also plays K data-parallel\n"
      "                     replicas in turn per step (default 1)\n"
      "  --corpus FILE      train on one-hot character windows of FILE\n"
      "                     instead of synthetic data\n"
      "  --print-params     print per-parameter sums after training\n"
      "  --profile FILE     after --warmup steps, time --steps steps and\n"
      "                     write per-stage costs to FILE (pp-profile-v1)\n"
      "  --warmup N         unmeasured steps before profiling (default 2)\n"
      "  --profile-clock C  wall (default) or cpu: time stage calls in\n"
      "                     wall-clock or in CPU time\n"
      "  --backend NAME     cpu (default: $PPRT_BACKEND or cpu) or guarded,\n"
      "                     whose memory faults outside backend ops and\n"
      "                     stage functions (a test of the runtime)\n"
      "  --check-gradients  compare gradients with finite differences\n"
      "                     (one-stage programs) instead of training\n"
      "  --help             show this help\n",
      prog);
}

static bool parse_i64(const char *s, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  *out = v;
  return errno == 0 && end != s && *end == '\0';
}

static bool parse_u64(const char *s, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  *out = v;
  return errno == 0 && end != s && *end == '\0' && s[0] != '-';
}

static bool parse_f64(const char *s, double *out) {
  char *end = NULL;
  errno = 0;
  *out = strtod(s, &end);
  return errno == 0 && end != s && *end == '\0' && isfinite(*out);
}

/* Reads the value of `name` from "--name=V" or "--name V". */
static const char *option_value(int argc, char **argv, int *i,
                                const char *name) {
  const char *arg = argv[*i] + 2;
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0)
    return NULL;
  if (arg[len] == '=')
    return arg + len + 1;
  if (arg[len] != '\0' || *i + 1 >= argc)
    return NULL;
  return argv[++*i];
}

static bool parse_timeout(const char *s, double *out) {
  return parse_f64(s, out) && *out > 0.0;
}

static void default_options(pprt_options *o) {
  o->steps = 10;
  o->optimizer = PPRT_SGD;
  o->lr = 0.01f;
  o->beta1 = 0.9f;
  o->beta2 = 0.999f;
  o->eps = 1e-8f;
  o->sequential_replicas = 1;
  o->seed = 1;
  o->timeout_s = 60.0;
  o->corpus_path = NULL;
  o->print_params = false;
  o->check_gradients = false;
  o->profile_path = NULL;
  o->warmup_steps = 2;
  o->profile_cpu_time = false;
  o->backend = "cpu";
}

/* Applies one value option; returns false if `argv[*i]` is not one of them
   or its value is invalid. */
/* Parses a float in [lo, hi). */
static bool parse_f32_in(const char *s, double lo, double hi, float *out) {
  double d;
  bool ok = parse_f64(s, &d) && d >= lo && d < hi;
  *out = (float)d;
  return ok;
}

static bool parse_optimizer(const char *s, pprt_optimizer *out) {
  if (strcmp(s, "sgd") == 0)
    *out = PPRT_SGD;
  else if (strcmp(s, "adam") == 0)
    *out = PPRT_ADAM;
  else
    return false;
  return true;
}

static bool parse_profile_clock(const char *s, bool *cpu_time) {
  *cpu_time = strcmp(s, "cpu") == 0;
  return *cpu_time || strcmp(s, "wall") == 0;
}

static bool parse_backend(const char *s, const char **out) {
  *out = s;
  return strcmp(s, "cpu") == 0 || strcmp(s, "guarded") == 0;
}

static bool parse_value_option(int argc, char **argv, int *i, pprt_options *o) {
  const char *v;
  int64_t n;
  if ((v = option_value(argc, argv, i, "backend")))
    return parse_backend(v, &o->backend);
  if ((v = option_value(argc, argv, i, "steps")))
    return parse_i64(v, &o->steps) && o->steps >= 0;
  if ((v = option_value(argc, argv, i, "optimizer")))
    return parse_optimizer(v, &o->optimizer);
  if ((v = option_value(argc, argv, i, "lr")))
    return parse_f32_in(v, -HUGE_VAL, HUGE_VAL, &o->lr);
  if ((v = option_value(argc, argv, i, "beta1")))
    return parse_f32_in(v, 0.0, 1.0, &o->beta1);
  if ((v = option_value(argc, argv, i, "beta2")))
    return parse_f32_in(v, 0.0, 1.0, &o->beta2);
  if ((v = option_value(argc, argv, i, "eps")))
    return parse_f32_in(v, 0.0, HUGE_VAL, &o->eps) && o->eps > 0.0f;
  if ((v = option_value(argc, argv, i, "sequential-replicas"))) {
    bool ok = parse_i64(v, &n) && n >= 1 && n <= INT32_MAX;
    o->sequential_replicas = (int32_t)n;
    return ok;
  }
  if ((v = option_value(argc, argv, i, "corpus")))
    return *(o->corpus_path = v) != '\0';
  if ((v = option_value(argc, argv, i, "profile")))
    return *(o->profile_path = v) != '\0';
  if ((v = option_value(argc, argv, i, "profile-clock")))
    return parse_profile_clock(v, &o->profile_cpu_time);
  if ((v = option_value(argc, argv, i, "warmup")))
    return parse_i64(v, &o->warmup_steps) && o->warmup_steps >= 0;
  if ((v = option_value(argc, argv, i, "seed")))
    return parse_u64(v, &o->seed);
  if ((v = option_value(argc, argv, i, "timeout")))
    return parse_timeout(v, &o->timeout_s);
  return false;
}

static int parse_options(int argc, char **argv, pprt_options *o, char *err,
                         size_t err_size) {
  default_options(o);
  const char *env = getenv("PPRT_TIMEOUT");
  if (env && *env && !parse_timeout(env, &o->timeout_s)) {
    snprintf(err, err_size, "invalid PPRT_TIMEOUT '%s'", env);
    return PARSE_ERROR;
  }
  env = getenv("PPRT_BACKEND");
  if (env && *env && !parse_backend(env, &o->backend)) {
    snprintf(err, err_size, "unknown PPRT_BACKEND '%s'", env);
    return PARSE_ERROR;
  }
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
      return PARSE_HELP;
    if (strcmp(arg, "--print-params") == 0) {
      o->print_params = true;
      continue;
    }
    if (strcmp(arg, "--check-gradients") == 0) {
      o->check_gradients = true;
      continue;
    }
    if (strncmp(arg, "--", 2) == 0 && parse_value_option(argc, argv, &i, o))
      continue;
    snprintf(err, err_size, "invalid or unknown option '%s'", arg);
    return PARSE_ERROR;
  }
  if (o->profile_path && (o->steps < 1 || o->check_gradients)) {
    snprintf(err, err_size,
             "--profile needs --steps >= 1 and excludes --check-gradients");
    return PARSE_ERROR;
  }
  return PARSE_OK;
}

static void train(pprt_context *ctx) {
  bool root = ctx->transport->world_rank == 0;
  for (int64_t step = 0; step < ctx->opts.steps; ++step) {
    pprt_begin_step(ctx, step);
    pprt_run_step(ctx);
    double loss = pprt_end_step(ctx);
    if (root) {
      printf("step %lld loss %.9g\n", (long long)(step + 1), loss);
      fflush(stdout);
    }
  }
}

/* Every process parses the same argv, so all agree on how to exit. */
static int handle_bad_options(pprt_transport *t, int status, const char *prog,
                              const char *err) {
  if (t->world_rank == 0) {
    if (status == PARSE_HELP) {
      usage(stdout, prog);
    } else {
      fprintf(stderr, "%s: %s\n", prog, err);
      usage(stderr, prog);
    }
  }
  t->ops->destroy(t);
  return status == PARSE_HELP ? 0 : 2;
}

int main(int argc, char **argv) {
  pprt_transport *t = pprt_mpi_transport_create(&argc, &argv);
  pprt_options opts;
  char err[256] = "";
  int status = parse_options(argc, argv, &opts, err, sizeof err);
  if (status != PARSE_OK)
    return handle_bad_options(t, status, argv[0], err);

  pprt_backend *be = pprt_backend_create(opts.backend);
  pprt_set_active_backend(be);
  t = be->ops->wrap_transport(be, t);
  pprt_context *ctx = pprt_context_create(t, be, &opts);
  pp_define_program(ctx);
  int rc = 1;
  if (pprt_context_start(ctx)) {
    if (opts.check_gradients) {
      rc = pprt_check_gradients(ctx);
    } else if (opts.profile_path) {
      rc = pprt_profile_run(ctx);
    } else {
      train(ctx);
      rc = opts.print_params && !pprt_print_params(ctx) ? 1 : 0;
    }
  }
  pprt_context_destroy(ctx);
  t->ops->destroy(t);
  be->ops->destroy(be);
  return rc;
}
