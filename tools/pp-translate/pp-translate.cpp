//===- pp-translate.cpp - move pipeline schedules out of MLIR -------------===//
//
// mlir-translate for pipeline programs: exports a materialised pp.schedule
// (pp-schedule-v1 JSON, PyTorch pipelining CSV, Chrome trace, ASCII) and
// imports schedules written elsewhere (pp-schedule-v1 JSON, PyTorch CSV).
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/FatalErrors.h"
#include "pp/Target/ScheduleExport.h"
#include "pp/Target/ScheduleImport.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  // One line and exit 1 for LLVM's fatal errors (`-o /dev/full`: "IO
  // failure on output stream").
  mlir::pp::installFatalErrorHandlers("pp-translate");
  mlir::pp::registerScheduleExportTranslations();
  mlir::pp::registerScheduleImportTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "pp translation driver\n"));
}
