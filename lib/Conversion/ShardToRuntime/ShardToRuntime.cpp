//===- ShardToRuntime.cpp - tensor-parallel collectives as pprt calls -----===//
//
// convert-shard-to-runtime: lowers the collectives and process indices that
// shard-partition leaves in stage functions to libpprt's tensor-parallel
// entry points, on tensors, before bufferization (shard ops have no
// bufferization of their own).
//
//===----------------------------------------------------------------------===//

#include "pp-abi/pprt_abi.h"
#include "pp/Conversion/Passes.h"
#include "pp/Conversion/RuntimeFunctions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::pp {
#define GEN_PASS_DEF_CONVERTSHARDTORUNTIME
#include "pp/Conversion/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {

/// Builds the runtime calls of one shard op, at the op.
class CollectiveLowering {
public:
  CollectiveLowering(Operation *op, const RuntimeFunctions &runtime,
                     SymbolTable &symbols)
      : b(op), loc(op->getLoc()), op(op), runtime(runtime), symbols(symbols) {}

  LogicalResult lower(shard::AllReduceOp reduce);
  LogicalResult lower(shard::AllGatherOp gather);
  LogicalResult lower(shard::AllSliceOp slice);
  LogicalResult lowerIndex();

private:
  FailureOr<Value> dtypeOf(Type tensorType);
  Value i64(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
  }
  /// A fresh buffer holding `tensor`'s elements, and its address.
  std::pair<Value, Value> copyToBuffer(Value tensor);
  Value allocate(RankedTensorType type);
  Value addressOf(Value buffer);
  Value readBack(Value buffer, Type tensorType) {
    return bufferization::ToTensorOp::create(b, loc, tensorType, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }
  /// This process's index in its tensor-parallel group, as an index.
  Value tensorParallelIndex() {
    Value index = runtime.tpIndex.create(b, loc, symbols, {}).getResult(0);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  }
  LogicalResult checkGrid(ArrayRef<int16_t> axes);

  OpBuilder b;
  Location loc;
  Operation *op;
  const RuntimeFunctions &runtime;
  SymbolTable &symbols;
};

} // namespace

FailureOr<Value> CollectiveLowering::dtypeOf(Type tensorType) {
  Type element = getElementTypeOrSelf(tensorType);
  std::optional<pprt_dtype> dtype;
  if (element.isF32())
    dtype = PPRT_F32;
  else if (element.isF16())
    dtype = PPRT_F16;
  else if (element.isBF16())
    dtype = PPRT_BF16;
  else if (element.isSignlessInteger(32))
    dtype = PPRT_I32;
  else if (element.isSignlessInteger(64))
    dtype = PPRT_I64;
  if (!dtype)
    return op->emitOpError("on elements of type ")
           << element << ", which the runtime's collectives do not take";
  return Value(arith::ConstantIntOp::create(b, loc, b.getI32Type(), *dtype));
}

LogicalResult CollectiveLowering::checkGrid(ArrayRef<int16_t> axes) {
  if (axes.size() == 1 && axes[0] == 0)
    return success();
  return op->emitOpError("must run on the one axis of the tensor-parallel "
                         "grid");
}

Value CollectiveLowering::allocate(RankedTensorType type) {
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()));
}

std::pair<Value, Value> CollectiveLowering::copyToBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  Value source = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                   /*read_only=*/true);
  Value buffer = allocate(type);
  memref::CopyOp::create(b, loc, source, buffer);
  return {buffer, addressOf(buffer)};
}

Value CollectiveLowering::addressOf(Value buffer) {
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), aligned);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}

/// The runtime's reduction for `kind`, where it has one.
static std::optional<pprt_reduction> reductionOf(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return PPRT_REDUCE_SUM;
  case shard::ReductionKind::Max:
    return PPRT_REDUCE_MAX;
  case shard::ReductionKind::Min:
    return PPRT_REDUCE_MIN;
  default:
    return std::nullopt;
  }
}

LogicalResult CollectiveLowering::lower(shard::AllReduceOp reduce) {
  auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
  if (!type || !type.hasStaticShape() || reduce.getResult().getType() != type)
    return reduce.emitOpError("must reduce a static tensor into its own type");
  std::optional<pprt_reduction> reduction = reductionOf(reduce.getReduction());
  if (!reduction)
    return reduce.emitOpError("reduces by ")
           << stringifyReductionKind(reduce.getReduction())
           << "; the runtime's tensor-parallel all-reduce takes sum, max and "
              "min";
  if (failed(checkGrid(reduce.getGridAxes())))
    return failure();
  FailureOr<Value> dtype = dtypeOf(type);
  if (failed(dtype))
    return failure();
  auto [buffer, address] = copyToBuffer(reduce.getInput());
  runtime.tpAllReduce.create(
      b, loc, symbols,
      {*dtype, address, i64(type.getNumElements()),
       arith::ConstantIntOp::create(b, loc, b.getI32Type(), *reduction)});
  reduce.replaceAllUsesWith(readBack(buffer, type));
  reduce.erase();
  return success();
}

