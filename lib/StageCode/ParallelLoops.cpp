//===- ParallelLoops.cpp - tile loops that run along parallel iterators ---===//
//
// Marks the tile loops of a linalg op's leading parallel iterators.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/ParallelLoops.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

void pp::markParallelLoops(ArrayRef<LoopLikeOpInterface> loops,
                           ArrayRef<int64_t> dims,
                           ArrayRef<utils::IteratorType> iterators) {
  for (auto [loop, dim] : llvm::zip(loops, dims)) {
    // Outside a reduction loop, iterations would race on its accumulator.
    if (iterators[dim] != utils::IteratorType::parallel)
      return;
    loop->setAttr(kParallelLoopAttr, UnitAttr::get(loop->getContext()));
  }
}
