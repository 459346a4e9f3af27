//===- TrainingStep.h - conventions of a training-step function -*- C++ -*-===//
//
// How pp reads a model: a func.func whose `pp.param` arguments are weights,
// whose other arguments are batch data, and whose single result is the loss.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_TRAININGSTEP_H
#define PP_DIALECT_PP_ANALYSIS_TRAININGSTEP_H

#include "pp/Dialect/PP/IR/PPDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::pp {

// The attributes of a training step (pp.param, pp.target, pp.microbatches,
// pp.recompute) are declared with the dialect (PPDialect.h).

/// Finds the training-step function `name`, or emits an error on `module`.
func::FuncOp lookupTrainingStep(ModuleOp module, StringRef name);

/// Whether `op` is cheap enough to re-create wherever its value is needed
/// instead of storing or sending it: constants, empty tensors, random seeds
/// and fills of those, with no values captured from outside.
bool isCheapToRecreate(Operation *op);

/// Whether `op` is re-created in every stage that uses it instead of being
/// sent between stages: cheap producers, sequence slices of the step's
/// arguments, and linalg ops computed only from cheap producers and from
/// weights (a broadcast bias).
bool isRematerializable(Operation *op);

/// Whether `op` of a training step belongs to a pipeline stage: it does real
/// work, or computes a value the step returns.
bool isStageWork(Operation &op);

/// Whether `type` is a tensor pp can differentiate and store: ranked, static
/// and of f32 elements.
bool isDifferentiableTensor(Type type);

/// Whether argument `index` of the training step is a weight.
inline bool isParameter(func::FuncOp func, unsigned index) {
  return static_cast<bool>(func.getArgAttr(index, kParamAttr));
}

/// Whether argument `index` of the training step is state the step updates.
inline bool isState(func::FuncOp func, unsigned index) {
  return static_cast<bool>(func.getArgAttr(index, kStateAttr));
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_TRAININGSTEP_H