/// The gathered blocks [T, local...] to the result: block i at offset
/// i * local[axis] of dimension `axis`.
static Value interleaveBlocks(OpBuilder &b, Location loc, Value blocks,
                              int64_t axis, RankedTensorType result) {
  auto type = cast<RankedTensorType>(blocks.getType());
  int64_t rank = type.getRank() - 1;
  if (axis > 0) {
    // [T, l0, .., l_{axis-1}, ...] to [l0, .., l_{axis-1}, T, ...].
    SmallVector<int64_t> permutation;
    for (int64_t d = 1; d <= axis; ++d)
      permutation.push_back(d);
    permutation.push_back(0);
    for (int64_t d = axis + 1; d <= rank; ++d)
      permutation.push_back(d);
    SmallVector<int64_t> shape = llvm::map_to_vector(
        permutation, [&](int64_t d) { return type.getDimSize(d); });
    Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    blocks = linalg::TransposeOp::create(b, loc, blocks, init, permutation)
                 .getResult()[0];
  }
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis)
      groups.push_back({d, d + 1});
    else
      groups.push_back({d < axis ? d : d + 1});
  }
  return tensor::CollapseShapeOp::create(b, loc, result, blocks, groups);
}

LogicalResult CollectiveLowering::lower(shard::AllGatherOp gather) {
  auto type = dyn_cast<RankedTensorType>(gather.getInput().getType());
  auto result = dyn_cast<RankedTensorType>(gather.getResult().getType());
  int64_t axis = gather.getGatherAxis().getSExtValue();
  if (!type || !result || !type.hasStaticShape() || !result.hasStaticShape())
    return gather.emitOpError("must gather static tensors");
  if (failed(checkGrid(gather.getGridAxes())))
    return failure();
  int64_t parts = result.getDimSize(axis) / type.getDimSize(axis);
  FailureOr<Value> dtype = dtypeOf(type);
  if (failed(dtype))
    return failure();
  Value sendAddress = copyToBuffer(gather.getInput()).second;
  SmallVector<int64_t> blocksShape{parts};
  llvm::append_range(blocksShape, type.getShape());
  auto blocksType = RankedTensorType::get(blocksShape, type.getElementType());
  Value recv = allocate(blocksType);
  runtime.tpAllGather.create(
      b, loc, symbols,
      {*dtype, sendAddress, addressOf(recv), i64(type.getNumElements())});
  Value blocks = readBack(recv, blocksType);
  gather.replaceAllUsesWith(interleaveBlocks(b, loc, blocks, axis, result));
  gather.erase();
  return success();
}

LogicalResult CollectiveLowering::lower(shard::AllSliceOp slice) {
  auto type = dyn_cast<RankedTensorType>(slice.getInput().getType());
  auto result = dyn_cast<RankedTensorType>(slice.getResult().getType());
  if (!type || !result || !result.hasStaticShape())
    return slice.emitOpError("must slice static tensors");
  if (failed(checkGrid(slice.getGridAxes())))
    return failure();
  int64_t axis = slice.getSliceAxis().getSExtValue();
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes =
      llvm::map_to_vector(result.getShape(), [&](int64_t size) -> OpFoldResult {
        return b.getIndexAttr(size);
      });
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  Value block = arith::ConstantIndexOp::create(b, loc, result.getDimSize(axis));
  offsets[axis] = Value(
      arith::MulIOp::create(b, loc, tensorParallelIndex(), block).getResult());
  slice.replaceAllUsesWith(
      tensor::ExtractSliceOp::create(b, loc, result, slice.getInput(), offsets,
                                     sizes, strides)
          .getResult());
  slice.erase();
  return success();
}

LogicalResult CollectiveLowering::lowerIndex() {
  Value index = tensorParallelIndex();
  for (Value result : op->getResults())
    result.replaceAllUsesWith(index);
  op->erase();
  return success();
}

namespace {
struct ConvertShardToRuntimePass
    : pp::impl::ConvertShardToRuntimeBase<ConvertShardToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    RuntimeFunctions runtime(&getContext());
    SymbolTable symbols(module);
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<shard::ShardDialect>(op->getDialect()) && !isa<shard::GridOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      CollectiveLowering lowering(op, runtime, symbols);
      LogicalResult lowered =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](shard::AllReduceOp o) { return lowering.lower(o); })
              .Case([&](shard::AllGatherOp o) { return lowering.lower(o); })
              .Case([&](shard::AllSliceOp o) { return lowering.lower(o); })
              .Case<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>(
                  [&](Operation *) { return lowering.lowerIndex(); })
              .Default([](Operation *op) {
                return op->emitOpError(
                    "has no lowering to the runtime's tensor-parallel calls");
              });
      if (failed(lowered))
        return signalPassFailure();
    }
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
  }
};
} // namespace
