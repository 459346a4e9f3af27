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
#include "llvm/Support/CommandLine.h"

/// Hides the options that exist before MlirOptMain registers its own (the
/// passes, pipelines and MLIR's flags): LLVM's back ends' (AArch64, AMDGPU,
/// ...), which --help would otherwise list first, over a thousand lines.
/// --help-hidden still lists them, and they still work.
static void hideBackendOptions() {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::StringRef name = entry.first;
    llvm::cl::Option &option = *entry.second;
    if (!name.starts_with("help") && name != "version" &&
        option.getOptionHiddenFlag() == llvm::cl::NotHidden)
      option.setHiddenFlag(llvm::cl::Hidden);
  }
}

int main(int argc, char **argv) {
  // One line and exit 1 for LLVM's fatal errors (`-o /dev/full`: "IO
  // failure on output stream").
  mlir::pp::installFatalErrorHandlers("pp-opt");
  mlir::DialectRegistry registry;
  mlir::pp::registerAllDialects(registry);
  mlir::pp::registerAllPasses();
  mlir::pp::registerTestPasses();
  hideBackendOptions();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pp optimizer driver\n", registry));
}
