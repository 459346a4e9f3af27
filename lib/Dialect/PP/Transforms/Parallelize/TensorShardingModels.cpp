//===- TensorShardingModels.cpp - sharding rules for tensor ops ----------===//
//
// ShardingInterface external models for the reshapes and slices that
// torch-mlir's lowering of nn.Linear, heads and fused projections leaves
// between linalg ops, which upstream `shard` has no rules for.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Parallelize/TensorShardingModels.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::shard;

/// Maps for `op`'s operands and results: `shaped` for the tensors in
/// order, an empty map (a scalar) for the others.
static SmallVector<AffineMap> mapsFor(Operation *op, unsigned loops,
                                      ArrayRef<AffineMap> shaped) {
  SmallVector<AffineMap> maps;
  auto next = shaped.begin();
  auto mapOf = [&](Type type) {
    if (isa<RankedTensorType>(type) && next != shaped.end())
      return *next++;
    return AffineMap::get(loops, 0, op->getContext());
  };
  for (Type type : op->getOperandTypes())
    maps.push_back(mapOf(type));
  for (Type type : op->getResultTypes())
    maps.push_back(mapOf(type));
  return maps;
}

/// Upstream's option from the annotations, with the loops `keep` rejects
/// left whole (an operand split on one is gathered first).
static FailureOr<ShardingOption>
optionKeeping(Operation *op, ArrayRef<Sharding> operandShardings,
              ArrayRef<Sharding> resultShardings,
              llvm::function_ref<bool(unsigned)> keep) {
  FailureOr<ShardingOption> option = shard::detail::defaultGetShardingOption(
      op, operandShardings, resultShardings);
  if (failed(option))
    return failure();
  for (auto [loop, axes] : llvm::enumerate(option->shardingArray))
    if (!keep(loop))
      axes.clear();
  removeTrailingEmptySubArray(option->shardingArray);
  // A whole operand or result decides too: upstream would leave the op
  // without annotations, and a reshape returned as it is (a saved value)
  // then has no sharding to partition it by.
  if (option->empty)
    for (const Sharding &sharding :
         llvm::concat<const Sharding>(operandShardings, resultShardings))
      if (sharding && sharding.getGridAttr()) {
        option->empty = false;
        option->grid = sharding.getGridAttr();
        break;
      }
  return option;
}

/// The type of `op`'s one result in each process under `sharding`.
static Type localResultType(Operation *op, const Sharding &sharding,
                            SymbolTableCollection &symbolTable) {
  GridOp grid = getGrid(op, sharding.getGridAttr(), symbolTable);
  return shardType(op->getResult(0).getType(), grid, sharding);
}

static bool isSplit(const Sharding &sharding) {
  return sharding && llvm::any_of(sharding.getSplitAxes(),
                                  [](GridAxesAttr a) { return !a.empty(); });
}

