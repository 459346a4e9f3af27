/* A clock that stops while its process is stopped, for deadlines on
   other processes. */
#ifndef PPRT_BACKENDS_AWAKE_CLOCK_H
#define PPRT_BACKENDS_AWAKE_CLOCK_H

/*
 * A process that waits for another measures the other's silence, but only
 * while it runs itself: when a batch scheduler suspends the whole job
 * (SIGSTOP to every process, then SIGCONT) or a debugger holds it,
 * CLOCK_MONOTONIC runs on and every deadline passes at once on resume,
 * blaming a process that was stopped like everyone else. The awake clock
 * is CLOCK_MONOTONIC less the stalls its reader saw: a reader that reads
 * it often (every few milliseconds while it waits) and finds more than
 * `stall_s` between two readings was not running in between, and that
 * time counts for nobody. A process stopped alone is still timed by the
 * others, whose clocks run.
 */
/* The stall its readers use: they read it at least every 100 ms. */
#define PPRT_AWAKE_STALL_S 0.25

typedef struct pprt_awake_clock {
  double stall_s; /* a gap longer than this is a stall */
  double last;    /* CLOCK_MONOTONIC at the last reading; 0 before any */
  double stalled; /* the stalls seen so far */
} pprt_awake_clock;

/* Seconds since an arbitrary origin, less the stalls seen. */
double pprt_awake_now(pprt_awake_clock *c);

/* Reads the clock without counting the gap since the last reading: for a
   reader that was busy elsewhere (computing, not waiting) since. */
double pprt_awake_resume(pprt_awake_clock *c);

#endif /* PPRT_BACKENDS_AWAKE_CLOCK_H */
