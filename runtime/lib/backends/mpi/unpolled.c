/* Deadlines for blocking MPI calls (unpolled.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_condattr_setclock */
#endif

#include "backends/mpi/unpolled.h"

#include "backends/awake_clock.h"

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How often the watchdog reads its clock while a deadline is in force, so
   that it sees the process stop (awake_clock.h). */
#define TICK_S 0.05

/* The watchdog thread and the deadline it keeps, on an awake clock: a
   job suspended as a whole in a blocking call is not late. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  pthread_t thread;
  bool running, armed; /* the thread; a deadline in force */
  bool trust_launcher; /* pprt_unpolled_trust_launcher was called */
  const char *what;
  double timeout_s;
  pprt_awake_clock clock;
  double started, deadline; /* of the call, on `clock` */
  int32_t rank;
} guard = {.lock = PTHREAD_MUTEX_INITIALIZER,
           .timeout_s = 60.0,
           .clock = {.stall_s = PPRT_AWAKE_STALL_S}};

/* The launchers' variable for a process's world rank; -1 if none. */
static int32_t rank_in_environment(pid_t pid) {
  char path[64], buf[65536];
  snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *keys[] = {"PMI_RANK=", "OMPI_COMM_WORLD_RANK=", "PMIX_RANK="};
  for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
    for (size_t k = 0; k < sizeof keys / sizeof *keys; ++k)
      if (strncmp(buf + at, keys[k], strlen(keys[k])) == 0)
        return atoi(buf + at + strlen(keys[k]));
  return -1;
}

/* A process's state letter, parent and name from /proc; false if gone. */
static bool read_stat(pid_t pid, char *state, pid_t *parent, char *name,
                      size_t name_size) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *open = strchr(buf, '('), *close = strrchr(buf, ')');
  int ppid = 0;
  if (!open || !close || sscanf(close + 1, " %c %d", state, &ppid) != 2)
    return false;
  size_t len = (size_t)(close - open - 1);
  if (len >= name_size)
    len = name_size - 1;
  memcpy(name, open + 1, len);
  name[len] = '\0';
  *parent = ppid;
  return true;
}

/* The first ancestor of `pid` without a rank: the launcher's process that
   started the ranks of this host, which identifies the job here. */
static pid_t job_root(pid_t pid) {
  for (int depth = 0; depth < 8 && pid > 1; ++depth) {
    char state, name[64];
    pid_t parent;
    if (!read_stat(pid, &state, &parent, name, sizeof name))
      return -1;
    if (rank_in_environment(pid) < 0)
      return pid;
    pid = parent;
  }
  return -1;
}

void pprt_stopped_local_ranks(char *out, size_t size) {
  out[0] = '\0';
  pid_t self = getpid(), root = job_root(self);
  DIR *proc = opendir("/proc");
  if (!proc || root < 0) {
    if (proc)
      closedir(proc);
    return;
  }
  size_t used = 0;
  for (struct dirent *e; (e = readdir(proc)) != NULL;) {
    pid_t pid = (pid_t)atoi(e->d_name);
    char state, name[64];
    pid_t parent;
    if (pid <= 0 || pid == self ||
        !read_stat(pid, &state, &parent, name, sizeof name))
      continue;
    /* Stopped by a signal (T) or a debugger (t); watchers hold no rank. */
    if ((state != 'T' && state != 't') || strcmp(name, "pprt-watch") == 0)
      continue;
    int32_t rank = rank_in_environment(pid);
    if (rank < 0 || job_root(pid) != root || used >= size)
      continue;
    used += (size_t)snprintf(out + used, size - used, "%srank %d (pid %d)",
                             used ? ", " : "", rank, (int)pid);
  }
  closedir(proc);
}

/* Names the stopped ranks and ends this process; the launcher then ends
   the job. Others waiting in the same call print theirs meanwhile. */
