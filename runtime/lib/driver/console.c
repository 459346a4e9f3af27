/* Standard output through a queue and a writer thread (console.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie */
#endif

#include "driver/console.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes queued (`pending`) and those the writer is writing (`writing`);
   the first error of the real output, after which bytes are dropped. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t work, room;
  char *pending, *writing;
  size_t pending_len, writing_len, pending_cap, writing_cap;
  int error;
  int fd; /* the real standard output */
} queue = {.lock = PTHREAD_MUTEX_INITIALIZER,
           .work = PTHREAD_COND_INITIALIZER,
           .room = PTHREAD_COND_INITIALIZER,
           .fd = -1};

/* Writes `len` bytes to the real output; 0, or the error. */
static int write_all(const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(queue.fd, buf, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

static void *writer(void *unused) {
  (void)unused;
  pthread_mutex_lock(&queue.lock);
  for (;;) {
    while (queue.pending_len == 0)
      pthread_cond_wait(&queue.work, &queue.lock);
    char *buf = queue.pending;
    size_t cap = queue.pending_cap;
    queue.pending = queue.writing;
    queue.pending_cap = queue.writing_cap;
    queue.writing = buf;
    queue.writing_cap = cap;
    queue.writing_len = queue.pending_len;
    queue.pending_len = 0;
    bool failed = queue.error != 0;
    pthread_mutex_unlock(&queue.lock);
    int error = failed ? 0 : write_all(queue.writing, queue.writing_len);
    pthread_mutex_lock(&queue.lock);
    if (error && !queue.error)
      queue.error = error;
    queue.writing_len = 0;
    pthread_cond_broadcast(&queue.room);
  }
  return NULL;
}

/* Appends `size` bytes at `buf` to the queue, waiting while it is full. */
static ssize_t queue_write(void *cookie, const char *buf, size_t size) {
  (void)cookie;
  pthread_mutex_lock(&queue.lock);
  while (!queue.error && queue.pending_len + queue.writing_len > 0 &&
         queue.pending_len + queue.writing_len + size >
             PPRT_CONSOLE_QUEUE_BYTES)
    pthread_cond_wait(&queue.room, &queue.lock);
  if (queue.error) {
    errno = queue.error;
    pthread_mutex_unlock(&queue.lock);
    return -1;
  }
  if (queue.pending_len + size > queue.pending_cap) {
    size_t cap = 2 * (queue.pending_len + size);
    char *grown = realloc(queue.pending, cap);
    if (!grown) {
      pthread_mutex_unlock(&queue.lock);
      errno = ENOMEM;
      return -1;
    }
    queue.pending = grown;
    queue.pending_cap = cap;
  }
  memcpy(queue.pending + queue.pending_len, buf, size);
  queue.pending_len += size;
  pthread_cond_signal(&queue.work);
  pthread_mutex_unlock(&queue.lock);
  return (ssize_t)size;
}

bool pprt_console_flush(void) {
  fflush(stdout);
  if (queue.fd < 0)
    return !ferror(stdout);
  pthread_mutex_lock(&queue.lock);
  while (!queue.error && queue.pending_len + queue.writing_len > 0)
    pthread_cond_wait(&queue.room, &queue.lock);
  int error = queue.error;
  pthread_mutex_unlock(&queue.lock);
  errno = error;
  return error == 0;
}

static void flush_at_exit(void) { pprt_console_flush(); }

/* The queue's buffers start at this size, so that a run's usual output
   never grows them: no allocation per step. */
enum { initial_capacity = 64 << 10 };

void pprt_console_start(void) {
  if (queue.fd >= 0 || fflush(stdout) != 0)
    return;
  queue.pending = malloc(initial_capacity);
  queue.writing = malloc(initial_capacity);
  queue.pending_cap = queue.pending ? initial_capacity : 0;
  queue.writing_cap = queue.writing ? initial_capacity : 0;
  cookie_io_functions_t io = {.write = queue_write};
  FILE *queued = fopencookie(NULL, "w", io);
  pthread_attr_t attr;
  pthread_t thread;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  queue.fd = STDOUT_FILENO;
  bool started = queued && pthread_create(&thread, &attr, writer, NULL) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    queue.fd = -1;
    if (queued)
      fclose(queued);
    return;
  }
  setvbuf(queued, NULL, _IOLBF, 0);
  stdout = queued;
  atexit(flush_at_exit);
}
