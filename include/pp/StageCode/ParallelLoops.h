//===- ParallelLoops.h - tile loops that run along parallel iterators -----===//
//
// The mark the vectorizers leave on the tile loops of a linalg op's
// parallel iterators, which pp-parallelize-loop-nests reads.
//
//===----------------------------------------------------------------------===//

#ifndef PP_STAGECODE_PARALLELLOOPS_H
#define PP_STAGECODE_PARALLELLOOPS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace pp {

/// The discardable attribute of a loop whose iterations write disjoint
/// elements and read none another writes.
constexpr llvm::StringLiteral kParallelLoopAttr = "parallel_iterator";

/// Marks the leading loops of `loops` (outermost first; loop i runs along
/// iterator `dims[i]` of a linalg op) that run along parallel `iterators`.
void markParallelLoops(ArrayRef<LoopLikeOpInterface> loops,
                       ArrayRef<int64_t> dims,
                       ArrayRef<utils::IteratorType> iterators);

} // namespace pp
} // namespace mlir

#endif // PP_STAGECODE_PARALLELLOOPS_H
