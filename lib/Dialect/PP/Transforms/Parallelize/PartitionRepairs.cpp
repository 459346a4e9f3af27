//===- PartitionRepairs.cpp - what upstream partitioning gets wrong -------===//
//
// Rewrites of a propagated stage function that keep upstream
// `shard-partition` from crashing on, or silently miscompiling, pp's IR.
//
//===----------------------------------------------------------------------===//

#include "PartitionRepairs.h"
#include "pp/Dialect/PP/Transforms/Parallelize/SlotShardings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::pp;

void pp::sinkCapturedConstants(func::FuncOp func) {
  func.walk([&](linalg::LinalgOp op) {
    Region &body = op->getRegion(0);
    if (body.empty())
      return;
    OpBuilder b = OpBuilder::atBlockBegin(&body.front());
    llvm::DenseMap<Value, Value> copies;
    body.walk([&](Operation *inner) {
      for (OpOperand &use : inner->getOpOperands()) {
        Operation *def = use.get().getDefiningOp();
        if (!def || body.isAncestor(def->getParentRegion()) ||
            !def->hasTrait<OpTrait::ConstantLike>())
          continue;
        Value &copy = copies[use.get()];
        if (!copy)
          copy = b.clone(*def)->getResult(0);
        use.set(copy);
      }
    });
  });
}

/// The loops of `op` that one of its annotated operands splits.
static llvm::SmallDenseSet<unsigned> splitLoopsOf(linalg::LinalgOp op) {
  llvm::SmallDenseSet<unsigned> loops;
  for (OpOperand &operand : op->getOpOperands()) {
    auto shard = operand.get().getDefiningOp<shard::ShardOp>();
    if (!shard || !isa<RankedTensorType>(operand.get().getType()))
      continue;
    ArrayAttr split = toSplitAttr(
        op->getContext(), shard::Sharding(shard.getSharding()).getSplitAxes());
    if (!split)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [dim, axes] : llvm::enumerate(split.getAsRange<ArrayAttr>()))
      if (!axes.empty() && dim < map.getNumResults())
        if (auto loop = dyn_cast<AffineDimExpr>(map.getResult(dim)))
          loops.insert(loop.getPosition());
  }
  return loops;
}

/// The block size `linalg.index` ops of split loops carry through
/// partitioning (inside pp-shard-stages only, hence no `pp.` name).
static constexpr llvm::StringLiteral kSplitBlockAttr = "tp_split_block";

void pp::markSplitIndices(func::FuncOp func, shard::GridOp grid) {
  int64_t parts = grid.getShape()[0];
  func.walk([&](linalg::LinalgOp op) {
    llvm::SmallDenseSet<unsigned> split = splitLoopsOf(op);
    if (split.empty())
      return;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    Builder b(op->getContext());
    op->getRegion(0).walk([&](linalg::IndexOp index) {
      if (split.contains(index.getDim()))
        index->setAttr(kSplitBlockAttr,
                       b.getIndexAttr(ranges[index.getDim()] / parts));
    });
  });
}

void pp::offsetSplitIndices(func::FuncOp func, shard::GridOp grid) {
  SmallVector<linalg::IndexOp> marked;
  func.walk([&](linalg::IndexOp index) {
    if (index->hasAttr(kSplitBlockAttr))
      marked.push_back(index);
  });
  for (linalg::IndexOp index : marked) {
    auto block = index->getAttrOfType<IntegerAttr>(kSplitBlockAttr);
    index->removeAttr(kSplitBlockAttr);
    // Outside the op: its body is a loop nest's innermost code.
    Operation *op = index->getParentOfType<linalg::LinalgOp>();
    OpBuilder outside(op);
    Location loc = index.getLoc();
    Value process = shard::ProcessLinearIndexOp::create(outside, loc, grid);
    Value size = arith::ConstantIndexOp::create(outside, loc, block.getInt());
    Value start = arith::MulIOp::create(outside, loc, process, size);
    OpBuilder inside(index->getBlock(), ++Block::iterator(index));
    auto global = arith::AddIOp::create(inside, loc, index, start);
    index.getResult().replaceAllUsesExcept(global, global);
  }
}
