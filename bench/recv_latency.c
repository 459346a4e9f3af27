/* Ping-pong latency of raw MPI against pprt_send/pprt_recv, in one run. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "pprt/pprt.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A program for libpprt's own main(), run on 2 ranks with --steps 1: its
 * step measures, for every message size, the median half round trip of a
 * raw MPI_Send/MPI_Recv ping-pong on MPI_COMM_WORLD and of a pprt_send /
 * pprt_recv ping-pong on a micro-batch buffer of that size, which goes
 * through the runtime's real path (slot lookup, pending sends, the MPI
 * transport's polling receive). The two alternate in rounds so that both
 * see the same machine load. Rank 0 prints one table row per size.
 *
 * Then a long wait, a pipeline bubble's: rank 1 sleeps before it sends, and
 * rank 0 prints the wall and CPU time of its pprt_recv ("wait: ..."). A
 * waiting rank must leave the core to busy ones, so its CPU time stays a
 * small part of the wall time.
 *
 * Env: PPRT_LATENCY_ITERS round trips per round (default 200),
 * PPRT_LATENCY_ROUNDS rounds (default 10), PPRT_LATENCY_WAIT_MS the wait
 * (default 300).
 */

static const int64_t kSizes[] = {1, 256, 16384, 262144}; /* f32 elements */
enum { NUM_SIZES = sizeof kSizes / sizeof kSizes[0] };

void pp_define_program(pprt_context *ctx) {
  pprt_set_program(ctx, PPRT_ABI_VERSION, 2, 2, 1);
  pprt_set_data_parallel(ctx, 1);
  for (int32_t i = 0; i < NUM_SIZES; ++i)
    pprt_define_buffer(ctx, i, PPRT_MICROBATCH, 0, 0, PPRT_F32, 1, &kSizes[i]);
}

static double clock_us(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

static double now_us(void) { return clock_us(CLOCK_MONOTONIC); }

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : fallback;
}

/* Half of one round trip of `n` floats on MPI_COMM_WORLD, averaged. */
static double raw_round(int32_t rank, float *buf, int64_t n, long iters) {
  int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = now_us();
  for (long i = 0; i < iters; ++i) {
    if (rank == 0) {
      MPI_Send(buf, (int)n, MPI_FLOAT, peer, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)n, MPI_FLOAT, peer, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, (int)n, MPI_FLOAT, peer, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)n, MPI_FLOAT, peer, 7, MPI_COMM_WORLD);
    }
  }
  return (now_us() - start) / (2.0 * (double)iters);
}

/* The same through pprt: buffer `id` travels between the pipeline ranks. */
static double pprt_round(pprt_context *ctx, int32_t rank, int32_t id,
                         long iters) {
  int32_t peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = now_us();
  for (long i = 0; i < iters; ++i) {
    if (rank == 0) {
      pprt_send(ctx, id, 0, peer, 1, PPRT_ACTIVATION);
      pprt_recv(ctx, id, 0, peer, 0, PPRT_GRADIENT);
    } else {
      pprt_recv(ctx, id, 0, peer, 1, PPRT_ACTIVATION);
      pprt_send(ctx, id, 0, peer, 0, PPRT_GRADIENT);
    }
  }
  return (now_us() - start) / (2.0 * (double)iters);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void print_size(int64_t numel, double raw, double via_pprt) {
  int64_t bytes = numel * (int64_t)sizeof(float);
  char label[32];
  if (bytes >= 1 << 20)
    snprintf(label, sizeof label, "%lld MiB", (long long)(bytes >> 20));
  else if (bytes >= 1 << 10)
    snprintf(label, sizeof label, "%lld KiB", (long long)(bytes >> 10));
  else
    snprintf(label, sizeof label, "%lld B", (long long)bytes);
  printf("| %8s | %10.2f | %10.2f | %6.2f |\n", label, raw, via_pprt,
         via_pprt / raw);
}

/* Rank 0 receives buffer `id` that rank 1 sends after sleeping `wait_ms`;
   rank 0 prints the receive's wall and CPU (the process's) milliseconds. */
static void long_wait(pprt_context *ctx, int32_t rank, int32_t id,
                      long wait_ms) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    pprt_send(ctx, id, 0, 0, 0, PPRT_GRADIENT);
    return;
  }
  double wall = now_us(), cpu = clock_us(CLOCK_PROCESS_CPUTIME_ID);
  pprt_recv(ctx, id, 0, 1, 0, PPRT_GRADIENT);
  printf("wait: %.1f ms wall, %.1f ms CPU\n", 1e-3 * (now_us() - wall),
         1e-3 * (clock_us(CLOCK_PROCESS_CPUTIME_ID) - cpu));
}

void pp_run_step(pprt_context *ctx, int32_t rank) {
  long iters = env_long("PPRT_LATENCY_ITERS", 200);
  long rounds = env_long("PPRT_LATENCY_ROUNDS", 10);
  long wait_ms = env_long("PPRT_LATENCY_WAIT_MS", 300);
  if (iters < 1 || rounds < 1 || wait_ms < 1) {
    fprintf(stderr, "recv_latency: iterations, rounds and wait must be >= 1\n");
    exit(2);
  }
  double *raw = calloc((size_t)rounds, sizeof *raw);
  double *via = calloc((size_t)rounds, sizeof *via);
  float *buf = calloc((size_t)kSizes[NUM_SIZES - 1], sizeof *buf);
  if (!raw || !via || !buf)
    exit(2);
  if (rank == 0)
    printf("| size     | raw MPI us | pprt us    | ratio  |\n"
           "|----------|------------|------------|--------|\n");
  for (int32_t i = 0; i < NUM_SIZES; ++i) {
    /* One unmeasured round of each warms the connections and caches. */
    raw_round(rank, buf, kSizes[i], iters);
    pprt_round(ctx, rank, i, iters);
    for (long r = 0; r < rounds; ++r) {
      raw[r] = raw_round(rank, buf, kSizes[i], iters);
      via[r] = pprt_round(ctx, rank, i, iters);
    }
    if (rank == 0)
      print_size(kSizes[i], median(raw, rounds), median(via, rounds));
  }
  long_wait(ctx, rank, 0, wait_ms);
  fflush(stdout);
  free(buf);
  free(via);
  free(raw);
}
