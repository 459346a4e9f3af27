//===- SortedLists.h - Every sorted list of sample lengths ------*- C++ -*-===//
//
// The lists the micro-batch and step planners' tests compare with brute
// force.
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

} // namespace mlir::pp::sched

#endif // PP_UNITTESTS_SCHEDULING_SORTEDLISTS_H
