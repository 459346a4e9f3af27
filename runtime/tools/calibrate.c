/* pp-calibrate: measures what this machine's devices do and writes a pp
   device file (docs/CostModel.md) the planners and pp-simulate read in
   place of data-sheet numbers:

     mpirun -np 2 pp-calibrate -o machine.json

   Each process measures single-precision GEMMs of square classes through
   the BLAS stage code calls (one thread, as pp programs run), the memory
   bandwidth of a large copy, and with two processes or more the one-way
   latency and bandwidth of point-to-point messages between ranks 0 and 1
   and an all-reduce over every process. World rank 0 writes the file:
   `peak_flops` is the fastest GEMM class, `gemm_flops` every class by its
   smallest dimension, and `meta` the measurements behind each number. */
#define _POSIX_C_SOURCE 200809L

#include <cblas.h>
#include <mpi.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int n);

/* GEMM classes: square products of these sizes. */
static const int kGemmSizes[] = {16, 32, 64, 128, 256, 512, 1024};
enum { NUM_GEMM = sizeof kGemmSizes / sizeof kGemmSizes[0] };
/* Message sizes of the point-to-point probe and the all-reduce. */
static const int64_t kMessageBytes[] = {8, 4096, 65536, 1 << 20, 16 << 20};
enum { NUM_MESSAGES = sizeof kMessageBytes / sizeof kMessageBytes[0] };

typedef struct options {
  const char *output;
  const char *name;
  bool quick; /* smaller sizes and fewer repetitions, for tests */
} options;

typedef struct measurements {
  double gemm[NUM_GEMM];           /* FLOP/s */
  double copy_bandwidth;           /* bytes read and written per second */
  double one_way[NUM_MESSAGES];    /* seconds */
  double all_reduce[NUM_MESSAGES]; /* seconds */
  double link_latency, link_bandwidth;
  double memory_capacity; /* bytes per process */
  int processes;
} measurements;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "pp-calibrate: out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

/* Repetitions that take about `budget` seconds when one takes `once`. */
static int repetitions(double once, double budget, int least, int most) {
  int n = once > 0 ? (int)(budget / once) : most;
  return n < least ? least : n > most ? most : n;
}

/* The median rate of n x n x n products, in FLOP/s. */
static double measure_gemm(int n, double budget) {
  size_t elements = (size_t)n * (size_t)n;
  float *a = xmalloc(elements * sizeof *a), *b = xmalloc(elements * sizeof *b),
        *c = xmalloc(elements * sizeof *c);
  for (size_t i = 0; i < elements; ++i) {
    a[i] = (float)((i * 7) % 13) * 0.01f;
    b[i] = (float)((i * 5) % 11) * 0.01f;
    c[i] = 0.0f;
  }
  double flops = 2.0 * n * (double)n * n;
  double start = now_s();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b,
              n, 0.0f, c, n); /* warm-up */
  int reps = repetitions(now_s() - start, budget, 3, 200);
  double *times = xmalloc((size_t)reps * sizeof *times);
  for (int r = 0; r < reps; ++r) {
    start = now_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n,
                b, n, 0.0f, c, n);
    times[r] = now_s() - start;
  }
  double rate = flops / median(times, reps);
  free(times);
  free(a);
  free(b);
  free(c);
  return rate;
}

/* Bytes read and written per second by a copy of `bytes`. */
static double measure_copy(size_t bytes, int reps) {
  char *from = xmalloc(bytes), *to = xmalloc(bytes);
  memset(from, 1, bytes);
  memset(to, 0, bytes);
  double *times = xmalloc((size_t)reps * sizeof *times);
  for (int r = 0; r < reps; ++r) {
    double start = now_s();
    memcpy(to, from, bytes);
    times[r] = now_s() - start;
    from[r % bytes] = (char)r; /* keeps the copies from being merged */
  }
  double rate = 2.0 * (double)bytes / median(times, reps);
  free(times);
  free(from);
  free(to);
  return rate;
}

