//===- TensorShardingModels.h - sharding rules for tensor ops -*- C++ -*-===//
//
// Upstream `shard` sharding rules (ShardingInterface external models) for
// the tensor ops PyTorch's linalg lowering puts between products:
// `tensor.collapse_shape`, `tensor.expand_shape`, `tensor.extract_slice`,
// `tensor.insert_slice` and `tensor.concat`.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORSHARDINGMODELS_H
#define PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORSHARDINGMODELS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::pp {

/// Attaches the sharding rules: a reshape keeps a split of a dimension it
/// merges or divides when the split falls on the group's outermost
/// dimension (the first not of size 1), which makes the blocks of both
/// shapes the same elements; any other split is gathered first. A slice
/// keeps splits of the dimensions it takes whole, a concatenation those of
/// the dimensions it does not join; the others are gathered.
void registerTensorShardingModels(DialectRegistry &registry);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_PARALLELIZE_TENSORSHARDINGMODELS_H
