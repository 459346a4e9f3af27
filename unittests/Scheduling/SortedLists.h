//===- SortedLists.h - Every sorted list of sample lengths ------*- C++ -*-===//
//
// The lists and cuts the micro-batch and step planners' tests compare
// with brute force.
//
//===----------------------------------------------------------------------===//

#ifndef PP_UNITTESTS_SCHEDULING_SORTEDLISTS_H
#define PP_UNITTESTS_SCHEDULING_SORTEDLISTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>

namespace mlir::pp::sched {

/// Calls `visit` with every non-increasing list of 1 to `most` lengths
/// drawn from `values` (given descending).
inline void
forEachSortedList(llvm::ArrayRef<int64_t> values, int64_t most,
                  llvm::function_ref<void(llvm::ArrayRef<int64_t>)> visit) {
  llvm::SmallVector<int64_t> list;
  std::function<void(size_t)> extend = [&](size_t from) {
    if (!list.empty())
      visit(list);
    if (int64_t(list.size()) == most)
      return;
    for (size_t v = from; v < values.size(); ++v) {
      list.push_back(values[v]);
      extend(v);
      list.pop_back();
    }
  };
  extend(0);
}

/// Calls `visit` with the ends of each of the 2^(n-1) cuts of `n` samples
/// into contiguous micro-batches.
inline void
forEachCut(int64_t n, llvm::function_ref<void(llvm::ArrayRef<int64_t>)> visit) {
  for (uint32_t cuts = 0; cuts < (1u << (n - 1)); ++cuts) {
    // Bit k set: a micro-batch ends after sample k.
    llvm::SmallVector<int64_t> ends;
    for (int64_t k = 0; k + 1 < n; ++k)
      if (cuts & (1u << k))
        ends.push_back(k + 1);
    ends.push_back(n);
    visit(ends);
  }
}

} // namespace mlir::pp::sched

#endif // PP_UNITTESTS_SCHEDULING_SORTEDLISTS_H
