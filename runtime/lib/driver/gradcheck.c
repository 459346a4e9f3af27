/* Finite-difference check of the compiled gradients (--check-gradients). */
#include "driver/driver.h"

#include <float.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Local helpers keep libpprt.a free of -lm. */
static double abs_of(double x) { return x < 0 ? -x : x; }
static double max_of(double a, double b) { return a > b ? a : b; }

/* Elements probed per parameter: all of a small one, else evenly spread. */
#define PPRT_GRADCHECK_SAMPLES 24

/* The loss of step 0's batch with the current weights. */
static double loss_at_step0(pprt_context *ctx) {
  pprt_begin_step(ctx, 0);
  pprt_run_step(ctx);
  return pprt_end_step(ctx);
}

/* The central difference of the loss along element i of `w`. */
static double central_difference(pprt_context *ctx, void *w, int64_t i,
                                 double eps) {
  pprt_backend *be = ctx->backend;
  float *wi = (float *)w + i; /* a device pointer */
  float saved, probe;
  be->ops->copy_to_host(be, &saved, wi, sizeof saved);
  probe = saved + (float)eps;
  be->ops->copy_to_device(be, wi, &probe, sizeof probe);
  double plus = loss_at_step0(ctx);
  probe = saved - (float)eps;
  be->ops->copy_to_device(be, wi, &probe, sizeof probe);
  double minus = loss_at_step0(ctx);
  be->ops->copy_to_device(be, wi, &saved, sizeof saved);
  return (plus - minus) / (2 * eps);
}

/* Whether `numeric`, taken with step `eps` on a loss of size `loss`,
   confirms `analytic`. The loss is computed in f32, so its rounding noise,
   divided by the step, sets the absolute floor. */
static bool agrees(double analytic, double numeric, double loss, double eps) {
  double noise = 8.0 * abs_of(loss) * FLT_EPSILON / eps;
  double scale = max_of(abs_of(numeric), abs_of(analytic));
  return abs_of(numeric - analytic) <= 1e-4 + noise + 1e-2 * scale;
}

/* Compares one param's analytic gradient with central differences at two
   step sizes: a large one that rounding noise cannot swamp and a small one
   that rarely crosses a kink (ReLU, min, select). An element passes when
   either agrees; a wrong derivative fails both. Returns the failures. */
static int check_param(pprt_context *ctx, int32_t pid, const float *grad,
                       double loss) {
  pprt_buffer_desc *p = &ctx->buffers[pid];
  pprt_require_f32(ctx, p, pid, "--check-gradients");
  void *w = pprt_slot_data(ctx, p, pid, 0);
  int64_t samples =
      p->numel < PPRT_GRADCHECK_SAMPLES ? p->numel : PPRT_GRADCHECK_SAMPLES;
  const double steps[2] = {1e-2, 1e-3};
  double worst = 0.0;
  int bad = 0;
  for (int64_t k = 0; k < samples; ++k) {
    int64_t i = k * p->numel / samples;
    double best = DBL_MAX, numeric = 0.0;
    bool ok = false;
    for (int s = 0; s < 2 && !ok; ++s) {
      double n = central_difference(ctx, w, i, steps[s]);
      ok = agrees(grad[i], n, loss, steps[s]);
      double err = abs_of(n - grad[i]) /
                   max_of(max_of(abs_of(n), abs_of(grad[i])), 1e-6);
      if (err < best) {
        best = err;
        numeric = n;
      }
    }
    worst = max_of(worst, best);
    if (!ok && bad++ < 3)
      printf("  param %d element %lld: analytic %.6g numeric %.6g\n", p->index,
             (long long)i, grad[i], numeric);
  }
  printf("gradcheck param %d: %lld elements, max relative difference %.3g%s\n",
         p->index, (long long)samples, worst, bad ? " FAILED" : "");
  return bad;
}

/* A copy of param `pid`'s gradient after the last step (zeros if none). */
static float *copy_gradient(pprt_context *ctx, int32_t pid) {
  pprt_buffer_desc *p = &ctx->buffers[pid];
  const pprt_buffer_desc *g = pprt_grad_of(ctx, p, NULL);
  float *grad = pprt_xcalloc(ctx, (size_t)p->numel, sizeof(float));
  if (g && g->slots[0].data)
    ctx->backend->ops->copy_to_host(ctx->backend, grad, g->slots[0].data,
                                    (size_t)p->numel * sizeof(float));
  return grad;
}

/* Runs step 0 with frozen weights and keeps every gradient, then probes
   each parameter. Needs the whole model in this process (one stage). */
int pprt_check_gradients(pprt_context *ctx) {
  if (ctx->transport->world_size != 1 || ctx->num_ranks != 1) {
    fprintf(stderr, "pprt: --check-gradients needs a one-stage program on "
                    "one process\n");
    return 2;
  }
  ctx->freeze_params = true;
  double loss = loss_at_step0(ctx);
  /* Probing re-runs the step, which overwrites the gradients: copy first. */
  float **grads = pprt_xcalloc(ctx, (size_t)ctx->num_buffers, sizeof *grads);
  for (int32_t pid = 0; pid < ctx->num_buffers; ++pid)
    if (ctx->buffers[pid].defined && ctx->buffers[pid].kind == PPRT_PARAM)
      grads[pid] = copy_gradient(ctx, pid);
  int bad = 0;
  for (int32_t pid = 0; pid < ctx->num_buffers; ++pid) {
    if (!grads[pid])
      continue;
    bad += check_param(ctx, pid, grads[pid], loss);
    free(grads[pid]);
  }
  free(grads);
  printf("gradient check %s\n", bad ? "FAILED" : "passed");
  return bad ? 1 : 0;
}
