/* main() of every pp training executable: options, then the step loop. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/cuda/kernel_launch.h"
#include "backends/mpi/unpolled.h"
#include "driver/console.h"
#include "driver/documents.h"
#include "driver/driver.h"
#include "driver/input_file.h"
#include "driver/watch.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
      "  --timeout SECONDS  the longest wait for other ranks (default\n"
      "                     $PPRT_TIMEOUT or 60)\n"
      "  --sequential-replicas K\n"
      "                     each process also plays K data-parallel\n"
      "                     replicas in turn per step (default 1)\n"
      "  --corpus FILE      train on one-hot character windows of FILE\n"
      "                     instead of synthetic data\n"
      "  --tokens FILE      train on windows of a token dataset: flat\n"
      "                     uint16 ids (nanoGPT's .bin), or .npy; one-hot\n"
      "                     for f32 data arguments, ids for i32/i64 ones\n"
      "  --token-dtype T    uint16 (default) or uint32: a flat file's ids\n"
      "  --sample-lengths FILE\n"
      "                     with --corpus or --tokens: variable-length\n"
      "                     samples, one line of lengths per step, laid\n"
      "                     back to back in the tokens; each step's sorted\n"
      "                     longest first, right-padded, targets weighted\n"
      "                     1/(the step's tokens): one-hot, or integer ids\n"
      "                     and an f32 [rows, positions] weights target\n"
      "                     (docs/VariableLength.md)\n"
      "  --choose-plans     with --sample-lengths, a program compiled with\n"
      "                     --step-plans runs any index: each step on the\n"
      "                     compiled plan holding its samples with the\n"
      "                     fewest token slots\n"
      "  --plan-lookahead K with --choose-plans: read --sample-lengths as a\n"
      "                     stream (a FIFO a data loader writes), K steps\n"
      "                     ahead of the running one, checking each\n"
      "                     step's plan before it runs\n"
      "  --document-end ID  with --tokens and --choose-plans: each\n"
      "                     document (ending with the id, Megatron's EOD,\n"
      "                     Hugging Face's eos) is a sample, its end id\n"
      "                     the last target; --sample-lengths FILE.npy\n"
      "                     gives the documents' lengths instead\n"
      "  --samples-per-step N\n"
      "                     documents a step, over all replicas (default:\n"
      "                     the first step's of the compiled index)\n"
      "  --long-documents split|refuse\n"
      "                     documents longer than every shape: refused\n"
      "                     (default), or cut into pieces the longest\n"
      "                     shape holds, each a sample\n"
      "  --data A[,B...]    train on arrays indexed by sample, one per data\n"
      "                     argument in argument order (inputs, then\n"
      "                     targets): .npy files or FILE.safetensors:NAME\n"
      "                     tensors of shape [samples, ...] and the\n"
      "                     argument's dtype; each epoch in a shuffled\n"
      "                     order (--seed)\n"
      "  --classes N        synthetic integer data: class ids in [0, N)\n"
      "  --print-params     print per-parameter sums after training\n"
      "  --zero N           0, 1 or 3: ZeRO-1 shards the optimizer state\n"
      "                     over the data-parallel replicas, ZeRO-3 the\n"
      "                     weights too (default: the program's,\n"
      "                     pp-compile --zero; another value contradicts a\n"
      "                     program compiled with --zero 1 or 3, and 3\n"
      "                     needs one)\n"
      "  --print-memory     every rank prints the bytes of weights,\n"
      "                     gradients and optimizer state it holds\n"
      "  --metrics FILE     write each step's loss and wall-clock seconds\n"
      "                     to FILE, one JSON object a line\n"
      "  --init-weights FILE\n"
      "                     start from the weights in safetensors FILE\n"
      "                     instead of the seeded init\n"
      "  --save FILE        write the trained weights to FILE (safetensors)\n"
      "  --first-step N     number the first step N (default 1), with that\n"
      "                     step's data: resumes a run saved after N-1 steps\n"
      "  --checkpoint DIR   write the training state (weights, optimizer\n"
      "                     state, step) to DIR/checkpoint.safetensors after\n"
      "                     the last step, atomically, keeping the one\n"
      "                     before as DIR/checkpoint.prev.safetensors; DIR\n"
      "                     is created\n"
      "  --checkpoint-every N\n"
      "                     also after every step whose number is a multiple\n"
      "                     of N\n"
      "  --resume DIR|FILE  continue from DIR/checkpoint.safetensors (or a\n"
      "                     checkpoint FILE): its weights and optimizer\n"
      "                     state, from the step after\n"
      "                     its last; --steps more steps, bit for bit like an\n"
      "                     unbroken run (excludes --init-weights and\n"
      "                     --first-step)\n"
      "  --profile FILE     after --warmup steps, time --steps steps and\n"
      "                     write per-stage costs to FILE (pp-profile-v1)\n"
      "  --warmup N         unmeasured steps before profiling (default 2)\n"
      "  --profile-clock C  wall (default) or cpu: time stage calls in\n"
      "                     wall-clock or in CPU time\n"
      "  --profile-model M  record M as the profile's model (pp-compile\n"
      "                     --emit=profile passes the model's fingerprint)\n"
      "  --threads N        threads of each rank's host GEMMs, and of its\n"
      "                     stage code's parallel loops where pp-compile\n"
      "                     made them (--parallel-loops) (default\n"
      "                     $OPENBLAS_NUM_THREADS, else $OMP_NUM_THREADS,\n"
      "                     else 1)\n"
      "  --backend NAME     cpu (default: $PPRT_BACKEND, or cuda for programs\n"
      "                     built with --target=cuda, else cpu; its GEMMs\n"
      "                     run on OpenBLAS, or on the CBLAS library at\n"
      "                     $PPRT_BLAS), cuda (one GPU per rank,\n"
      "                     transfers staged through host memory), or\n"
      "                     guarded, whose memory faults\n"
      "                     outside backend ops and stage functions (a\n"
      "                     test of the runtime; guarded-staged also\n"
      "                     stages its transfers)\n"
      "  --check-gradients  compare gradients with finite differences\n"
      "                     (one-stage programs) instead of training\n"
      "  --allow-non-finite train on when a loss is NaN or infinite\n"
      "                     (default: stop, naming step, stage and\n"
      "                     micro-batch)\n"
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

static void default_options(pprt_driver_options *o) {
  o->steps = 10;
  o->run.optimizer = PPRT_SGD;
  o->run.lr = 0.01f;
  o->run.beta1 = 0.9f;
  o->run.beta2 = 0.999f;
  o->run.eps = 1e-8f;
  o->run.sequential_replicas = 1;
  o->seed = 1;
  o->run.timeout_s = 60.0;
  o->corpus_path = NULL;
  o->tokens_path = NULL;
  o->sample_lengths_path = NULL;
  o->choose_plans = false;
  o->plan_lookahead = -1;
  o->document_end = -1;
  o->samples_per_step = 0;
  o->split_long_documents = false;
  o->long_documents_set = false;
  o->token_width = 2;
  o->print_params = false;
  o->print_memory = false;
  o->run.zero = -1; /* the program's */
  o->check_gradients = false;
  o->profile_path = NULL;
  o->profile_model = NULL;
  o->warmup_steps = 2;
  o->profile_cpu_time = false;
  /* A program with GPU kernels (pp-compile --target=cuda) runs on CUDA. */
  o->backend = pprt_kernel_modules_registered() ? "cuda" : "cpu";
  o->run.allow_non_finite = false;
  o->save_path = NULL;
  o->init_weights_path = NULL;
  o->first_step = 1;
  o->first_step_set = false;
  o->checkpoint_dir = NULL;
  o->checkpoint_every = 0;
  o->resume_dir = NULL;
  o->metrics_path = NULL;
  o->threads = 0;
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
  return strcmp(s, "cpu") == 0 || strcmp(s, "guarded") == 0 ||
         strcmp(s, "guarded-staged") == 0 || strcmp(s, "cuda") == 0;
}

