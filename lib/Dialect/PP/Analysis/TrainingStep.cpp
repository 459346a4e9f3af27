//===- TrainingStep.cpp - conventions of a training-step function ---------===//
//
// Shared lookups for the passes that read a training-step function.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

func::FuncOp mlir::pp::lookupTrainingStep(ModuleOp module, StringRef name) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func) {
    module.emitError("no training-step function named '") << name << "'";
    return nullptr;
  }
  if (!func.getBody().hasOneBlock()) {
    func.emitError("the training step must be a single block");
    return nullptr;
  }
  return func;
}

bool mlir::pp::isCheapToRecreate(Operation *op) {
  if (!op)
    return false;
  // A random seed depends on the action's micro-batch only, so every stage
  // and backward that re-creates it reads the forward's.
  if (op->hasTrait<OpTrait::ConstantLike>() ||
      isa<tensor::EmptyOp, RandomSeedOp>(op))
    return true;
  if (!isa<linalg::FillOp>(op))
    return false;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return captured.empty() && llvm::all_of(op->getOperands(), [](Value v) {
           return isCheapToRecreate(v.getDefiningOp());
         });
}

bool mlir::pp::isDifferentiableTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

/// Whether `op` is a sequence slice of a step argument (pp-split-sequence's
/// data pieces): every stage holds the data, so a stage reading a piece
/// cuts it itself rather than receiving it as an activation (whose
/// gradient it would send back).
static bool isSequencePiece(Operation *op) {
  auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
  return slice && slice->hasAttr(pp::kSliceAttr) &&
         isa<BlockArgument>(slice.getSource()) &&
         isa<func::FuncOp>(slice->getParentOp());
}

/// Ops re-created in every stage that uses them instead of being sent
/// between stages: cheap producers, sequence slices of the data, and
/// linalg ops computed only from cheap producers and from weights (a
/// broadcast bias). Keeping the latter next to their consumers keeps every
/// weight in a single stage.
bool mlir::pp::isRematerializable(Operation *op) {
  if (isCheapToRecreate(op) || isSequencePiece(op))
    return true;
  if (!isa<linalg::LinalgOp>(op))
    return false;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return captured.empty() && llvm::all_of(op->getOperands(), [](Value v) {
           if (auto arg = dyn_cast<BlockArgument>(v)) {
             auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
             return func && isParameter(func, arg.getArgNumber());
           }
           // Work on the data is stage work.
           Operation *def = v.getDefiningOp();
           return def && !isSequencePiece(def) && isRematerializable(def);
         });
}

/// Whether `op` belongs to a stage: it does real work, or computes a value
/// the step returns (which the last stage must then produce). A constant
/// that a region yields (a tensor.pad's padding value) is no result.
bool mlir::pp::isStageWork(Operation &op) {
  return !isRematerializable(&op) ||
         llvm::any_of(op.getUsers(), [&](Operation *user) {
           return user->hasTrait<OpTrait::IsTerminator>() &&
                  user->getBlock() == op.getBlock();
         });
}
