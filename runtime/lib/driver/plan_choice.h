/* Step plans chosen at run time among the compiled ones (--choose-plans). */
#ifndef PPRT_DRIVER_PLAN_CHOICE_H
#define PPRT_DRIVER_PLAN_CHOICE_H

#include "core/core.h"

/* Replaces the program's step table by one for `num_steps` steps, step i
   holding `num_samples[i]` samples of lengths `sorted[i]` (longest
   first): each replica's samples (the sorted ones at r, r + D, ...) run
   the compiled plan that holds them with the fewest token slots, cut
   into its micro-batches in order. False, naming the first step and
   replica no plan holds in `failed_step` and `failed_replica`, if some
   step fits none; the table is then left as it was. */
bool pprt_choose_step_plans(pprt_context *ctx, int64_t num_steps,
                            const int64_t *const *sorted,
                            const int64_t *num_samples, int64_t *failed_step,
                            int32_t *failed_replica);

/* Prints on world rank 0 the plan of each step (replicas' plans joined by
   '/'), the first 32: "pprt: --choose-plans: the 5 steps of PATH run
   plans 1 0 0 1 2". */
void pprt_report_step_plans(const pprt_context *ctx, const char *path);

#endif