static bool parse_threads(const char *s, int64_t *out) {
  return parse_i64(s, out) && *out >= 1 && *out <= 1024;
}

/* What parse_value_option made of argv[*i]. */
typedef enum { OPTION_UNKNOWN, OPTION_OK, OPTION_BAD_VALUE } option_status;

typedef struct option_error {
  const char *name;     /* the option, without "--" */
  const char *value;    /* the value given; NULL if it is missing */
  const char *expected; /* what the value must be */
} option_error;

/* Matches `--NAME=V` or `--NAME V`: sets `*v` and returns true, with `*v`
   NULL when the value is missing. */
static bool match_option(int argc, char **argv, int *i, const char *name,
                         const char **v) {
  const char *arg = argv[*i] + 2;
  size_t len = strlen(name);
  if (strncmp(arg, name, len) != 0 || (arg[len] != '=' && arg[len] != '\0'))
    return false;
  *v = option_value(argc, argv, i, name);
  return true;
}

/* One value option: its name, what its value must be, and how to parse it
   into the options. */
#define VALUE_OPTION(NAME, EXPECTED, PARSED)                                   \
  if (match_option(argc, argv, i, NAME, &v)) {                                 \
    *err = (option_error){NAME, v, EXPECTED};                                  \
    return v && (PARSED) ? OPTION_OK : OPTION_BAD_VALUE;                       \
  }