namespace {
/// The models' common `partition`: upstream's replicated partition where
/// the result is not split, else the model's `partitionSplit`, which builds
/// the op on the local blocks and returns its result.
template <typename Model, typename OpTy>
struct SplitPartitionModel
    : public ShardingInterface::ExternalModel<Model, OpTy> {
  LogicalResult partition(Operation *op, ArrayRef<Value> partitionedOperands,
                          ArrayRef<Sharding> operandShardings,
                          ArrayRef<Sharding> resultShardings,
                          IRMapping &partitionMap,
                          SymbolTableCollection &symbolTable,
                          OpBuilder &builder) const {
    if (!isSplit(resultShardings[0])) {
      partitionFullyReplicatedOperation(*op, partitionedOperands,
                                        operandShardings, resultShardings,
                                        partitionMap, symbolTable, builder);
      return success();
    }
    Value local = static_cast<const Model *>(this)->partitionSplit(
        cast<OpTy>(op), partitionedOperands, resultShardings[0], symbolTable,
        builder);
    partitionMap.map(op->getResult(0), local);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

/// A reshape's loops are the dimensions of its expanded type; the collapsed
/// type's dimension of a group is indexed by the group's outermost
/// dimension that is not of size 1, the only one whose blocks are blocks
/// of the collapsed dimension too.
template <typename OpTy>
struct ReshapeShardingModel
    : public SplitPartitionModel<ReshapeShardingModel<OpTy>, OpTy> {
  static RankedTensorType expandedType(OpTy op) {
    if constexpr (std::is_same_v<OpTy, tensor::CollapseShapeOp>)
      return op.getSrcType();
    else
      return op.getResultType();
  }

  /// For each collapsed dimension, the expanded one that carries its split.
  static SmallVector<unsigned> carriers(OpTy op) {
    RankedTensorType expanded = expandedType(op);
    SmallVector<unsigned> result;
    for (const ReassociationIndices &group : op.getReassociationIndices()) {
      auto carrier = llvm::find_if(
          group, [&](int64_t d) { return expanded.getDimSize(d) != 1; });
      result.push_back(carrier == group.end() ? group.front() : *carrier);
    }
    return result;
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(
        expandedType(cast<OpTy>(op)).getRank(), utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto reshape = cast<OpTy>(op);
    MLIRContext *context = op->getContext();
    unsigned loops = expandedType(reshape).getRank();
    AffineMap expanded = AffineMap::getMultiDimIdentityMap(loops, context);
    SmallVector<AffineExpr> dims =
        llvm::map_to_vector(carriers(reshape), [&](unsigned d) {
          return getAffineDimExpr(d, context);
        });
    AffineMap collapsed = AffineMap::get(loops, 0, dims, context);
    if constexpr (std::is_same_v<OpTy, tensor::CollapseShapeOp>)
      return mapsFor(op, loops, {expanded, collapsed});
    else
      return mapsFor(op, loops, {collapsed, expanded});
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    SmallVector<unsigned> kept = carriers(cast<OpTy>(op));
    return optionKeeping(
        op, operandShardings, resultShardings,
        [&](unsigned loop) { return llvm::is_contained(kept, loop); });
  }

  Value partitionSplit(OpTy reshape, ArrayRef<Value> partitionedOperands,
                       const Sharding &resultSharding,
                       SymbolTableCollection &symbolTable,
                       OpBuilder &builder) const {
    Type local = localResultType(reshape, resultSharding, symbolTable);
    return OpTy::create(builder, reshape.getLoc(), local,
                        partitionedOperands[0],
                        reshape.getReassociationIndices());
  }
};

//===----------------------------------------------------------------------===//
// Slices
//===----------------------------------------------------------------------===//

/// The tensor a slice op takes its part of: an extract's source, an
/// insert's destination (and result).
static RankedTensorType wholeType(tensor::ExtractSliceOp slice) {
  return slice.getSourceType();
}
static RankedTensorType wholeType(tensor::InsertSliceOp slice) {
  return slice.getDestType();
}
static RankedTensorType partType(tensor::ExtractSliceOp slice) {
  return slice.getResultType();
}
static RankedTensorType partType(tensor::InsertSliceOp slice) {
  return slice.getSourceType();
}

/// A static, rank-preserving slice (extracted or inserted) keeps the splits
/// of the dimensions it takes whole (offset 0, full size, stride 1); any
/// other dimension is whole in every process.
template <typename OpTy>
struct SliceShardingModel
    : public SplitPartitionModel<SliceShardingModel<OpTy>, OpTy> {
  static bool takesWhole(OpTy slice, unsigned dim) {
    RankedTensorType whole = wholeType(slice);
    if (partType(slice).getRank() != whole.getRank() ||
        !slice.hasUnitStride() || whole.isDynamicDim(dim))
      return false;
    std::optional<int64_t> offset =
        getConstantIntValue(slice.getMixedOffsets()[dim]);
    std::optional<int64_t> size =
        getConstantIntValue(slice.getMixedSizes()[dim]);
    return offset == 0 && size == whole.getDimSize(dim);
  }

  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(wholeType(cast<OpTy>(op)).getRank(),
                                            utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    auto slice = cast<OpTy>(op);
    unsigned loops = wholeType(slice).getRank();
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(loops, op->getContext());
    // A rank-changing slice's part is only ever whole (no loop indexes
    // its dimensions).
    AffineMap part = partType(slice).getRank() == loops
                         ? identity
                         : AffineMap::get(loops, 0, op->getContext());
    if constexpr (std::is_same_v<OpTy, tensor::ExtractSliceOp>)
      return mapsFor(op, loops, {identity, part});
    else
      return mapsFor(op, loops, {part, identity, identity});
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    auto slice = cast<OpTy>(op);
    return optionKeeping(
        op, operandShardings, resultShardings,
        [&](unsigned loop) { return takesWhole(slice, loop); });
  }

  Value partitionSplit(OpTy slice, ArrayRef<Value> partitionedOperands,
                       const Sharding &resultSharding,
                       SymbolTableCollection &symbolTable,
                       OpBuilder &builder) const {
    // Only dimensions taken whole are split: the local part of each is the
    // whole local block.
    auto localPart = cast<RankedTensorType>(partitionedOperands[0].getType());
    if constexpr (std::is_same_v<OpTy, tensor::ExtractSliceOp>)
      localPart = cast<RankedTensorType>(
          localResultType(slice, resultSharding, symbolTable));
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    for (auto [dim, size] : llvm::enumerate(localPart.getShape()))
      sizes[dim] = builder.getIndexAttr(size);
    if constexpr (std::is_same_v<OpTy, tensor::ExtractSliceOp>)
      return tensor::ExtractSliceOp::create(
          builder, slice.getLoc(), localPart, partitionedOperands[0],
          slice.getMixedOffsets(), sizes, slice.getMixedStrides());
    else
      return tensor::InsertSliceOp::create(
          builder, slice.getLoc(), partitionedOperands[0],
          partitionedOperands[1], slice.getMixedOffsets(), sizes,
          slice.getMixedStrides());
  }
};
//===----------------------------------------------------------------------===//
// Concatenation
//===----------------------------------------------------------------------===//

/// A concatenation keeps the splits of the dimensions it does not join
/// (rotary embeddings' `cat` of the halves of each head); the joined one
/// is whole.
struct ConcatShardingModel
    : public SplitPartitionModel<ConcatShardingModel, tensor::ConcatOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *op) const {
    return SmallVector<utils::IteratorType>(
        cast<tensor::ConcatOp>(op).getResultType().getRank(),
        utils::IteratorType::parallel);
  }

  SmallVector<AffineMap> getIndexingMaps(Operation *op) const {
    unsigned loops = cast<tensor::ConcatOp>(op).getResultType().getRank();
    return SmallVector<AffineMap>(
        op->getNumOperands() + 1,
        AffineMap::getMultiDimIdentityMap(loops, op->getContext()));
  }

  FailureOr<ShardingOption>
  getShardingOption(Operation *op, ArrayRef<Sharding> operandShardings,
                    ArrayRef<Sharding> resultShardings) const {
    uint64_t joined = cast<tensor::ConcatOp>(op).getDim();
    return optionKeeping(op, operandShardings, resultShardings,
                         [&](unsigned loop) { return loop != joined; });
  }

  Value partitionSplit(tensor::ConcatOp concat,
                       ArrayRef<Value> partitionedOperands, const Sharding &,
                       SymbolTableCollection &, OpBuilder &builder) const {
    return tensor::ConcatOp::create(builder, concat.getLoc(), concat.getDim(),
                                    partitionedOperands);
  }
};
} // namespace

void pp::registerTensorShardingModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::CollapseShapeOp::attachInterface<
        ReshapeShardingModel<tensor::CollapseShapeOp>>(*context);
    tensor::ExpandShapeOp::attachInterface<
        ReshapeShardingModel<tensor::ExpandShapeOp>>(*context);
    tensor::ExtractSliceOp::attachInterface<
        SliceShardingModel<tensor::ExtractSliceOp>>(*context);
    tensor::InsertSliceOp::attachInterface<
        SliceShardingModel<tensor::InsertSliceOp>>(*context);
    tensor::ConcatOp::attachInterface<ConcatShardingModel>(*context);
  });
}
