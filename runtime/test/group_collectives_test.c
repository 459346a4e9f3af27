/* Two groups of the MPI transport at once, split as a 2-way tensor-parallel
   layout of 4 ranks splits them: tensor group = ranks {2g, 2g + 1} (key
   rank % 2), data-parallel group = ranks {k, k + 2} (key rank / 2). Sums,
   maxima and minima over one group must not mix in the other's values;
   the values are small integers, so every sum is exact. */
#include "backends/transport.h"

#include <stdio.h>

enum { COUNT = 3 };

int main(int argc, char **argv) {
  pprt_transport *t = pprt_mpi_transport_create(&argc, &argv);
  int me = t->world_rank, bad = t->world_size != 4;
  /* The order the runtime splits in: data-parallel, then tensor. */
  int32_t dp = t->ops->split_groups(t, me % 2, me / 2);
  int32_t tp = t->ops->split_groups(t, me / 2, me % 2);
  bad |= dp != 0 || tp != 1;
  float sum[COUNT], dsum[COUNT], all[2 * COUNT];
  for (int i = 0; i < COUNT; ++i) {
    sum[i] = dsum[i] = (float)(10 * me + i);
    all[(me % 2) * COUNT + i] = (float)(100 * me + i);
  }
  float hi[COUNT], lo[COUNT];
  for (int i = 0; i < COUNT; ++i)
    hi[i] = lo[i] = (float)((me % 2 ? 1 : -1) * (10 * me + i));
  bad |= !t->ops->wait_for(
      t, t->ops->iallreduce_group_f32(t, tp, sum, COUNT, PPRT_REDUCE_SUM),
      60.0);
  bad |= !t->ops->wait_for(
      t, t->ops->iallreduce_group_f32(t, tp, hi, COUNT, PPRT_REDUCE_MAX), 60.0);
  bad |= !t->ops->wait_for(
      t, t->ops->iallreduce_group_f32(t, tp, lo, COUNT, PPRT_REDUCE_MIN), 60.0);
  bad |= !t->ops->wait_for(
      t, t->ops->iallgather_group_f32(t, tp, all, COUNT, 2), 60.0);
  bad |= !t->ops->wait_for(
      t, t->ops->iallreduce_group_f32(t, dp, dsum, COUNT, PPRT_REDUCE_SUM),
      60.0);
  int first = me - me % 2; /* the tensor group's first rank */
  for (int i = 0; i < COUNT; ++i) {
    bad |= sum[i] != (float)(10 * (2 * first + 1) + 2 * i);
    bad |= dsum[i] != (float)(10 * (2 * (me % 2) + 2) + 2 * i);
    /* The group's odd rank holds its largest value, its even one (negated)
       its smallest. */
    bad |= hi[i] != (float)(10 * (first + 1) + i);
    bad |= lo[i] != (float)(-(10 * first + i));
    for (int k = 0; k < 2; ++k)
      bad |= all[k * COUNT + i] != (float)(100 * (first + k) + i);
  }
  printf("rank %d: %s\n", me, bad ? "FAIL" : "ok");
  t->ops->destroy(t);
  return bad;
}
