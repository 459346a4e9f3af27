/* A deliberately broken generated program: env PPRT_ERR picks the bug. */
#include "pprt/pprt.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Bugs: "ndims" (7-D buffer), "abi" (another ABI version), "dtype" (an
   unknown element type), "f16param" (a param the f32-only initialiser
   cannot fill), "id" (unknown buffer), "mb" (micro-batch out of range),
   "tag" (buffer id too large for a message tag), "offset" (a next-step
   action with one weight version), "offsetloss" (a loss recorded by a
   next-step action), "acquire" (pprt_param_acquire of a buffer that is no
   param), "release" (pprt_param_release of a param no acquire holds). The
   last eight happen on pipeline rank 1 only, while rank 0
   waits in pprt_recv. Without a bug, rank 1 also sends an i64 and an f16
   buffer, which rank 0 checks: buffers of every type travel by their element
   size. */

static bool is_case(const char *name) {
  const char *v = getenv("PPRT_ERR");
  return v && strcmp(v, name) == 0;
}

/* BIG_ID * NUM_MB exceeds any MPI tag bound (at most INT_MAX). */
enum { BIG_ID = 1 << 17, NUM_MB = 1 << 14 };
enum { I64_ID = 1, F16_ID = 2, PARAM_ID = 3, LOSS_ID = 4 };

void pp_define_program(pprt_context *ctx) {
  pprt_set_program(ctx, PPRT_ABI_VERSION + is_case("abi"), 2, 2, NUM_MB);
  if (is_case("offsetloss"))
    pprt_set_weight_versions(ctx, 2);
  /* Buffer 0 holds 4 elements as 6 dims, or 7 in case "ndims". */
  static const int64_t dims[] = {1, 1, 1, 1, 1, 2, 2};
  bool seven = is_case("ndims");
  pprt_define_buffer(ctx, 0, PPRT_MICROBATCH, 0, 0, PPRT_F32, seven ? 7 : 6,
                     seven ? dims : dims + 1);
  pprt_define_buffer(ctx, BIG_ID, PPRT_MICROBATCH, 1, 0, PPRT_F32, 1,
                     (int64_t[]){4});
  pprt_define_buffer(ctx, I64_ID, PPRT_MICROBATCH, 0, 0,
                     is_case("dtype") ? 9 : PPRT_I64, 1, (int64_t[]){3});
  pprt_define_buffer(ctx, F16_ID, PPRT_MICROBATCH, 0, 0, PPRT_F16, 2,
                     (int64_t[]){5, 3});
  pprt_define_buffer(ctx, PARAM_ID, PPRT_PARAM, 1, 0,
                     is_case("f16param") ? PPRT_F16 : PPRT_F32, 1,
                     (int64_t[]){4});
  pprt_define_buffer(ctx, LOSS_ID, PPRT_LOSS, 1, 0, PPRT_F32, 0, NULL);
}

/* Rank 1 sends known i64 and f16 bit patterns; rank 0 checks them. */
static void transfer_types(pprt_context *ctx, int32_t rank) {
  int64_t *wide = pprt_buffer(ctx, I64_ID, 0);
  uint16_t *half = pprt_buffer(ctx, F16_ID, 0);
  if (rank == 1) {
    for (int i = 0; i < 3; ++i)
      wide[i] = ((int64_t)1 << 40) + i;
    for (int i = 0; i < 15; ++i)
      half[i] = (uint16_t)(0x3C00 + i);
    pprt_send(ctx, I64_ID, 0, 0, 0, PPRT_ACTIVATION);
    pprt_send(ctx, F16_ID, 0, 0, 0, PPRT_ACTIVATION);
    return;
  }
  pprt_recv(ctx, I64_ID, 0, 1, 0, PPRT_ACTIVATION);
  pprt_recv(ctx, F16_ID, 0, 1, 0, PPRT_ACTIVATION);
  for (int i = 0; i < 3; ++i)
    if (wide[i] != ((int64_t)1 << 40) + i)
      exit(3);
  for (int i = 0; i < 15; ++i)
    if (half[i] != 0x3C00 + i)
      exit(3);
}

void pp_run_step(pprt_context *ctx, int32_t rank) {
  transfer_types(ctx, rank);
  if (rank == 0) {
    pprt_recv(ctx, 0, 0, 1, 0, PPRT_GRADIENT);
    return;
  }
  if (is_case("f16param"))
    pprt_buffer(ctx, PARAM_ID, 0);
  if (is_case("id"))
    pprt_buffer(ctx, 7, 0);
  if (is_case("mb"))
    pprt_buffer(ctx, 0, NUM_MB);
  if (is_case("offset") || is_case("offsetloss"))
    pprt_set_step_offset(ctx, 1);
  if (is_case("offsetloss"))
    pprt_record_loss(ctx, LOSS_ID, 0);
  if (is_case("tag"))
    pprt_send(ctx, BIG_ID, 1, 0, 0, PPRT_GRADIENT);
  if (is_case("acquire"))
    pprt_param_acquire(ctx, BIG_ID);
  if (is_case("release")) {
    pprt_param_acquire(ctx, PARAM_ID);
    pprt_param_release(ctx, PARAM_ID);
    pprt_param_release(ctx, PARAM_ID);
  }
  pprt_send(ctx, 0, 0, 0, 0, PPRT_GRADIENT);
}
