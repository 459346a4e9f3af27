/* A deliberately broken generated program: env PPRT_ERR picks the bug. */
#include "pprt/pprt.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Bugs: "ndims" (5-D buffer), "id" (unknown buffer), "mb" (micro-batch out
   of range), "tag" (buffer id too large for a message tag). The last three
   happen on pipeline rank 1 only, while rank 0 waits in pprt_recv. */

static bool is_case(const char *name) {
  const char *v = getenv("PPRT_ERR");
  return v && strcmp(v, name) == 0;
}

/* BIG_ID * NUM_MB exceeds any MPI tag bound (at most INT_MAX). */
enum { BIG_ID = 1 << 17, NUM_MB = 1 << 14 };

void pp_define_program(pprt_context *ctx) {
  pprt_set_program(ctx, 2, 2, NUM_MB);
  pprt_define_buffer(ctx, 0, PPRT_MICROBATCH, 0, 0, is_case("ndims") ? 5 : 1, 4,
                     0, 0, 0);
  pprt_define_buffer(ctx, BIG_ID, PPRT_MICROBATCH, 1, 0, 1, 4, 0, 0, 0);
}

void pp_run_step(pprt_context *ctx, int32_t rank) {
  if (rank == 0) {
    pprt_recv(ctx, 0, 0, 1, 0, PPRT_GRADIENT);
    return;
  }
  if (is_case("id"))
    pprt_buffer(ctx, 7, 0);
  if (is_case("mb"))
    pprt_buffer(ctx, 0, NUM_MB);
  if (is_case("tag"))
    pprt_send(ctx, BIG_ID, 1, 0, 0, PPRT_GRADIENT);
  pprt_send(ctx, 0, 0, 0, 0, PPRT_GRADIENT);
}
