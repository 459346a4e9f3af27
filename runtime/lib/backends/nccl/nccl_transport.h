/* The NCCL transport: device memory moved by NCCL, bootstrapped over MPI. */
#ifndef PPRT_NCCL_TRANSPORT_H
#define PPRT_NCCL_TRANSPORT_H

#include "backends/transport.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

/* Point-to-point and group all-reduces of device memory through NCCL on
   the current CUDA device, ordered after the work on `compute` and before
   the work enqueued there after they complete; host-value collectives,
   find_silent and abort go to `inner` (MPI), which also carries the NCCL
   unique id. Collective over the world. NULL, with the reason in `err`,
   when any rank cannot start NCCL (every rank then returns NULL);
   destroying it destroys `inner`. */
pprt_transport *pprt_nccl_transport_create(pprt_transport *inner,
                                           cudaStream_t compute, char *err,
                                           size_t err_size);

#endif /* PPRT_NCCL_TRANSPORT_H */