static bool parse_token_width(const char *v, int *width) {
  *width = strcmp(v, "uint16") == 0 ? 2 : strcmp(v, "uint32") == 0 ? 4 : 0;
  return *width != 0;
}

static bool parse_long_documents(const char *v, pprt_driver_options *o) {
  o->split_long_documents = strcmp(v, "split") == 0;
  o->long_documents_set = true;
  return o->split_long_documents || strcmp(v, "refuse") == 0;
}

/* Applies one value option, or says why its value is invalid. */
static option_status parse_value_option(int argc, char **argv, int *i,
                                        pprt_driver_options *o,
                                        option_error *err) {
  const char *v = NULL;
  int64_t n = 0;
  VALUE_OPTION("backend", "cpu, cuda, guarded or guarded-staged",
               parse_backend(v, &o->backend))
  VALUE_OPTION("steps", "an integer >= 0",
               parse_i64(v, &o->steps) && o->steps >= 0)
  VALUE_OPTION("optimizer", "sgd or adam",
               parse_optimizer(v, &o->run.optimizer))
  VALUE_OPTION("lr", "a finite number within float range",
               parse_f32_in(v, -FLT_MAX, FLT_MAX, &o->run.lr))
  VALUE_OPTION("beta1", "a number in [0, 1)",
               parse_f32_in(v, 0.0, 1.0, &o->run.beta1))
  VALUE_OPTION("beta2", "a number in [0, 1)",
               parse_f32_in(v, 0.0, 1.0, &o->run.beta2))
  VALUE_OPTION("eps", "a positive number within float range",
               parse_f32_in(v, 0.0, FLT_MAX, &o->run.eps) && o->run.eps > 0.0f)
  VALUE_OPTION("sequential-replicas", "an integer in [1, 2147483647]",
               parse_i64(v, &n) && n >= 1 && n <= INT32_MAX &&
                   (o->run.sequential_replicas = (int32_t)n))
  VALUE_OPTION("zero", "0, 1 or 3",
               parse_i64(v, &n) && (n == 0 || n == 1 || n == 3) &&
                   ((o->run.zero = (int32_t)n) || true))
  VALUE_OPTION("corpus", "a file name", *(o->corpus_path = v) != '\0')
  VALUE_OPTION("tokens", "a file name", *(o->tokens_path = v) != '\0')
  VALUE_OPTION("plan-lookahead", "an integer in [0, 1000000]",
               parse_i64(v, &o->plan_lookahead) && o->plan_lookahead >= 0 &&
                   o->plan_lookahead <= 1000000)
  VALUE_OPTION("sample-lengths", "a file name",
               *(o->sample_lengths_path = v) != '\0')
  VALUE_OPTION("document-end", "an integer id >= 0",
               parse_i64(v, &o->document_end) && o->document_end >= 0)
  VALUE_OPTION("samples-per-step", "an integer in [1, 1000000]",
               parse_i64(v, &o->samples_per_step) && o->samples_per_step >= 1 &&
                   o->samples_per_step <= 1000000)
  VALUE_OPTION("long-documents", "split or refuse", parse_long_documents(v, o))
  VALUE_OPTION("data",
               "a comma-separated list of .npy files or "
               "FILE.safetensors:NAME tensors",
               *(o->data_spec = v) != '\0')
  VALUE_OPTION("classes", "an integer >= 1",
               parse_i64(v, &o->num_classes) && o->num_classes >= 1)
  VALUE_OPTION("token-dtype", "uint16 or uint32",
               parse_token_width(v, &o->token_width))
  VALUE_OPTION("profile-clock", "wall or cpu",
               parse_profile_clock(v, &o->profile_cpu_time))
  VALUE_OPTION("profile", "a file name", *(o->profile_path = v) != '\0')
  VALUE_OPTION("profile-model", "letters, digits, '-' and '_'",
               *(o->profile_model = v) != '\0' &&
                   strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                             "WXYZ0123456789-_") == strlen(v))
  VALUE_OPTION("save", "a file name", *(o->save_path = v) != '\0')
  VALUE_OPTION("metrics", "a file name", *(o->metrics_path = v) != '\0')
  VALUE_OPTION("init-weights", "a file name",
               *(o->init_weights_path = v) != '\0')
  VALUE_OPTION("first-step", "an integer >= 1",
               parse_i64(v, &o->first_step) && o->first_step >= 1 &&
                   (o->first_step_set = true))
  VALUE_OPTION("checkpoint-every", "an integer >= 1",
               parse_i64(v, &o->checkpoint_every) && o->checkpoint_every >= 1)
  VALUE_OPTION("checkpoint", "a directory name",
               *(o->checkpoint_dir = v) != '\0')
  VALUE_OPTION("resume", "a directory or checkpoint file name",
               *(o->resume_dir = v) != '\0')
  VALUE_OPTION("warmup", "an integer >= 0",
               parse_i64(v, &o->warmup_steps) && o->warmup_steps >= 0)
  VALUE_OPTION("seed", "an integer >= 0", parse_u64(v, &o->seed))
  VALUE_OPTION("timeout", "a positive number of seconds",
               parse_timeout(v, &o->run.timeout_s))
  VALUE_OPTION("threads", "an integer in [1, 1024]",
               parse_threads(v, &o->threads))
  return OPTION_UNKNOWN;
}
#undef VALUE_OPTION

