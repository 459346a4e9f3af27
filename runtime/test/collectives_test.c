/* The MPI transport's reduce-scatter and in-place all-gather over the
   replicas' group, on 3 ranks (so blocks are not halves): rank r holds
   block k = {100 r + 10 k, 100 r + 10 k + 1}; after the reduce-scatter
   rank r holds the sums of block r, and the all-gather of every rank's
   sum gives each rank all of them. The values are small integers, so the
   sums are exact in any order. */
#include "backends/transport.h"

#include <stdio.h>

enum { BLOCK = 2, MAX_RANKS = 8 };

int main(int argc, char **argv) {
  pprt_transport *t = pprt_mpi_transport_create(&argc, &argv);
  int n = t->world_size, me = t->world_rank, bad = n > MAX_RANKS;
  if (bad)
    n = MAX_RANKS;
  float send[MAX_RANKS * BLOCK], mine[BLOCK], all[MAX_RANKS * BLOCK] = {0};
  for (int k = 0; k < n; ++k)
    for (int i = 0; i < BLOCK; ++i)
      send[k * BLOCK + i] = (float)(100 * me + 10 * k + i);
  int32_t g = t->ops->split_groups(t, 0, me);
  int32_t h = t->ops->ireduce_scatter_group_f32(t, g, send, mine, BLOCK, n);
  bad |= !t->ops->wait_for(t, h, 60.0);
  /* sum over r of 100 r + 10 me + i */
  for (int i = 0; i < BLOCK; ++i)
    bad |= mine[i] != (float)(100 * n * (n - 1) / 2 + n * (10 * me + i));
  for (int i = 0; i < BLOCK; ++i)
    all[me * BLOCK + i] = mine[i];
  h = t->ops->iallgather_group_f32(t, g, all, BLOCK, n);
  bad |= !t->ops->wait_for(t, h, 60.0);
  for (int k = 0; k < n; ++k)
    for (int i = 0; i < BLOCK; ++i)
      bad |= all[k * BLOCK + i] !=
             (float)(100 * n * (n - 1) / 2 + n * (10 * k + i));
  printf("rank %d: %s\n", me, bad ? "FAIL" : "ok");
  t->ops->destroy(t);
  return bad;
}
