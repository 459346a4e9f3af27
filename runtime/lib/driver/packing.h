/* Packed rows (pp-compile --packing): a step's samples back to back in rows
   of the program's row length. */
#ifndef PPRT_DRIVER_PACKING_H
#define PPRT_DRIVER_PACKING_H

#include "core/core.h"

/* Packs `num_samples` samples (each `length[k]` tokens starting at
   `start[k]` in the tokens, in file order) back to back into rows of `row`
   tokens, a sample running on into the next row where one fills. Returns,
   per row and position (row-major, `row` positions a row), where that
   token lies in the tokens (-1 past the step's last token), and sets
   `*num_rows`, `*row_length` (each row's tokens) and `*offset` (per row
   and position, the token's offset within its sample, or within the
   padding after the last; the caller frees the three arrays). */
int64_t *pprt_pack_rows(const pprt_context *ctx, int64_t num_samples,
                        const int64_t *length, const int64_t *start,
                        int64_t row, int64_t *num_rows, int64_t **row_length,
                        int64_t **offset);

#endif
