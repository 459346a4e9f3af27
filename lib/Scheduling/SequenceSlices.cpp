//===- SequenceSlices.cpp - where to cut a sequence into slices -----------===//
//
// Uniform and balanced slice boundaries (Seq1F1B's `average` and default
// split), by bisection on the largest slice cost.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/SequenceSlices.h"

#include <algorithm>

using namespace mlir::pp::sched;

llvm::SmallVector<int64_t>
mlir::pp::sched::getUniformSliceBounds(int64_t length, int64_t slices) {
  llvm::SmallVector<int64_t> bounds;
  for (int64_t j = 0; j <= slices; ++j)
    bounds.push_back(j * length / slices);
  return bounds;
}

llvm::SmallVector<int64_t>
mlir::pp::sched::getBalancedSliceBounds(int64_t length, int64_t slices,
                                        const SequenceCost &cost) {
  // The end of the longest slice from `start` costing at most `limit`.
  auto reach = [&](int64_t start, double limit) {
    int64_t lo = start, hi = length;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo + 1) / 2;
      if (cost.of(start, mid) <= limit)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  };
  auto cut = [&](double limit) {
    llvm::SmallVector<int64_t> bounds = {0};
    for (int64_t j = 0; j + 1 < slices; ++j)
      bounds.push_back(
          std::max(bounds.back() + 1, std::min(reach(bounds.back(), limit),
                                               length - (slices - 1 - j))));
    bounds.push_back(length);
    return bounds;
  };
  auto fits = [&](double limit) {
    llvm::SmallVector<int64_t> bounds = cut(limit);
    return cost.of(bounds[slices - 1], length) <= limit;
  };
  double lo = 0, hi = cost.of(0, length);
  for (int i = 0; i < 100 && hi > 0; ++i) {
    double mid = (lo + hi) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return cut(hi);
}
