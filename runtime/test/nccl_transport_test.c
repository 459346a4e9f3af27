/* The NCCL transport over 2+ ranks: without a GPU every rank gets NULL
   and a reason (no crash, no hang); with one, a device buffer goes from
   rank 0 to rank 1, a group all-reduce sums over all ranks, and a
   reduce-scatter and an all-gather (ZeRO-1) reassemble the sums. */
#include "backends/nccl/nccl_transport.h"
#include "backends/transport.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

static int no_gpu(pprt_transport *t) {
  char err[256] = "";
  pprt_transport *n = pprt_nccl_transport_create(t, NULL, err, sizeof err);
  int rc = 0;
  if (n || !err[0]) {
    fprintf(stderr, "rank %d: no GPU, yet NCCL started (%s)\n", t->world_rank,
            err);
    rc = 1;
  } else {
    printf("rank %d: no GPU: %s\n", t->world_rank, err);
  }
  t->ops->destroy(t);
  return rc;
}

enum { MAX_RANKS = 8 };

/* ZeRO-1's collectives: rank r reduce-scatters blocks {r + 1, k} (block
   k), receiving {ranks (ranks + 1) / 2, ranks r}; then the in-place
   all-gather of those gives every rank all blocks. Nonzero if wrong. */
static int shard_collectives(pprt_transport *n, cudaStream_t s, int32_t g) {
  int ranks = n->world_size, me = n->world_rank;
  if (ranks > MAX_RANKS)
    return 1;
  float host[2 * MAX_RANKS], got[2 * MAX_RANKS];
  for (int k = 0; k < ranks; ++k) {
    host[2 * k] = (float)(me + 1);
    host[2 * k + 1] = (float)k;
  }
  size_t bytes = (size_t)(2 * ranks) * sizeof(float);
  float *send, *all;
  cudaMalloc((void **)&send, bytes);
  cudaMalloc((void **)&all, bytes);
  cudaMemcpy(send, host, bytes, cudaMemcpyHostToDevice);
  cudaMemset(all, 0, bytes);
  int bad = !n->ops->wait_for(
      n, n->ops->ireduce_scatter_group_f32(n, g, send, all + 2 * me, 2, ranks),
      60.0);
  bad |= !n->ops->wait_for(n, n->ops->iallgather_group_f32(n, g, all, 2, ranks),
                           60.0);
  cudaStreamSynchronize(s);
  cudaMemcpy(got, all, bytes, cudaMemcpyDeviceToHost);
  for (int k = 0; k < ranks; ++k)
    bad |= got[2 * k] != (float)(ranks * (ranks + 1) / 2) ||
           got[2 * k + 1] != (float)(ranks * k);
  cudaFree(send);
  cudaFree(all);
  return bad;
}

/* rank 0 sends {1, 2, 3, 4} to rank 1; then every rank all-reduces
   {rank + 1} x 4. */
static int with_gpu(pprt_transport *t, int count) {
  cudaSetDevice(t->local_rank % count);
  cudaStream_t s;
  cudaStreamCreate(&s);
  char err[256] = "";
  pprt_transport *n = pprt_nccl_transport_create(t, s, err, sizeof err);
  if (!n) {
    fprintf(stderr, "rank %d: %s\n", t->world_rank, err);
    return 1;
  }
  float host[4] = {1, 2, 3, 4}, got[4];
  float *dev;
  cudaMalloc((void **)&dev, sizeof host);
  cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
  int bad = 0;
  if (n->world_rank == 0) {
    bad |= !n->ops->wait_for(n, n->ops->isend(n, dev, sizeof host, 1, 7), 60.0);
  } else if (n->world_rank == 1) {
    cudaMemset(dev, 0, sizeof host);
    bad |= n->ops->recv(n, dev, sizeof host, 0, 7, 60.0) != PPRT_RECV_OK;
    cudaMemcpy(got, dev, sizeof got, cudaMemcpyDeviceToHost);
    bad |= memcmp(got, host, sizeof got) != 0;
  }
  bad |= !n->ops->wait_all(n, 60.0);
  int32_t g = n->ops->split_groups(n, 0, n->world_rank);
  for (int i = 0; i < 4; ++i)
    host[i] = (float)(n->world_rank + 1);
  cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
  bad |= !n->ops->wait_for(
      n, n->ops->iallreduce_group_f32(n, g, dev, 4, PPRT_REDUCE_SUM), 60.0);
  cudaStreamSynchronize(s);
  cudaMemcpy(got, dev, sizeof got, cudaMemcpyDeviceToHost);
  float want = (float)(n->world_size * (n->world_size + 1) / 2);
  for (int i = 0; i < 4; ++i)
    bad |= got[i] != want;
  bad |= shard_collectives(n, s, g);
  printf("rank %d: %s\n", n->world_rank, bad ? "FAIL" : "ok");
  cudaFree(dev);
  n->ops->destroy(n);
  return bad;
}

int main(int argc, char **argv) {
  pprt_transport *t = pprt_mpi_transport_create(&argc, &argv);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    return no_gpu(t);
  return with_gpu(t, count);
}
