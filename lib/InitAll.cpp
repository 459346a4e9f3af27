//===- InitAll.cpp - register everything a pp tool needs ------------------===//
//
// Registers the pp dialect, passes and pipelines next to upstream MLIR's.
//
//===----------------------------------------------------------------------===//

#include "pp/InitAll.h"
#include "pp/Conversion/Passes.h"
#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/Pipelines/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

void mlir::pp::registerAllDialects(DialectRegistry &registry) {
  registry.insert<PPDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
}

void mlir::pp::registerAllPasses() {
  mlir::registerAllPasses();
  mlir::pp::registerPPPasses();
  mlir::pp::registerPPConversionPasses();
  mlir::pp::registerPPPipelines();
}
