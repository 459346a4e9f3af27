//===- SplitReach.h - where a split of a product's output goes -*- C++ -*-===//
//
// Follows one split loop of a weight product through the ops that read its
// result, to the product that sums it away: the test Megatron's plans use
// to pair column-parallel products with their row-parallel partner.
//
//===----------------------------------------------------------------------===//

#ifndef PP_LIB_DIALECT_PP_TRANSFORMS_PARALLELIZE_SPLITREACH_H
#define PP_LIB_DIALECT_PP_TRANSFORMS_PARALLELIZE_SPLITREACH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::pp {

/// A contraction of an activation by a weight of the step (rank >= 2),
/// read as it is or through a `linalg.transpose` (PyTorch's nn.Linear),
/// that sums over some of the weight's dimensions and keeps the others.
struct WeightProduct {
  linalg::LinalgOp op;
  BlockArgument weight;
  /// For each weight dimension, the loop that indexes it.
  SmallVector<unsigned> loops;
  /// The weight's dimensions whose loops are parallel (its outputs).
  SmallVector<int64_t> outputDims;
};

/// The weight product `op` is, if it is one.
std::optional<WeightProduct> matchWeightProduct(linalg::LinalgOp op,
                                                func::FuncOp step);

/// Where splitting `column`'s weight on `dim` leads, when the split stays
/// in parallel loops up to one weight product that sums over it.
struct SplitReach {
  /// The product summing over the split, and its weight's split dimension.
  linalg::LinalgOp row;
  BlockArgument rowWeight;
  int64_t rowDim;
  /// 1-D weights read along the split on the way (biases), each with the
  /// dimension they split on.
  SmallVector<std::pair<BlockArgument, int64_t>> biases;
  /// An op on the way reading the split loop's own index, if any.
  linalg::IndexOp index;
};

/// Follows the split of `column`'s weight dimension `dim`, through linalg
/// ops and through reshapes that keep it a block split (the outermost
/// dimension of a merged or divided group); none where the split reaches
/// a reduction that is not a weight product, another op (a slice, the
/// step's results), or no product at all.
std::optional<SplitReach> reachOfSplit(const WeightProduct &column, int64_t dim,
                                       func::FuncOp step);

} // namespace mlir::pp

#endif // PP_LIB_DIALECT_PP_TRANSFORMS_PARALLELIZE_SPLITREACH_H
