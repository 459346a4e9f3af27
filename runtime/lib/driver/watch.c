/* The watcher of a rank (watch.h): fork, wait, report a killed rank. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strsignal */
#endif

#include "driver/watch.h"

#include "backends/awake_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

/* The rank's end of the pipe its world rank goes through; -1 if none. */
static int rank_pipe = -1;

/* In the watcher: the rank, the last signal passed on to it, and how long
   it may stay stopped (0: for ever). */
static pid_t child;
static volatile sig_atomic_t passed_on;
static double stop_limit;

/* Signals the launcher sends to the processes it started (Ctrl-C, a
   job's time limit): the rank gets them. */
static const int passed_signals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT,
                                     SIGUSR1, SIGUSR2, SIGCONT};

static void pass_on(int sig) {
  passed_on = sig;
  kill(child, sig);
}

/* The rank's world rank, once it wrote it to the (non-blocking) pipe; else
   the one its launcher gave it (MPICH's, Open MPI's or PMIx's variable);
   -1 if none. */
static int read_rank(int fd) {
  static int32_t rank = -1;
  ssize_t got;
  do
    got = read(fd, &rank, sizeof rank);
  while (got < 0 && errno == EINTR);
  if (rank >= 0)
    return rank;
  const char *vars[] = {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; ++i)
    if (getenv(vars[i]))
      return atoi(getenv(vars[i]));
  return -1;
}

static void describe(char *who, size_t size, int rank) {
  if (rank >= 0)
    snprintf(who, size, "rank %d", rank);
  else
    snprintf(who, size, "a rank");
}

/* The rank stayed stopped by `sig` for the stop limit: ends it and says
   why (its end by SIGKILL is then no news). */
static void end_stopped(int fd, int sig) {
  char who[32];
  describe(who, sizeof who, read_rank(fd));
  fprintf(stderr,
          "pprt: %s (pid %d) stayed stopped by signal %d (%s) for %.1f s; "
          "its watcher ends it\n",
          who, (int)child, sig, strsignal(sig), stop_limit);
  fflush(stderr);
  passed_on = SIGKILL;
  kill(child, SIGKILL);
}

/* Waits until the rank ends, ending it when it stays stopped too long;
   returns its wait status. The time is the watcher's awake time: a job
   suspended as a whole, watchers too, has not left its rank stopped. */
static int wait_for_end(int fd) {
  int status = 0, stop_sig = 0;
  double stopped_at = -1.0;
  pprt_awake_clock clock = {.stall_s = PPRT_AWAKE_STALL_S};
  for (;;) {
    int flags = WUNTRACED | WCONTINUED | (stopped_at >= 0 ? WNOHANG : 0);
    pid_t got = waitpid(child, &status, flags);
    if (got < 0 && errno != EINTR)
      _exit(1);
    if (got == 0 && pprt_awake_now(&clock) - stopped_at >= stop_limit) {
      end_stopped(fd, stop_sig);
      stopped_at = -1.0;
    } else if (got == 0) {
      struct timespec pause = {0, 20L * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
    if (got <= 0)
      continue;
    if (WIFEXITED(status) || WIFSIGNALED(status))
      return status;
    if (WIFSTOPPED(status) && stop_limit > 0) {
      stop_sig = WSTOPSIG(status);
      stopped_at = pprt_awake_resume(&clock);
    } else if (WIFCONTINUED(status)) {
      stopped_at = -1.0;
    }
  }
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
  fcntl(fd, F_SETFL, O_NONBLOCK);
  int status = wait_for_end(fd);
  if (WIFSIGNALED(status) && WTERMSIG(status) != passed_on) {
    char who[32];
    describe(who, sizeof who, read_rank(fd));
    fprintf(stderr, "pprt: %s (pid %d) was killed by signal %d (%s)\n", who,
            (int)child, WTERMSIG(status), strsignal(WTERMSIG(status)));
    fflush(stderr);
  }
  end_like(status);
}

/* In the rank: its watcher's pid; 0 if none. */
static pid_t my_watcher;

/* As the rank exits: a stopped watcher (kill -STOP of the process the
   launcher started) would keep the launcher waiting for ever, so the
   rank continues it, saying so. */
static void continue_stopped_watcher(void) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)my_watcher);
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *end = strrchr(buf, ')');
  if (!end || end[1] != ' ' || end[2] != 'T' || getppid() != my_watcher)
    return;
  fprintf(stderr,
          "pprt: the watcher (pid %d) of the rank with pid %d is stopped; "
          "continuing it so that the job can end\n",
          (int)my_watcher, (int)getpid());
  fflush(stderr);
  kill(my_watcher, SIGCONT);
}

void pprt_watch_start(double stop_limit_s) {
  stop_limit = stop_limit_s;
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
  my_watcher = watcher;
  atexit(continue_stopped_watcher);
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
