/* Training data from arrays indexed by sample (--data), and synthetic class
   ids (--classes). */
#ifndef PPRT_DRIVER_SAMPLES_H
#define PPRT_DRIVER_SAMPLES_H

#include "driver/driver.h"

/* The arrays of --data, one per data argument of the step. */
typedef struct pprt_samples pprt_samples;

/* Reads --data's arrays and checks them against the program's data
   arguments (count, dtype, shape past the first dimension, sample count);
   false, with one line saying why in `err`, if they cannot fill them. */
bool pprt_samples_load(pprt_driver *d, char *err, size_t err_size);
void pprt_samples_free(pprt_samples *s);
/* Fills INPUT/TARGET buffer `b` with the samples of global rows
   [first_row, first_row + dims[0]) of step `step` (pprt_sample_index). */
void pprt_samples_fill(pprt_driver *d, const pprt_buffer_desc *b, int64_t step,
                       int64_t first_row, void *out);

/* The sample that global row `row` of 0-based step `step` reads, with
   `batch` rows a step and `num_samples` >= `batch` samples: an epoch is
   S = num_samples / batch steps, and step `step` of epoch e = step / S
   takes positions [(step mod S) * batch, + batch) of a permutation of the
   samples ordered by the hash of (seed, e, sample); the num_samples mod
   batch last of each permutation are left out (drop_last). `order` caches
   one epoch's permutation. */
typedef struct pprt_epoch_order {
  int64_t epoch; /* -1: none cached */
  int64_t *samples;
} pprt_epoch_order;
int64_t pprt_sample_index(pprt_epoch_order *order, uint64_t seed,
                          int64_t num_samples, int64_t batch, int64_t step,
                          int64_t row);

/* Fills integer buffer `b` (i32 or i64) with synthetic class ids drawn
   uniformly from [0, --classes), from a hash of (seed, step, argument,
   row, element). */
void pprt_class_ids_fill(const pprt_driver *d, const pprt_buffer_desc *b,
                         int64_t step, int64_t first_row, void *out);

#endif
