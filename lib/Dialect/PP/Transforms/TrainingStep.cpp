//===- TrainingStep.cpp - conventions of a training-step function ---------===//
//
// Shared lookups for the passes that read a training-step function.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/TrainingStep.h"

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