/* The combinations --checkpoint, --checkpoint-every, --resume and
   --plan-lookahead allow. */
static int check_training_state_options(const pprt_driver_options *o, char *err,
                                        size_t err_size) {
  const char *problem = NULL;
  if (o->checkpoint_every && !o->checkpoint_dir)
    problem = "--checkpoint-every needs --checkpoint DIR";
  else if ((o->checkpoint_dir || o->resume_dir) &&
           (o->profile_path || o->check_gradients))
    problem = "--checkpoint and --resume train and exclude --profile and "
              "--check-gradients";
  else if (o->resume_dir && o->init_weights_path)
    problem = "--resume sets the weights and excludes --init-weights";
  else if (o->resume_dir && o->first_step_set)
    problem = "--resume sets the first step and excludes --first-step";
  else if (o->plan_lookahead >= 0 &&
           (!o->choose_plans ||
            !(o->sample_lengths_path || o->document_end >= 0)))
    problem = "--plan-lookahead streams --sample-lengths to --choose-plans: "
              "give both";
  else if (o->plan_lookahead >= 0 && (o->first_step_set || o->resume_dir ||
                                      o->profile_path || o->check_gradients))
    problem = "--plan-lookahead trains from the stream's first step: it "
              "excludes --first-step, --resume, --profile and "
              "--check-gradients";
  if (!problem)
    problem = pprt_documents_option_problem(o);
  if (!problem)
    return PARSE_OK;
  snprintf(err, err_size, "%s", problem);
  return PARSE_ERROR;
}

