/* Lines of a stream a data loader writes (a FIFO, or a file read as far
   as it goes), each waited for within a bound. */
#ifndef PPRT_DRIVER_LINE_READER_H
#define PPRT_DRIVER_LINE_READER_H

#include <stddef.h>

typedef struct pprt_line_reader pprt_line_reader;

/* Opens `path` without waiting for a FIFO's writer; NULL with why in
   `why` (without the path) if it cannot be opened. */
pprt_line_reader *pprt_line_reader_open(const char *path, char *why,
                                        size_t why_size);

/* The next line, without its newline and NUL-terminated, into `*line`
   (valid until the next call): 1; 0 at the stream's end; -1 with why in
   `why`: no byte came within `timeout_s` seconds, the read failed, the
   line holds a NUL byte, or a FIFO's writer stopped mid-line (a last line
   without its newline, which a regular file may have). */
int pprt_line_reader_next(pprt_line_reader *r, double timeout_s, char **line,
                          char *why, size_t why_size);

void pprt_line_reader_close(pprt_line_reader *r);

#endif
