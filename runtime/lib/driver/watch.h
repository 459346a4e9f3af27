/* A rank's watcher: reports how its rank ended when nothing else can. */
#ifndef PPRT_WATCH_H
#define PPRT_WATCH_H

#include <stdint.h>

/*
 * A rank killed outright (kill -9, the kernel's out-of-memory killer)
 * prints nothing, and the MPI launcher kills the other ranks within
 * milliseconds, before they could notice. So the process the launcher
 * starts forks at once: the child is the rank and runs everything; the
 * parent, the watcher (named "pprt-watch"), only waits for it, and when it
 * was killed by a signal the watcher says which rank that was before it
 * passes the same end on to the launcher. The launcher sees nothing until
 * then: the watcher holds the rank's output and PMI connection open. The
 * rank dies with its watcher (PR_SET_PDEATHSIG), so a launcher that kills
 * the watchers ends the job as before. PPRT_WATCH=0 turns it off.
 *
 * A rank stopped (SIGSTOP) is named by the ranks that wait for it, within
 * about one timeout; but one stopped after its last communication (in
 * MPI_Finalize, once the others left) has no one waiting for it, and the
 * launcher would wait for it forever. So the watcher also ends a rank that
 * stays stopped for `stop_limit_s`, saying so. A rank whose watcher is
 * stopped when it exits continues it, saying so.
 */

/* Forks the watcher; returns in the rank (or when there is none). */
void pprt_watch_start(double stop_limit_s);

/* Tells the watcher its rank's world rank, for its report. */
void pprt_watch_set_rank(int32_t rank);

#endif /* PPRT_WATCH_H */