static int parse_options(int argc, char **argv, pprt_driver_options *o,
                         char *err, size_t err_size) {
  default_options(o);
  const char *env = getenv("PPRT_TIMEOUT");
  if (env && *env && !parse_timeout(env, &o->run.timeout_s)) {
    snprintf(err, err_size, "invalid PPRT_TIMEOUT '%s'", env);
    return PARSE_ERROR;
  }
  /* OpenBLAS's own order: its variable before OpenMP's. */
  const char *threads_vars[] = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"};
  for (int k = 1; k >= 0; --k) {
    env = getenv(threads_vars[k]);
    if (env && *env && !parse_threads(env, &o->threads)) {
      snprintf(err, err_size,
               "invalid %s '%s': expected an integer in "
               "[1, 1024]",
               threads_vars[k], env);
      return PARSE_ERROR;
    }
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
    if (strcmp(arg, "--print-memory") == 0) {
      o->print_memory = true;
      continue;
    }
    if (strcmp(arg, "--check-gradients") == 0) {
      o->check_gradients = true;
      continue;
    }
    if (strcmp(arg, "--choose-plans") == 0) {
      o->choose_plans = true;
      continue;
    }
    if (strcmp(arg, "--allow-non-finite") == 0) {
      o->run.allow_non_finite = true;
      continue;
    }
    option_error bad = {0};
    option_status status = strncmp(arg, "--", 2) == 0
                               ? parse_value_option(argc, argv, &i, o, &bad)
                               : OPTION_UNKNOWN;
    if (status == OPTION_OK)
      continue;
    if (status == OPTION_UNKNOWN)
      snprintf(err, err_size, "unknown option '%s'", arg);
    else if (!bad.value)
      snprintf(err, err_size, "--%s needs a value: %s", bad.name, bad.expected);
    else
      snprintf(err, err_size, "invalid value '%s' for --%s: expected %s",
               bad.value, bad.name, bad.expected);
    return PARSE_ERROR;
  }
  if (o->profile_path && (o->steps < 1 || o->check_gradients)) {
    snprintf(err, err_size,
             "--profile needs --steps >= 1 and excludes --check-gradients");
    return PARSE_ERROR;
  }
  /* Steps are numbered in int64_t: the last must fit. */
  if (o->first_step - 1 > INT64_MAX - o->steps ||
      (o->profile_path && o->warmup_steps > INT64_MAX - o->steps)) {
    snprintf(err, err_size,
             "%s %lld with --steps %lld would number steps past %lld, "
             "the largest step number",
             o->profile_path ? "--warmup" : "--first-step",
             (long long)(o->profile_path ? o->warmup_steps : o->first_step),
             (long long)o->steps, (long long)INT64_MAX);
    return PARSE_ERROR;
  }
  if (o->save_path && (o->profile_path || o->check_gradients)) {
    snprintf(err, err_size,
             "--save writes trained weights and excludes --profile and "
             "--check-gradients");
    return PARSE_ERROR;
  }
  return check_training_state_options(o, err, err_size);
}

/* Checks the files this run writes (the profile or the weights, the
   metrics and the checkpoint, on rank 0) before it starts, so that a bad
   path fails at once rather than after every step; every rank learns the
   outcome so that all exit alike. */
