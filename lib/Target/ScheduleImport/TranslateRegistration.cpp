//===- TranslateRegistration.cpp - register the schedule importers --------===//
//
// Makes the schedule importers available to mlir-translate-style tools.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Target/ScheduleImport.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;
using namespace mlir::pp;

void mlir::pp::registerScheduleImportTranslations() {
  auto registerDialects = [](DialectRegistry &registry) {
    registry.insert<PPDialect>();
  };
  static TranslateToMLIRRegistration fromJSON(
      "import-pp-schedule-json",
      "Import a pp-schedule-v1 JSON document as a pp.schedule",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return OwningOpRef<Operation *>(
            importScheduleFromJSON(sourceMgr, context).release());
      },
      registerDialects);
  static TranslateToMLIRRegistration fromPyTorchCSV(
      "import-pytorch-csv",
      "Import a torch.distributed.pipelining schedule CSV as a pp.schedule "
      "(run pp-insert-transfers next if it has no SEND/RECV actions)",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return OwningOpRef<Operation *>(
            importScheduleFromPyTorchCSV(sourceMgr, context).release());
      },
      registerDialects);
}
