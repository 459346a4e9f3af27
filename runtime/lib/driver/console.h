/* Standard output written by a thread of its own, so that a reader that
   pauses delays what a rank prints, not the rank. */
#ifndef PPRT_CONSOLE_H
#define PPRT_CONSOLE_H

#include <stdbool.h>

/*
 * A rank blocked writing a step's line to a reader that does not read (a
 * pager, Ctrl-S in a terminal, a stopped mpiexec) stops answering the
 * other ranks, which end the job naming it after --timeout. So the rank's
 * `stdout` becomes a stream that only queues what is written; a writer
 * thread writes the queue to the real standard output, blocking there
 * instead. The queue holds up to PPRT_CONSOLE_QUEUE_BYTES (about 600,000
 * step lines); a writer that finds it full waits for room. Errors of the
 * real output (a full disk, /dev/full) reach the stream: the next write
 * or fflush of `stdout` fails with the error, as it would have.
 */
#define PPRT_CONSOLE_QUEUE_BYTES (16 << 20)

/* Puts the queue in front of standard output; at exit, everything queued
   is written before the process ends. Call once, in the process that
   prints (after any fork). Without a thread, stdout stays as it was. */
void pprt_console_start(void);

/* Writes everything queued so far; false (with errno set) if the real
   standard output failed at any time. */
bool pprt_console_flush(void);

#endif /* PPRT_CONSOLE_H */