static bool check_outputs(pprt_transport *t, const pprt_driver_options *o,
                          char *err, size_t err_size) {
  int32_t ok = 1;
  const char *paths[] = {o->profile_path ? o->profile_path : o->save_path,
                         o->metrics_path};
  const char *options[] = {o->profile_path ? "--profile" : "--save",
                           "--metrics"};
  const pprt_output_mode modes[] = {o->profile_path ? PPRT_OUTPUT_IN_PLACE
                                                    : PPRT_OUTPUT_REPLACED,
                                    PPRT_OUTPUT_IN_PLACE};
  char why[4400];
  if (t->world_rank == 0 && !pprt_check_output_names(o, why, sizeof why)) {
    snprintf(err, err_size, "%s", why);
    ok = 0;
  }
  for (int k = 0; k < 2 && ok; ++k)
    if (t->world_rank == 0 && paths[k] &&
        !pprt_check_output(paths[k], modes[k], why, sizeof why)) {
      snprintf(err, err_size, "%s: %s", options[k], why);
      ok = 0;
    }
  if (t->world_rank == 0 && ok && o->checkpoint_dir &&
      !(pprt_check_checkpoint_dir(o->checkpoint_dir, why, sizeof why) &&
        pprt_lock_checkpoint_dir(o->checkpoint_dir, why, sizeof why))) {
    snprintf(err, err_size, "--checkpoint: %s", why);
    ok = 0;
  }
  if (t->world_rank == 0 && ok && o->save_path &&
      !pprt_lock_save(o->save_path, why, sizeof why)) {
    snprintf(err, err_size, "--save: %s", why);
    ok = 0;
  }
  if (!t->ops->allreduce_world_min_i32(t, &ok, 1, o->run.timeout_s))
    pprt_transport_fatal_silent(t, 0, 1, PPRT_EVERYONE, o->run.timeout_s,
                                "every rank to check its outputs");
  return ok != 0;
}

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One --metrics line; JSON has no NaN or infinity: those losses are null.
   False if it could not be written. */
static bool write_metrics(FILE *metrics, int64_t step, double loss,
                          double seconds) {
  int n = isfinite(loss)
              ? fprintf(metrics,
                        "{\"step\": %lld, \"loss\": %.9g, \"seconds\": "
                        "%.9g}\n",
                        (long long)step, loss, seconds)
              : fprintf(metrics,
                        "{\"step\": %lld, \"loss\": null, \"seconds\": "
                        "%.9g}\n",
                        (long long)step, seconds);
  return n >= 0 && fflush(metrics) == 0;
}

/* Reports on rank 0 that --metrics failed (`why`), and closes it:
   training goes on (its weights and checkpoints are still written), and
   the run exits 1. */
static void metrics_failed(pprt_driver *d, FILE **metrics, const char *why) {
  fprintf(stderr,
          "pprt: rank 0: --metrics '%s': %s; training goes on without it\n",
          d->opts.metrics_path, why);
  fflush(stderr);
  if (*metrics)
    fclose(*metrics);
  *metrics = NULL;
  d->write_failed = true;
}

/* Reports once that standard output lost what was printed (`error`: a
   full disk, /dev/full): training goes on, and the run exits 1. */
static void stdout_failed(pprt_driver *d, int32_t rank, int error) {
  if (d->stdout_failed)
    return;
  fprintf(stderr,
          "pprt: rank %d: cannot write to standard output: %s; training goes "
          "on without it\n",
          rank, strerror(error));
  fflush(stderr);
  d->stdout_failed = true;
  d->write_failed = true;
}

/* Whether standard output took what was printed so far (the console's
   writer reports a failure at the next line after it). */
static void check_stdout(pprt_driver *d) {
  if (fflush(stdout) != 0 || ferror(stdout))
    stdout_failed(d, d->ctx->transport->world_rank, errno);
}

/* Runs the steps, writing checkpoints when due and each step's loss and
   time to --metrics; false if a checkpoint failed (on every rank). A
   step's time is rank 0's, from its start to its loss. */
