/* Lines of a stream a data loader writes (--sample-lengths with
   --plan-lookahead): read with poll, so that a writer that stalls ends the
   run after --timeout rather than hang it, and a FIFO opened before its
   writer does not block. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "driver/line_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pprt_line_reader {
  int fd;
  bool fifo;     /* a FIFO's lines all end with a newline */
  bool at_end;   /* the writer closed, or the file ended */
  char *buffer;  /* bytes read and not yet returned */
  size_t filled; /* of the buffer */
  size_t size;   /* the buffer's room */
  size_t taken;  /* the line returned last: bytes to drop */
};

pprt_line_reader *pprt_line_reader_open(const char *path, char *why,
                                        size_t why_size) {
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(why, why_size, "%s", strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  pprt_line_reader *r = calloc(1, sizeof *r);
  if (!r) {
    close(fd);
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  r->fd = fd;
  r->fifo = S_ISFIFO(st.st_mode);
  return r;
}

/* Waits up to `timeout_s` for bytes and appends them; false with why in
   `why` on a timeout or an error. */
static bool fill(pprt_line_reader *r, double timeout_s, char *why,
                 size_t why_size) {
  if (r->filled + 1 >= r->size) {
    size_t size = r->size ? 2 * r->size : 4096;
    char *grown = realloc(r->buffer, size);
    if (!grown) {
      snprintf(why, why_size, "out of memory for a line of %zu bytes",
               r->filled);
      return false;
    }
    r->buffer = grown;
    r->size = size;
  }
  double ms = timeout_s * 1000.0;
  int wait_ms = ms < INT_MAX ? (int)ms : INT_MAX;
  for (;;) {
    /* Polled first: a FIFO no writer has opened yet reads as ended, but
       polls as neither readable nor hung up. */
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    int ready = poll(&p, 1, wait_ms);
    if (ready == 0) {
      snprintf(why, why_size,
               "no line came within --timeout %g s: the data loader writing "
               "it stalled",
               timeout_s);
      return false;
    }
    ssize_t n =
        ready < 0 ? -1
                  : read(r->fd, r->buffer + r->filled, r->size - r->filled - 1);
    if (n >= 0) {
      r->filled += (size_t)n;
      r->at_end = n == 0;
      return true;
    }
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      snprintf(why, why_size, "cannot read: %s", strerror(errno));
      return false;
    }
  }
}

int pprt_line_reader_next(pprt_line_reader *r, double timeout_s, char **line,
                          char *why, size_t why_size) {
  if (r->taken) {
    memmove(r->buffer, r->buffer + r->taken, r->filled - r->taken);
    r->filled -= r->taken;
    r->taken = 0;
  }
  char *newline = NULL;
  while (!(newline = r->filled ? memchr(r->buffer, '\n', r->filled) : NULL) &&
         !r->at_end)
    if (!fill(r, timeout_s, why, why_size))
      return -1;
  if (!newline && r->filled == 0)
    return 0;
  size_t length = newline ? (size_t)(newline - r->buffer) : r->filled;
  r->buffer[length] = '\0';
  if (memchr(r->buffer, '\0', length)) {
    snprintf(why, why_size, "a NUL byte: not a text index");
    return -1;
  }
  if (!newline && r->fifo) {
    snprintf(why, why_size,
             "the stream ended mid-line ('%.24s' without a newline): its "
             "writer stopped",
             r->buffer);
    return -1;
  }
  r->taken = newline ? length + 1 : length;
  *line = r->buffer;
  return 1;
}

void pprt_line_reader_close(pprt_line_reader *r) {
  if (!r)
    return;
  close(r->fd);
  free(r->buffer);
  free(r);
}