/* Half the median round trip of `bytes` between world ranks 0 and 1. */
static double measure_one_way(int64_t bytes, int reps, int rank) {
  char *buf = xmalloc((size_t)bytes);
  memset(buf, 0, (size_t)bytes);
  double *times = xmalloc((size_t)reps * sizeof *times);
  for (int r = -2; r < reps; ++r) { /* two unmeasured round trips */
    double start = now_s();
    if (rank == 0) {
      MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
    if (r >= 0)
      times[r] = 0.5 * (now_s() - start);
  }
  double t = median(times, reps);
  free(times);
  free(buf);
  return t;
}

/* The median time of an all-reduce of `bytes` of floats over the world. */
static double measure_all_reduce(int64_t bytes, int reps) {
  int count = (int)(bytes / (int64_t)sizeof(float));
  float *in = xmalloc((size_t)count * sizeof *in),
        *out = xmalloc((size_t)count * sizeof *out);
  for (int i = 0; i < count; ++i)
    in[i] = 1.0f;
  double *times = xmalloc((size_t)reps * sizeof *times);
  for (int r = -1; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now_s();
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double elapsed = now_s() - start;
    /* The slowest process's time: the collective ends when it does. */
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    if (r >= 0)
      times[r] = elapsed;
  }
  double t = median(times, reps);
  free(times);
  free(in);
  free(out);
  return t;
}

/* Physical memory shared by the processes on this host: an even share. */
static double memory_share(int processes) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  double total = pages > 0 && size > 0 ? (double)pages * (double)size : 0.0;
  return total / (processes > 0 ? processes : 1);
}

static void measure(const options *o, int rank, measurements *m) {
  openblas_set_num_threads(1);
  double budget = o->quick ? 0.01 : 0.3;
  int largest = o->quick ? 4 : NUM_GEMM; /* quick: up to 128 */
  for (int i = 0; i < NUM_GEMM; ++i)
    m->gemm[i] = i < largest ? measure_gemm(kGemmSizes[i], budget) : 0.0;
  m->copy_bandwidth =
      measure_copy(o->quick ? (8u << 20) : (256u << 20), o->quick ? 3 : 9);
  m->memory_capacity = memory_share(m->processes);
  if (m->processes < 2)
    return;
  int reps = o->quick ? 5 : 50;
  int messages = o->quick ? 3 : NUM_MESSAGES;
  for (int i = 0; i < messages; ++i) {
    m->one_way[i] = measure_one_way(kMessageBytes[i], reps, rank);
    m->all_reduce[i] = measure_all_reduce(kMessageBytes[i], reps);
  }
  /* Latency from the smallest message, bandwidth from the largest one's
     time past it. */
  m->link_latency = m->one_way[0];
  double beyond = m->one_way[messages - 1] - m->one_way[0];
  m->link_bandwidth =
      beyond > 0
          ? (double)(kMessageBytes[messages - 1] - 8) / beyond
          : (double)kMessageBytes[messages - 1] / m->one_way[messages - 1];
}