static bool train(pprt_driver *d) {
  pprt_context *ctx = d->ctx;
  bool root = ctx->transport->world_rank == 0;
  FILE *metrics = NULL;
  char why[4400];
  if (root && d->opts.metrics_path &&
      !(metrics = pprt_open_output(d->opts.metrics_path, why, sizeof why)))
    metrics_failed(d, &metrics, why);
  bool ok = true;
  int64_t first = d->opts.first_step - 1, end = first + d->opts.steps;
  pprt_set_run(ctx, first, end);
  for (int64_t step = first; step < end; ++step) {
    if (!pprt_length_index_advance(d, step, end)) {
      ok = false;
      break;
    }
    double start = wall_seconds();
    pprt_begin_step(ctx, step);
    pprt_run_step(ctx);
    double loss = pprt_end_step(ctx);
    double seconds = wall_seconds() - start;
    if (root) {
      printf("step %lld loss %.9g\n", (long long)(step + 1), loss);
      check_stdout(d);
    }
    if (metrics && !write_metrics(metrics, step + 1, loss, seconds)) {
      snprintf(why, sizeof why, "cannot write a step's line: %s",
               strerror(errno));
      metrics_failed(d, &metrics, why);
    }
    if (pprt_checkpoint_due(d, step + 1, step + 1 == end) &&
        !pprt_checkpoint_write(d, step + 1)) {
      ok = false;
      break;
    }
  }
  /* Zero steps: the checkpoint holds the state the run started from. */
  if (first == end && pprt_checkpoint_due(d, end, true))
    ok = pprt_checkpoint_write(d, end) && ok;
  if (metrics && fclose(metrics) != 0) {
    snprintf(why, sizeof why, "cannot write its last lines: %s",
             strerror(errno));
    metrics = NULL;
    metrics_failed(d, &metrics, why);
  }
  return ok;
}

/* Before the first step: checks the program against the world and the
   options, and reads the data and weights it starts from; false (after
   one rank reported why) if the job cannot run. Collective. */
static bool start(pprt_driver *d) {
  pprt_context *ctx = d->ctx;
  if (!pprt_context_start(ctx))
    return false;
  /* A checkpoint holds one version, and the gradient check perturbs the
     newer one while the stage functions read the older. */
  if (pprt_zero_weights_sharded(ctx, -1) && d->opts.check_gradients) {
    if (ctx->transport->world_rank == 0) {
      fprintf(stderr, "pprt: --check-gradients cannot be combined with "
                      "--zero 3 yet: it perturbs whole weights that ZeRO-3 "
                      "releases after each step\n");
      fflush(stderr);
    }
    return false;
  }
  if (ctx->weight_versions == 2 &&
      (d->opts.checkpoint_dir || d->opts.resume_dir ||
       d->opts.check_gradients)) {
    if (ctx->transport->world_rank == 0) {
      fprintf(stderr, "pprt: the program keeps two weight versions "
                      "(pipedream-2bw): --checkpoint, --resume and "
                      "--check-gradients need one\n");
      fflush(stderr);
    }
    return false;
  }
  return pprt_driver_prepare_data(d) && pprt_weights_prepare(d) &&
         pprt_checkpoint_prepare(d);
}

/* Trains, profiles or checks the gradients, as the options say; returns
   the exit status. */
