/* Per-shape counts and times of a backend's GEMMs: the CPU backend's
   (PPRT_GEMM_STATS, bench/step_breakdown.py) and the CUDA backend's
   (PPRT_CUDA_GEMM_STATS, which scripts/gpu-check.sh replays against bare
   cuBLAS). */
#ifndef PPRT_GEMM_STATS_H
#define PPRT_GEMM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pprt_gemm_shape {
  int32_t ab_type, c_type, trans_a, trans_b;
  int64_t batch, m, n, k;
} pprt_gemm_shape;

typedef struct pprt_gemm_stat {
  pprt_gemm_shape shape;
  int64_t calls;
  double seconds;
} pprt_gemm_stat;

typedef struct pprt_gemm_stats {
  pprt_gemm_stat *v;
  size_t n, cap;
} pprt_gemm_stats;

/* Adds one call of `shape` that took `seconds`; false when out of memory. */
bool pprt_gemm_stats_add(pprt_gemm_stats *s, const pprt_gemm_shape *shape,
                         double seconds);
/* Writes one line per shape: "gemm ab_type c_type trans_a trans_b batch m n
   k calls seconds"; false if the file cannot be written. */
bool pprt_gemm_stats_write(const pprt_gemm_stats *s, const char *path);
void pprt_gemm_stats_free(pprt_gemm_stats *s);

#endif /* PPRT_GEMM_STATS_H */
