//===- SlotShardings.cpp - how stage-function boundaries split ------------===//
//
// The slot sharding contract and the checks pp-shard-stages makes around
// upstream sharding propagation: each a located error where upstream would
// crash or silently compute something else.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Parallelize/SlotShardings.h"
#include "pp/Dialect/PP/IR/CloneForEachUse.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::pp;

SmallVector<shard::GridAxesAttr> pp::toSplitAxes(ArrayAttr split) {
  SmallVector<shard::GridAxesAttr> axes;
  if (!split)
    return axes;
  MLIRContext *context = split.getContext();
  for (auto dim : split.getAsRange<ArrayAttr>())
    axes.push_back(DenseI16ArrayAttr::get(
        context, llvm::map_to_vector(
                     dim.getAsRange<IntegerAttr>(),
                     [](IntegerAttr axis) { return int16_t(axis.getInt()); })));
  return axes;
}

ArrayAttr pp::toSplitAttr(MLIRContext *context,
                          ArrayRef<shard::GridAxesAttr> axes) {
  while (!axes.empty() && axes.back().empty())
    axes = axes.drop_back();
  if (axes.empty())
    return nullptr;
  Builder b(context);
  return b.getArrayAttr(
      llvm::map_to_vector(axes, [&](shard::GridAxesAttr dim) -> Attribute {
        return b.getI64ArrayAttr(llvm::map_to_vector(
            dim.asArrayRef(), [](int16_t axis) { return int64_t(axis); }));
      }));
}

/// The split `value`'s defining shard op gives it, or null if none does.
static ArrayAttr splitOfProducer(Value value) {
  auto shard = value.getDefiningOp<shard::ShardOp>();
  if (!shard)
    return nullptr;
  return toSplitAttr(value.getContext(),
                     shard::Sharding(shard.getSharding()).getSplitAxes());
}

static ArrayAttr splitOfShardOp(shard::ShardOp shard) {
  return toSplitAttr(shard.getContext(),
                     shard::Sharding(shard.getSharding()).getSplitAxes());
}

//===----------------------------------------------------------------------===//
// The contract
//===----------------------------------------------------------------------===//

SlotShardings::SlotShardings(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    auto collect = [&](DictionaryAttr attrs) {
      if (!attrs)
        return;
      auto slot = attrs.getAs<SlotAttr>(kSlotAttr);
      auto split = attrs.getAs<ArrayAttr>(kSplitAttr);
      SlotKind kind = slot ? slot.getSlot().kind : SlotKind::Loss;
      if (split && (kind == SlotKind::Param || kind == SlotKind::ParamGrad))
        record(slot, 0, split);
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      collect(func.getArgAttrDict(i));
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      collect(func.getResultAttrDict(i));
  }
}

int64_t pp::getSliceOf(func::FuncOp func) {
  auto slice = func->getAttrOfType<IntegerAttr>(kSliceAttr);
  return slice ? slice.getInt() : 0;
}

/// Whether a slot of `kind` is decided by the function producing it.
static bool isHandedOn(SlotKind kind) {
  return kind == SlotKind::Saved || kind == SlotKind::Stash ||
         kind == SlotKind::Carry || kind == SlotKind::CarryGrad;
}

SlotShardings::Key SlotShardings::key(Attribute slot, int64_t slice) const {
  auto slotAttr = dyn_cast_or_null<SlotAttr>(slot);
  if (!slotAttr)
    return {slot, 0};
  Slot s = slotAttr.getSlot();
  if (s.kind == SlotKind::ParamGrad)
    return {SlotAttr::get(slot.getContext(), Slot::param(s.index)), 0};
  // Saved and stashed values are numbered per slice; carried ones per
  // stage.
  bool perSlice = s.kind == SlotKind::Saved || s.kind == SlotKind::Stash;
  return {slot, perSlice ? slice : 0};
}

ArrayAttr SlotShardings::lookup(Attribute slot, int64_t slice) const {
  return splits.lookup(key(slot, slice));
}

