//===- pp-translate.cpp - move pipeline schedules out of MLIR -------------===//
//
// mlir-translate for pipeline programs: exports a materialised pp.schedule
// as pp-schedule-v1 JSON or as a Chrome trace of its timeline.
//
//===----------------------------------------------------------------------===//

#include "pp/Target/ScheduleExport.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::pp::registerScheduleExportTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "pp translation driver\n"));
}
