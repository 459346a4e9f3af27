/* Packed rows (pp-compile --packing, docs/VariableLength.md "Packing or
   plans"): the step's samples lie back to back in rows of the context, no
   padding but at the end of the last row. Each token's target stays its
   own sample's (the token after it in the tokens), so a sample's last
   target does not cross into the next document, and the step's targets
   and weights are those of its unpacked samples; what packing changes is
   attention: without a cross-document mask a token attends to the
   documents before its own in the row. Each position's offset within its
   document is what a model that masks documents needs (its position id,
   and a document starts where the offset is 0). */
#include "driver/packing.h"

#include <stdlib.h>

int64_t *pprt_pack_rows(const pprt_context *ctx, int64_t num_samples,
                        const int64_t *length, const int64_t *start,
                        int64_t row, int64_t *num_rows, int64_t **row_length,
                        int64_t **offset) {
  int64_t tokens = 0;
  for (int64_t k = 0; k < num_samples; ++k)
    tokens += length[k];
  int64_t rows = (tokens + row - 1) / row;
  int64_t *at = pprt_xcalloc(ctx, (size_t)(rows * row), sizeof *at);
  int64_t *lengths = pprt_xcalloc(ctx, (size_t)rows, sizeof *lengths);
  int64_t *offsets = pprt_xcalloc(ctx, (size_t)(rows * row), sizeof *offsets);
  int64_t p = 0;
  for (int64_t k = 0; k < num_samples; ++k)
    for (int64_t t = 0; t < length[k]; ++t, ++p) {
      at[p] = start[k] + t;
      offsets[p] = t;
      ++lengths[p / row];
    }
  for (int64_t t = 0; p < rows * row; ++p, ++t) {
    at[p] = -1;
    offsets[p] = t;
  }
  *num_rows = rows;
  *row_length = lengths;
  *offset = offsets;
  return at;
}