/* The least of every process's rates: the planner plans for the slowest. */
static void agree(measurements *m) {
  MPI_Allreduce(MPI_IN_PLACE, m->gemm, NUM_GEMM, MPI_DOUBLE, MPI_MIN,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &m->copy_bandwidth, 1, MPI_DOUBLE, MPI_MIN,
                MPI_COMM_WORLD);
  MPI_Bcast(m->one_way, NUM_MESSAGES, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&m->link_latency, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&m->link_bandwidth, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void write_gemm(FILE *f, const measurements *m) {
  fprintf(f, "  \"gemm_flops\": [");
  bool first = true;
  for (int i = 0; i < NUM_GEMM; ++i) {
    if (m->gemm[i] <= 0)
      continue;
    fprintf(f, "%s{\"min_dim\": %d, \"flops\": %.6g}", first ? "" : ", ",
            kGemmSizes[i], m->gemm[i]);
    first = false;
  }
  fprintf(f, "],\n");
}

static void write_messages(FILE *f, const char *key, const double *times) {
  fprintf(f, ", \"%s\": [", key);
  bool first = true;
  for (int i = 0; i < NUM_MESSAGES; ++i) {
    if (times[i] <= 0)
      continue;
    fprintf(f, "%s{\"bytes\": %lld, \"seconds\": %.6g}", first ? "" : ", ",
            (long long)kMessageBytes[i], times[i]);
    first = false;
  }
  fprintf(f, "]");
}

static bool write_device(FILE *f, const options *o, const measurements *m) {
  double peak = 0.0;
  for (int i = 0; i < NUM_GEMM; ++i)
    peak = m->gemm[i] > peak ? m->gemm[i] : peak;
  bool linked = m->processes > 1;
  fprintf(f, "{\n");
  if (!linked)
    fprintf(f, "  \"base\": \"cpu\",\n");
  fprintf(f, "  \"name\": \"%s\",\n  \"peak_flops\": %.6g,\n", o->name, peak);
  write_gemm(f, m);
  fprintf(f, "  \"memory_bandwidth\": %.6g,\n", m->copy_bandwidth);
  if (linked)
    fprintf(f, "  \"link_bandwidth\": %.6g,\n  \"link_latency\": %.6g,\n",
            m->link_bandwidth, m->link_latency);
  fprintf(f, "  \"memory_capacity\": %.6g,\n", m->memory_capacity);
  fprintf(f,
          "  \"meta\": {\"tool\": \"pp-calibrate\", \"processes\": %d, "
          "\"blas_threads\": 1, \"links\": \"%s\"",
          m->processes,
          linked ? "measured between world ranks 0 and 1"
                 : "not measured (one process): the cpu device's");
  if (linked) {
    write_messages(f, "one_way", m->one_way);
    write_messages(f, "all_reduce", m->all_reduce);
  }
  fprintf(f, "}\n}\n");
  return !ferror(f);
}

/* Whether this process reports: world rank 0. */
static bool reporter = true;

static int usage(const char *why) {
  if (!reporter)
    return 2;
  fprintf(stderr,
          "pp-calibrate: %s\nusage: [mpirun -np N] pp-calibrate [-o FILE] "
          "[--name NAME] [--quick]\n",
          why);
  return 2;
}

static int parse_options(int argc, char **argv, options *o) {
  *o = (options){.output = "-", .name = "calibrated", .quick = false};
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--quick"))
      o->quick = true;
    else if ((!strcmp(arg, "-o") || !strcmp(arg, "--name")) && i + 1 < argc)
      *(arg[1] == 'o' ? &o->output : &o->name) = argv[++i];
    else if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
      return usage("measures this machine and writes a pp device file");
    else {
      char why[256];
      snprintf(why, sizeof why, "unknown or incomplete option '%s'", arg);
      return usage(why);
    }
  }
  if (strpbrk(o->name, "\"\\"))
    return usage("--name must not hold quotes or backslashes");
  return 0;
}

static int write_output(const options *o, const measurements *m) {
  bool stdout_ = !strcmp(o->output, "-");
  FILE *f = stdout_ ? stdout : fopen(o->output, "w");
  if (!f) {
    fprintf(stderr, "pp-calibrate: cannot write '%s': %s\n", o->output,
            strerror(errno));
    return 1;
  }
  bool ok = write_device(f, o, m);
  if (!stdout_ && fclose(f) != 0)
    ok = false;
  if (!ok) {
    fprintf(stderr, "pp-calibrate: cannot write '%s': %s\n", o->output,
            strerror(errno));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  reporter = rank == 0;
  options o;
  int rc = parse_options(argc, argv, &o);
  if (rc == 0) {
    measurements m = {.processes = size};
    measure(&o, rank, &m);
    agree(&m);
    if (rank == 0)
      rc = write_output(&o, &m);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