bool SlotShardings::isDecided(Attribute slot, int64_t slice) const {
  auto slotAttr = dyn_cast_or_null<SlotAttr>(slot);
  if (!slotAttr || !isHandedOn(slotAttr.getSlot().kind))
    return true;
  return decided.contains(key(slot, slice));
}

void SlotShardings::record(Attribute slot, int64_t slice, ArrayAttr split) {
  decided.insert(key(slot, slice));
  if (split)
    splits[key(slot, slice)] = split;
}

//===----------------------------------------------------------------------===//
// Preparing and checking a stage function
//===----------------------------------------------------------------------===//

void pp::cloneEmptiesAndFills(func::FuncOp func) {
  SmallVector<Operation *> fills, empties;
  func.walk([&](Operation *op) {
    if (op->getNumResults() != 1 || op->getResult(0).hasOneUse() ||
        op->getResult(0).use_empty() ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return;
    if (isa<linalg::FillOp>(op))
      fills.push_back(op);
    else if (isa<tensor::EmptyOp>(op))
      empties.push_back(op);
  });
  // Fills first: their clones are further users of the empties.
  llvm::for_each(fills, pp::cloneForEachUse);
  func.walk([&](tensor::EmptyOp empty) {
    if (!empty.getResult().hasOneUse() && !empty.getResult().use_empty())
      empties.push_back(empty);
  });
  llvm::DenseSet<Operation *> seen;
  for (Operation *empty : empties)
    if (seen.insert(empty).second)
      pp::cloneForEachUse(empty);
}

static bool handlesTensors(Operation *op) {
  auto isTensor = [](Type type) { return isa<TensorType>(type); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

LogicalResult pp::checkShardingRules(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    if (!handlesTensors(&op) || isa<shard::ShardingInterface>(op) ||
        isa<shard::ShardDialect>(op.getDialect()))
      continue;
    return op.emitOpError("has no sharding rule (ShardingInterface), so "
                          "tensor parallelism cannot partition '")
           << func.getSymName() << "'";
  }
  return success();
}

/// The sharding op for `split` over `grid`, built at `b`.
static Value createSharding(OpBuilder &b, Location loc, shard::GridOp grid,
                            ArrayAttr split) {
  return shard::ShardingOp::create(
      b, loc, FlatSymbolRefAttr::get(grid.getSymNameAttr()),
      toSplitAxes(split));
}

/// Fails where `parts` does not divide a dimension `split` splits.
static LogicalResult checkDivisible(func::FuncOp func, StringRef what,
                                    unsigned index, Type type, ArrayAttr split,
                                    int64_t parts) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!split || !tensor)
    return success();
  if (split.size() > size_t(tensor.getRank()))
    return func.emitError()
           << what << " #" << index << " of type " << type << " has pp.split "
           << split << " of rank " << split.size();
  for (auto [dim, axes] : llvm::enumerate(split.getAsRange<ArrayAttr>()))
    if (!axes.empty() &&
        (tensor.isDynamicDim(dim) || tensor.getDimSize(dim) % parts != 0))
      return func.emitError()
             << what << " #" << index << " of type " << type
             << " splits dimension " << dim
             << ", which tensor-parallel=" << parts << " does not divide";
  return success();
}

