/* Per-shape GEMM statistics of the backends (gemm_stats.h). */
#include "backends/gemm_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_shape(const pprt_gemm_shape *a, const pprt_gemm_shape *b) {
  return a->ab_type == b->ab_type && a->c_type == b->c_type &&
         a->trans_a == b->trans_a && a->trans_b == b->trans_b &&
         a->batch == b->batch && a->m == b->m && a->n == b->n && a->k == b->k;
}

bool pprt_gemm_stats_add(pprt_gemm_stats *s, const pprt_gemm_shape *shape,
                         double seconds) {
  for (size_t i = 0; i < s->n; ++i)
    if (same_shape(&s->v[i].shape, shape)) {
      ++s->v[i].calls;
      s->v[i].seconds += seconds;
      return true;
    }
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    pprt_gemm_stat *grown = realloc(s->v, cap * sizeof *grown);
    if (!grown)
      return false;
    s->v = grown;
    s->cap = cap;
  }
  s->v[s->n++] = (pprt_gemm_stat){*shape, 1, seconds};
  return true;
}

bool pprt_gemm_stats_write(const pprt_gemm_stats *s, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f)
    return false;
  for (size_t i = 0; i < s->n; ++i) {
    const pprt_gemm_shape *g = &s->v[i].shape;
    fprintf(f, "gemm %d %d %d %d %lld %lld %lld %lld %lld %.9g\n", g->ab_type,
            g->c_type, g->trans_a, g->trans_b, (long long)g->batch,
            (long long)g->m, (long long)g->n, (long long)g->k,
            (long long)s->v[i].calls, s->v[i].seconds);
  }
  return fclose(f) == 0;
}

void pprt_gemm_stats_free(pprt_gemm_stats *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}