static int run(pprt_driver *d) {
  if (d->opts.check_gradients)
    return pprt_check_gradients(d->ctx);
  if (d->opts.profile_path)
    return pprt_profile_run(d);
  if (!train(d))
    return 1;
  /* The training's memory, before the gather below. */
  if (d->opts.print_memory)
    pprt_print_memory(d->ctx);
  /* ZeRO-3: the reports and --save read the whole weights. */
  pprt_zero_gather_weights(d->ctx, -1);
  if (d->opts.print_params && !pprt_print_params(d->ctx))
    return 1;
  if (d->opts.save_path && !pprt_weights_save(d))
    return 1;
  check_stdout(d);
  return d->write_failed ? 1 : 0;
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

/* The backend, or NULL (after a line naming the rank and the reason, and
   with the transport shut down) when any rank cannot create it: all ranks
   agree, so all exit. */
static pprt_backend *create_backend(pprt_transport *t, const char *name,
                                    double timeout_s) {
  char err[256] = "";
  pprt_backend *be = NULL;
  if (pprt_kernel_modules_registered() && strcmp(name, "cuda") != 0)
    snprintf(err, sizeof err,
             "this program's stage code runs on GPUs (pp-compile "
             "--target=cuda); run it with --backend cuda");
  else
    be = pprt_backend_create(name, t, err, sizeof err);
  int32_t ok = be != NULL;
  if (!t->ops->allreduce_world_min_i32(t, &ok, 1, timeout_s))
    pprt_transport_fatal_silent(t, 0, 1, PPRT_EVERYONE, timeout_s,
                                "every rank to start its backend");
  if (ok)
    return be;
  if (be)
    be->ops->destroy(be);
  else
    fprintf(stderr, "pprt: rank %d: --backend %s: %s\n", t->world_rank, name,
            err);
  fflush(stderr);
  t->ops->destroy(t);
  return NULL;
}

/* `t` wrapped in a trace when PPRT_TRANSPORT_TRACE names a prefix; a
   trace that cannot be written ends the job with one line. */
static pprt_transport *maybe_trace(pprt_transport *t) {
  const char *prefix = getenv("PPRT_TRANSPORT_TRACE");
  if (!prefix || !*prefix)
    return t;
  char err[256];
  pprt_transport *traced =
      pprt_trace_transport_create(t, prefix, err, sizeof err);
  if (traced)
    return traced;
  fprintf(stderr, "pprt: rank %d: PPRT_TRANSPORT_TRACE: %s\n", t->world_rank,
          err);
  fflush(stderr);
  t->ops->abort(t, 1);
  return NULL;
}

int main(int argc, char **argv) {
  /* MPI_Init waits for every rank without a timeout: bound it by
     --timeout too, read before it (bad options are reported after). The
     ranks name a stopped rank within 1.5 timeouts; its watcher ends it
     later, when no rank waits for it any more. */
  /* A write past the file-size limit (ulimit -f) fails with EFBIG, as on
     a full disk, so that the writer reports it, removes its temporary and
     tries the rescue places, instead of the kernel ending the rank. */
  signal(SIGXFSZ, SIG_IGN);
  pprt_driver_options opts;
  char err[9000] = "";
  double timeout_s =
      parse_options(argc, argv, &opts, err, sizeof err) == PARSE_OK
          ? opts.run.timeout_s
          : 60.0;
  pprt_watch_start(2 * timeout_s + 2.0);
  pprt_console_start();
  pprt_transport *t = pprt_mpi_transport_create_within(&argc, &argv, timeout_s);
  pprt_watch_set_rank(t->world_rank);
  int status = parse_options(argc, argv, &opts, err, sizeof err);
  if (status != PARSE_OK)
    return handle_bad_options(t, status, argv[0], err);
  if (!check_outputs(t, &opts, err, sizeof err)) {
    if (t->world_rank == 0)
      fprintf(stderr, "pprt: rank 0: %s\n", err);
    t->ops->destroy(t);
    return 2;
  }

  pprt_backend *be = create_backend(t, opts.backend, opts.run.timeout_s);
  if (!be)
    return 1;
  pprt_set_active_backend(be);
  pprt_set_compute_threads(opts.threads ? (int)opts.threads : 1);
  t = maybe_trace(be->ops->wrap_transport(be, t));
  pprt_driver d = {.opts = opts, .checkpoint_step = -1};
  opts.run.seed = opts.seed;
  d.ctx = pprt_context_create(t, be, &opts.run);
  pprt_driver_install_data_source(&d);
  pp_define_program(d.ctx);
  int rc = start(&d) ? run(&d) : 1;
  /* MPI_Finalize waits for every rank without a timeout: meet within one
     first, so that a rank lost after the last step is named. Once every
     rank ended well, only the launcher can hold MPI_Finalize. */
  int32_t ended_well = rc == 0;
  pprt_min_everywhere(d.ctx, &ended_well, 1, "the end of the run");
  if (ended_well)
    pprt_unpolled_trust_launcher();
  pprt_driver_free_data(&d);
  pprt_context_destroy(d.ctx);
  int32_t rank = t->world_rank;
  t->ops->destroy(t);
  be->ops->destroy(be);
  /* What is still queued is written now that no rank waits for this one
     (a paused reader of standard output keeps the process until then). */
  if (!pprt_console_flush()) {
    stdout_failed(&d, rank, errno);
    rc = rc ? rc : 1;
  }
  return rc;
}
