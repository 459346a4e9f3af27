//===- pp-opt.cpp - the pp optimizer driver -------------------------------===//
//
// mlir-opt for pipeline programs: the pp dialect and passes plus the upstream
// dialects and passes a model and its lowering use.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "pp/Compiler/FatalErrors.h"
#include "pp/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // One line and exit 1 for LLVM's fatal errors (`-o /dev/full`: "IO
  // failure on output stream").
  mlir::pp::installFatalErrorHandlers("pp-opt");
  mlir::DialectRegistry registry;
  mlir::pp::registerAllDialects(registry);
  mlir::pp::registerAllPasses();
  mlir::pp::registerTestPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pp optimizer driver\n", registry));
}
