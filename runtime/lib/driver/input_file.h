/* Opening the files a run reads (--init-weights, --resume, --tokens,
   --corpus, --data) and writes without blocking, and only when they are
   regular files. */
#ifndef PPRT_DRIVER_INPUT_FILE_H
#define PPRT_DRIVER_INPUT_FILE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Opens `path` read-only without waiting for a writer (a FIFO would block
   open() forever) and checks that it is a regular file: a FIFO, a device
   such as /dev/zero or a directory is refused, so no read can block or
   run on without end. Returns the descriptor, in blocking mode, and sets
   `*size` to the file's size; -1, with the reason (without the path) in
   `err`, if the file cannot be read. */
int pprt_open_input(const char *path, uint64_t *size, char *err,
                    size_t err_size);

/* What a file of `mode` that is not a regular one is, for messages ("a
   FIFO", "a character device", ...). */
const char *pprt_file_kind(mode_t mode);

/* Reads the regular file `path` whole into malloc'ed memory (one byte
   more, zeroed, after its end): exactly the size it had when opened, so
   a file that grows while it is read cannot make the read run on. NULL,
   with the reason in `err`, if it cannot. */
unsigned char *pprt_read_input(const char *path, size_t *size, char *err,
                               size_t err_size);

/* Opens `path` for writing, created or emptied, without waiting for a
   reader (a FIFO put there since the run checked its outputs would block
   open() forever) and only if it is a regular file. NULL, with the reason
   in `err` ("cannot create 'PATH': ..." or "cannot write 'PATH': it is
   ..."), if it cannot. */
FILE *pprt_open_output(const char *path, char *err, size_t err_size);

/* The error of a reader: the message `fmt` formats, into `err`. Returns
   false, for the reader to return. */
bool pprt_format_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The error of a reader: `prefix`, then the message `fmt` formats from
   `ap`, into `err`. Returns false, for the reader to return. */
bool pprt_input_error(char *err, size_t err_size, const char *prefix,
                      const char *fmt, va_list ap);

#endif
