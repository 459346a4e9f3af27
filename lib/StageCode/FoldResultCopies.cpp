//===- FoldResultCopies.cpp - results computed in their out-params --------===//
//
// pp-fold-result-copies: a result that buffer-results-to-out-params copies
// into its out-param from a reshape of a fresh allocation is computed in the
// out-param itself, and the copy goes.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPFOLDRESULTCOPIES
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

/// The static allocation `value` reshapes (collapse_shape and expand_shape
/// only), with those reshapes from the allocation's side in `chain`.
static memref::AllocOp
getReshapedAllocation(Value value, SmallVectorImpl<Operation *> &chain) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      std::reverse(chain.begin(), chain.end());
      return alloc.getType().hasStaticShape() ? alloc : memref::AllocOp();
    }
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(op))
      return {};
    chain.push_back(op);
    value = op->getOperand(0);
  }
  return {};
}

/// Whether `out` is an out-param the function writes only through `copy`,
/// in a runtime slot of its own: no other argument's buffer can be it, so
/// writing it before the copy's place clobbers nothing the function reads.
static bool isOwnOutParam(func::FuncOp fn, memref::CopyOp copy) {
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  if (!out || out.getOwner() != &fn.getBody().front() || !out.hasOneUse())
    return false;
  auto slot =
      fn.getArgAttrOfType<pp::SlotAttr>(out.getArgNumber(), pp::kSlotAttr);
  if (!slot)
    return false;
  for (unsigned arg = 0, e = fn.getNumArguments(); arg < e; ++arg) {
    auto other = fn.getArgAttrOfType<pp::SlotAttr>(arg, pp::kSlotAttr);
    if (arg != out.getArgNumber() && other && other.getSlot() == slot.getSlot())
      return false;
  }
  return true;
}

/// Whether nothing after `copy` but copies into arguments and the return
/// runs: the allocation holds its final value when the copy reads it.
static bool isAmongFinalCopies(memref::CopyOp copy) {
  for (Operation *op = copy->getNextNode(); op; op = op->getNextNode()) {
    if (auto later = dyn_cast<memref::CopyOp>(op)) {
      if (!isa<BlockArgument>(later.getTarget()))
        return false;
    } else if (!isa<func::ReturnOp>(op) || op->getNumOperands() != 0) {
      return false;
    }
  }
  return true;
}

/// The out-param seen as the allocation: `chain`'s reshapes undone in
/// reverse order; null (and nothing built) where the layouts do not come
/// back to the allocation's type.
static Value viewAsAllocation(OpBuilder &builder, Value out,
                              memref::AllocOp alloc,
                              ArrayRef<Operation *> chain) {
  SmallVector<Operation *> built;
  Value view = out;
  for (Operation *op : llvm::reverse(chain)) {
    Location loc = op->getLoc();
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(op))
      view = memref::ExpandShapeOp::create(
          builder, loc, collapse.getSrcType().getShape(), view,
          collapse.getReassociationIndices());
    else
      view = memref::CollapseShapeOp::create(
          builder, loc, view,
          cast<memref::ExpandShapeOp>(op).getReassociationIndices());
    built.push_back(view.getDefiningOp());
  }
  if (view.getType() == alloc.getType())
    return view;
  for (Operation *op : llvm::reverse(built))
    op->erase();
  return {};
}

/// Computes the result `copy` writes in its out-param; whether it did.
static bool foldCopy(func::FuncOp fn, memref::CopyOp copy) {
  SmallVector<Operation *> chain;
  memref::AllocOp alloc = getReshapedAllocation(copy.getSource(), chain);
  if (!alloc || alloc->getBlock() != copy->getBlock() ||
      !isOwnOutParam(fn, copy) || !isAmongFinalCopies(copy))
    return false;
  if (llvm::any_of(alloc->getUsers(), llvm::IsaPred<memref::DeallocOp>))
    return false;
  OpBuilder builder(alloc);
  Value view = viewAsAllocation(builder, copy.getTarget(), alloc, chain);
  if (!view)
    return false;
  copy->erase();
  alloc.replaceAllUsesWith(view);
  alloc->erase();
  return true;
}

namespace {
struct FoldResultCopies : pp::impl::PPFoldResultCopiesBase<FoldResultCopies> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    SmallVector<memref::CopyOp> copies(
        fn.getBody().front().getOps<memref::CopyOp>());
    for (memref::CopyOp copy : copies)
      foldCopy(fn, copy);
  }
};
} // namespace
