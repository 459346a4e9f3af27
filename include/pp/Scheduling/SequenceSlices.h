//===- SequenceSlices.h - where to cut a sequence into slices ---*- C++ -*-===//
//
// The slice boundaries of Seq1F1B's sequence slicing on plain data:
// uniform, or of equal estimated work under causal attention.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SEQUENCESLICES_H
#define PP_SCHEDULING_SEQUENCESLICES_H

#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::pp::sched {

/// The work of a step along its sequence: a slice [a, b) costs
/// perToken (b - a) + perPair (b - a) b, its token-wise ops plus its
/// queries' attention over the b keys up to its end.
struct SequenceCost {
  double perToken = 0;
  double perPair = 0;
  double of(int64_t a, int64_t b) const {
    return (perToken + perPair * b) * (b - a);
  }
};

/// Slice boundaries 0 = b_0 < b_1 < ... < b_k = length, as equal as the
/// length allows (b_j = floor(j length / k)).
llvm::SmallVector<int64_t> getUniformSliceBounds(int64_t length,
                                                 int64_t slices);

/// Slice boundaries of equal cost as far as whole positions allow (later
/// slices shorter where attention dominates): the smallest largest slice
/// cost, found by bisection, each slice then as long as it may be while
/// the remaining slices keep a position each. Needs length >= slices.
llvm::SmallVector<int64_t> getBalancedSliceBounds(int64_t length,
                                                  int64_t slices,
                                                  const SequenceCost &cost);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_SEQUENCESLICES_H
