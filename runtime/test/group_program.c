/* Two ranks that exchange values in one step, each receiving before it
   sends: inside an exchange group (pprt_group_begin/end) both are started
   and the receive completes at the group's end, so the exchange completes;
   env PPRT_GROUP picks a variant:
   "none" (no group: both ranks wait in their receives), "nested", "unopened"
   (pprt_group_end without a group), "open" (the step ends in a group) or
   "same_slot" (the group receives into the slot it sends from). */
#include "pprt/pprt.h"

#include <stdlib.h>
#include <string.h>

static const char *variant(void) {
  const char *v = getenv("PPRT_GROUP");
  return v ? v : "";
}

static int is_variant(const char *name) { return !strcmp(variant(), name); }

/* Buffer r carries rank r's value to the other rank. */
void pp_define_program(pprt_context *ctx) {
  pprt_set_program(ctx, PPRT_ABI_VERSION, 2, 2, 1);
  for (int32_t r = 0; r < 2; ++r)
    pprt_define_buffer(ctx, r, PPRT_MICROBATCH, r, 0, PPRT_F32, 1,
                       (int64_t[]){4});
}

void pp_run_step(pprt_context *ctx, int32_t rank) {
  int32_t other = 1 - rank;
  float *mine = pprt_buffer(ctx, rank, 0);
  float *theirs = pprt_buffer(ctx, other, 0);
  for (int i = 0; i < 4; ++i)
    mine[i] = (float)(10 * rank + i);
  if (is_variant("unopened"))
    pprt_group_end(ctx);
  int grouped = !is_variant("none");
  if (grouped)
    pprt_group_begin(ctx);
  if (is_variant("nested"))
    pprt_group_begin(ctx);
  pprt_recv(ctx, other, 0, other, rank, PPRT_ACTIVATION);
  pprt_send(ctx, rank, 0, other, other, PPRT_ACTIVATION);
  if (is_variant("same_slot")) /* into the slot the group sends from */
    pprt_recv(ctx, rank, 0, other, rank, PPRT_ACTIVATION);
  if (grouped && !is_variant("open"))
    pprt_group_end(ctx);
  for (int i = 0; i < 4 && !is_variant("open"); ++i)
    if (theirs[i] != (float)(10 * other + i))
      exit(3);
}