_Noreturn static void expire(double now) {
  char stopped[512], who[32] = "rank ?";
  double waited_s = now - guard.started;
  pprt_stopped_local_ranks(stopped, sizeof stopped);
  if (guard.rank >= 0)
    snprintf(who, sizeof who, "rank %d", guard.rank);
  if (stopped[0])
    fprintf(stderr,
            "pprt: %s: %s stopped answering: %s did not complete within "
            "%.1f s\n",
            who, stopped, guard.what, waited_s);
  else
    fprintf(stderr,
            "pprt: %s: %s did not complete within %.1f s: a rank did not "
            "reach it (none of this host's ranks is stopped; one on another "
            "host, or one that ended?)\n",
            who, guard.what, waited_s);
  fflush(stderr);
  /* The launcher kills every rank once this one ends: give the others,
     whose deadlines passed about now, time to say the same. */
  double grace = guard.timeout_s / 2 < 2.0 ? guard.timeout_s / 2 : 2.0;
  struct timespec pause = {(time_t)grace,
                           (long)((grace - (double)(time_t)grace) * 1e9)};
  nanosleep(&pause, NULL);
  _exit(1);
}

/* Whether a call past its deadline waits on the launcher alone: every
   rank ended its run well and none of this host's is stopped. */
static bool launcher_holds_call(void) {
  if (!guard.trust_launcher)
    return false;
  char stopped[512];
  pprt_stopped_local_ranks(stopped, sizeof stopped);
  return stopped[0] == '\0';
}

/* CLOCK_MONOTONIC `seconds` from now. */
static struct timespec monotonic_in(double seconds) {
  struct timespec at;
  clock_gettime(CLOCK_MONOTONIC, &at);
  long ns = at.tv_nsec + (long)(seconds * 1e9);
  at.tv_sec += ns / 1000000000L;
  at.tv_nsec = ns % 1000000000L;
  return at;
}

static void *watchdog(void *unused) {
  (void)unused;
  pthread_mutex_lock(&guard.lock);
  for (;;) {
    if (!guard.armed) {
      pthread_cond_wait(&guard.changed, &guard.lock);
      continue;
    }
    double now = pprt_awake_now(&guard.clock);
    if (now >= guard.deadline) {
      if (!launcher_holds_call())
        expire(now);
      guard.deadline = now + guard.timeout_s;
    }
    double left = guard.deadline - now;
    struct timespec wake = monotonic_in(left < TICK_S ? left : TICK_S);
    pthread_cond_timedwait(&guard.changed, &guard.lock, &wake);
  }
  return NULL;
}

static bool start_watchdog(void) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&guard.changed, &attr);
  pthread_condattr_destroy(&attr);
  pthread_attr_t thread_attr;
  pthread_attr_init(&thread_attr);
  pthread_attr_setdetachstate(&thread_attr, PTHREAD_CREATE_DETACHED);
  bool ok = pthread_create(&guard.thread, &thread_attr, watchdog, NULL) == 0;
  pthread_attr_destroy(&thread_attr);
  return ok;
}

void pprt_unpolled_begin(const char *what, double timeout_s, int32_t rank) {
  pthread_mutex_lock(&guard.lock);
  if (!guard.running)
    guard.running = start_watchdog();
  guard.started = pprt_awake_resume(&guard.clock);
  guard.deadline = guard.started + timeout_s;
  guard.what = what;
  guard.timeout_s = timeout_s;
  guard.rank = rank;
  guard.armed = guard.running;
  pthread_cond_signal(&guard.changed);
  pthread_mutex_unlock(&guard.lock);
}

void pprt_unpolled_trust_launcher(void) {
  pthread_mutex_lock(&guard.lock);
  guard.trust_launcher = true;
  pthread_mutex_unlock(&guard.lock);
}

void pprt_unpolled_end(void) {
  pthread_mutex_lock(&guard.lock);
  guard.armed = false;
  if (guard.running)
    pthread_cond_signal(&guard.changed);
  pthread_mutex_unlock(&guard.lock);
}

double pprt_unpolled_timeout(void) {
  pthread_mutex_lock(&guard.lock);
  double timeout_s = guard.timeout_s;
  pthread_mutex_unlock(&guard.lock);
  return timeout_s;
}
