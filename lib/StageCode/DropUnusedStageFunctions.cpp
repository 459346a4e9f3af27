//===- DropUnusedStageFunctions.cpp - erase stage code nothing calls ------===//
//
// pp-drop-unused-stage-functions: erases the outlined stage functions that
// the lowered schedule does not call, so that they are not compiled.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/StageCode/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPDROPUNUSEDSTAGEFUNCTIONS
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

struct DropUnusedStageFunctions
    : pp::impl::PPDropUnusedStageFunctionsBase<DropUnusedStageFunctions> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (fn->hasAttr(pp::kStageAttr) &&
          SymbolTable::symbolKnownUseEmpty(fn, module))
        fn.erase();
  }
};

} // namespace
