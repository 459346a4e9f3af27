/* A deadline for MPI calls that block and cannot be polled (MPI_Init,
   communicator set-up, MPI_Finalize): when one lasts past the timeout, a
   watchdog thread names the ranks of this host that are stopped and ends
   the process, so that a rank stopped there ends the job instead of hanging
   it. */
#ifndef PPRT_BACKENDS_MPI_UNPOLLED_H
#define PPRT_BACKENDS_MPI_UNPOLLED_H

#include <stddef.h>
#include <stdint.h>

/* Starts the deadline of `what` (a static string), `timeout_s` from now,
   for world rank `rank` (-1 while MPI does not know it yet). */
void pprt_unpolled_begin(const char *what, double timeout_s, int32_t rank);

/* Every rank has ended its run well, so that only the launcher can hold
   the calls still to come (MPI_Finalize waits on it, and it on a reader
   of its output that paused): from now on a deadline that passes while
   none of this host's ranks is stopped starts again instead of ending
   the process. A rank stopped is still named at the deadline, and one
   stopped for good is ended by its watcher. */
void pprt_unpolled_trust_launcher(void);

/* The call returned: stops the deadline. */
void pprt_unpolled_end(void);

/* The timeout of the last deadline (the MPI transport's, for the blocking
   calls of transports built on it); 60 s before any. */
double pprt_unpolled_timeout(void);

/* The ranks of this host (other than the caller) that are stopped
   (SIGSTOP, a debugger), as "rank 2 (pid 4711), ..." into `out`; "" if
   none. Read from /proc; "" where there is none. */
void pprt_stopped_local_ranks(char *out, size_t size);

#endif
