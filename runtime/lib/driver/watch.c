/* The watcher of a rank (watch.h): fork, wait, report a killed rank. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strsignal */
#endif

#include "driver/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

/* The rank's end of the pipe its world rank goes through; -1 if none. */
static int rank_pipe = -1;

/* In the watcher: the rank, and the last signal passed on to it. */
static pid_t child;
static volatile sig_atomic_t passed_on;

/* Signals the launcher sends to the processes it started (Ctrl-C, a
   job's time limit): the rank gets them. */
static const int passed_signals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT,
                                     SIGUSR1, SIGUSR2, SIGCONT};

static void pass_on(int sig) {
  passed_on = sig;
  kill(child, sig);
}

/* The rank's world rank; if it died before it knew it, the one its
   launcher gave it (MPICH's, Open MPI's or PMIx's variable); -1 if none. */
static int read_rank(int fd) {
  int32_t rank = -1;
  ssize_t got;
  do
    got = read(fd, &rank, sizeof rank);
  while (got < 0 && errno == EINTR);
  if (got == (ssize_t)sizeof rank)
    return rank;
  const char *vars[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; ++i)
    if (getenv(vars[i]))
      return atoi(getenv(vars[i]));
  return -1;
}

/* Ends the watcher as its rank ended, so the launcher sees the same. */
_Noreturn static void end_like(int status) {
  if (WIFEXITED(status))
    _exit(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);
}

_Noreturn static void watch(int fd) {
#ifdef __linux__
  prctl(PR_SET_NAME, "pprt-watch", 0, 0, 0);
#endif
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = pass_on;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof passed_signals / sizeof *passed_signals; ++i)
    sigaction(passed_signals[i], &sa, NULL);
  int rank = read_rank(fd);
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR)
      _exit(1);
  if (WIFSIGNALED(status) && WTERMSIG(status) != passed_on) {
    char who[32] = "a rank";
    if (rank >= 0)
      snprintf(who, sizeof who, "rank %d", rank);
    fprintf(stderr, "pprt: %s (pid %d) was killed by signal %d (%s)\n", who,
            (int)child, WTERMSIG(status), strsignal(WTERMSIG(status)));
    fflush(stderr);
  }
  end_like(status);
}

void pprt_watch_start(void) {
  const char *env = getenv("PPRT_WATCH");
  int fds[2];
  if ((env && strcmp(env, "0") == 0) || pipe(fds) != 0)
    return;
  pid_t watcher = getpid();
  fflush(NULL);
  child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return; /* run unwatched */
  }
  if (child > 0) {
    close(fds[1]);
    watch(fds[0]);
  }
  close(fds[0]);
  rank_pipe = fds[1];
  fcntl(rank_pipe, F_SETFD, FD_CLOEXEC);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
  if (getppid() != watcher)
    raise(SIGKILL); /* the watcher died before the line above */
}

void pprt_watch_set_rank(int32_t rank) {
  if (rank_pipe < 0)
    return;
  ssize_t put;
  do
    put = write(rank_pipe, &rank, sizeof rank);
  while (put < 0 && errno == EINTR);
  close(rank_pipe);
  rank_pipe = -1;
}