LogicalResult pp::annotateBoundary(func::FuncOp func, shard::GridOp grid,
                                   const SlotShardings &contract,
                                   int64_t parts) {
  int64_t slice = getSliceOf(func);
  Block &entry = func.getBody().front();
  auto b = OpBuilder::atBlockBegin(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      continue;
    Attribute slot = func.getArgAttr(arg.getArgNumber(), kSlotAttr);
    if (!contract.isDecided(slot, slice))
      return func.emitError()
             << "argument #" << arg.getArgNumber() << " (" << slot
             << ") is read before the stage function that produces it is "
                "partitioned";
    ArrayAttr split = contract.lookup(slot, slice);
    if (failed(checkDivisible(func, "argument", arg.getArgNumber(),
                              arg.getType(), split, parts)))
      return failure();
    if (split)
      func.setArgAttr(arg.getArgNumber(), kSplitAttr, split);
    Value sharding = createSharding(b, func.getLoc(), grid, split);
    auto shard = shard::ShardOp::create(b, func.getLoc(), arg.getType(), arg,
                                        sharding, UnitAttr());
    arg.replaceAllUsesExcept(shard, shard);
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  for (OpOperand &operand : ret->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    Attribute slot = func.getResultAttr(i, kSlotAttr);
    if (!isa<RankedTensorType>(operand.get().getType()) ||
        !contract.isDecided(slot, slice))
      continue;
    ArrayAttr split = contract.lookup(slot, slice);
    if (failed(checkDivisible(func, "result", i, operand.get().getType(), split,
                              parts)))
      return failure();
    if (split)
      func.setResultAttr(i, kSplitAttr, split);
    // Right after the value, and read by all its other users (the value
    // may be read on in the stage and returned again, as a saved value):
    // upstream propagation annotates a value that has an annotation and
    // other readers a second time, and partitioning then crashes on it.
    Value value = operand.get();
    b.setInsertionPointAfterValue(value);
    Value sharding = createSharding(b, ret.getLoc(), grid, split);
    auto shard = shard::ShardOp::create(b, ret.getLoc(), value.getType(), value,
                                        sharding, UnitAttr());
    if (isa<BlockArgument>(value) || value.getDefiningOp<shard::ShardOp>())
      operand.set(shard);
    else
      value.replaceAllUsesExcept(shard, shard);
  }
  return success();
}

/// How a diagnostic names `split`: its split axes, or `whole`.
static std::string describeSplit(ArrayAttr split) {
  if (!split)
    return "whole";
  std::string text;
  llvm::raw_string_ostream(text) << split;
  return text;
}

/// Fails where `arg` is read split otherwise than its annotation. A
/// replicated argument may be read split: each part slices its block
/// locally (the one-hot tokens of a vocabulary-split embedding, a whole
/// saved input of a row-parallel weight gradient).
static LogicalResult checkArgument(func::FuncOp func, BlockArgument arg) {
  if (!arg.hasOneUse())
    return success();
  auto annotation = dyn_cast<shard::ShardOp>(*arg.getUsers().begin());
  if (!annotation)
    return success();
  ArrayAttr expected = splitOfShardOp(annotation);
  for (Operation *user : annotation->getUsers()) {
    auto read = dyn_cast<shard::ShardOp>(user);
    if (!read || !read.getAnnotateForUsers() || !expected ||
        splitOfShardOp(read) == expected)
      continue;
    Attribute slot = func.getArgAttr(arg.getArgNumber(), kSlotAttr);
    InFlightDiagnostic diag = func.emitError()
                              << "argument #" << arg.getArgNumber() << " ("
                              << slot << ") is read as "
                              << describeSplit(splitOfShardOp(read))
                              << ", but its sharding contract is " << expected;
    for (Operation *reader : read->getUsers())
      diag.attachNote(reader->getLoc()) << "read here";
    return diag;
  }
  return success();
}

/// Fails where the chain of shard ops that ends in result `index` changes
/// the split (the value is produced otherwise than its contract).
static LogicalResult checkResult(func::FuncOp func, unsigned index,
                                 Value value) {
  ArrayAttr expected = splitOfProducer(value);
  for (auto shard = value.getDefiningOp<shard::ShardOp>(); shard;
       shard = shard.getSrc().getDefiningOp<shard::ShardOp>()) {
    if (splitOfShardOp(shard) == expected)
      continue;
    InFlightDiagnostic diag = func.emitError()
                              << "result #" << index << " ("
                              << func.getResultAttr(index, kSlotAttr)
                              << ") is produced as "
                              << describeSplit(splitOfShardOp(shard))
                              << ", but its sharding contract is ";
    if (expected)
      diag << expected;
    else
      diag << "replicated";
    return diag;
  }
  return success();
}

LogicalResult pp::recordAndCheckBoundary(func::FuncOp func,
                                         SlotShardings &contract) {
  int64_t slice = getSliceOf(func);
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments())
    if (failed(checkArgument(func, arg)))
      return failure();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  for (OpOperand &operand : ret->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    Attribute slot = func.getResultAttr(i, kSlotAttr);
    if (!contract.isDecided(slot, slice)) {
      ArrayAttr split = splitOfProducer(operand.get());
      contract.record(slot, slice, split);
      if (split)
        func.setResultAttr(i, kSplitAttr, split);
    }
    if (failed(checkResult(func, i, operand.get())))
      return failure();
  }
  return success();
}

