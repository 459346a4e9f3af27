/* The awake clock (awake_clock.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "backends/awake_clock.h"

#include <time.h>

static double monotonic_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double pprt_awake_now(pprt_awake_clock *c) {
  double now = monotonic_s();
  if (c->last > 0 && now - c->last > c->stall_s)
    c->stalled += now - c->last;
  c->last = now;
  return now - c->stalled;
}

double pprt_awake_resume(pprt_awake_clock *c) {
  c->last = monotonic_s();
  return c->last - c->stalled;
}