/// Whether `result` is read by exactly one `shard.shard`, its sharding.
static bool hasOneSharding(OpResult result) {
  return result.hasOneUse() && isa<shard::ShardOp>(*result.user_begin());
}

/// Whether `value` is a `tensor.empty` propagation left without a sharding:
/// it holds no values, so whole suits any reader that computes whole.
static bool isUnshardedEmpty(Value value) {
  auto result = dyn_cast<OpResult>(value);
  return result && isa<tensor::EmptyOp>(result.getOwner()) &&
         !hasOneSharding(result);
}

/// The grid of the whole shardings `op` reads its tensors under, or null
/// when one is split, not annotated, or none is annotated.
static FlatSymbolRefAttr gridOfWholeOperands(Operation *op) {
  FlatSymbolRefAttr grid;
  for (Value operand : op->getOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(operand.getType());
    if (!tensor || tensor.getRank() == 0 || isUnshardedEmpty(operand))
      continue;
    auto shard = operand.getDefiningOp<shard::ShardOp>();
    if (!shard || splitOfShardOp(shard))
      return nullptr;
    grid = shard::Sharding(shard.getSharding()).getGridAttr();
  }
  return grid;
}

/// Annotates `value`, the result of `op`, as whole on `grid` for all its
/// readers.
static void annotateWhole(Operation *op, OpResult value,
                          FlatSymbolRefAttr grid) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Value whole = shard::ShardingOp::create(b, op->getLoc(), grid,
                                          ArrayRef<shard::GridAxesAttr>{});
  auto shard = shard::ShardOp::create(b, op->getLoc(), value.getType(), value,
                                      whole, UnitAttr());
  value.replaceAllUsesExcept(shard, shard);
}

void pp::annotateWholeResults(func::FuncOp func) {
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    if (!isa<shard::ShardingInterface>(op) ||
        isa<shard::ShardDialect>(op.getDialect()))
      continue;
    FlatSymbolRefAttr grid = gridOfWholeOperands(&op);
    if (!grid)
      continue;
    // The destination a recomputing backward's stashed broadcast writes.
    for (Value operand : op.getOperands())
      if (isUnshardedEmpty(operand))
        annotateWhole(operand.getDefiningOp(), cast<OpResult>(operand), grid);
    for (OpResult result : op.getResults()) {
      auto tensor = dyn_cast<RankedTensorType>(result.getType());
      if (!tensor || tensor.getRank() == 0 || hasOneSharding(result) ||
          llvm::any_of(result.getUsers(), llvm::IsaPred<shard::ShardOp>))
        continue;
      annotateWhole(&op, result, grid);
    }
  }
}

LogicalResult pp::checkPartitionable(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    if (isa<shard::ShardDialect>(op.getDialect()))
      continue;
    for (OpResult result : op.getResults()) {
      auto tensor = dyn_cast<RankedTensorType>(result.getType());
      if (!tensor || tensor.getRank() == 0 ||
          (result.hasOneUse() && isa<shard::ShardOp>(*result.user_begin())))
        continue;
      return op.emitOpError("result #")
             << result.getResultNumber()
             << " has no single sharding after propagation in '"
             << func.getSymName()
             << "' (it is read directly or annotated twice), so upstream "
                "partitioning cannot split it";
    }
  }
  return success();
}
