//===- pp-compile-fuzzer.cpp - fuzz whole compiles to an object file ------===//
//
// Compiles the input as a model, as `pp-compile --emit=obj` would with two
// stages and two micro-batches at -O0: parsing, the pp pipelines, the
// lowering to LLVM and code generation. A rejected model is expected; a
// crash, a hang, a sanitizer report or an LLVM fatal error (which the
// compiler turns into an error, but no input may reach) is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "pp/Compiler/Compile.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

#include <string>

using namespace mlir;

/// The object file every input compiles to, one per fuzzing process.
static const std::string &getObjectPath() {
  static const std::string path =
      "/tmp/pp-compile-fuzzer-" +
      std::to_string(llvm::sys::Process::getProcessId()) + ".o";
  return path;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  pp::registerCompilerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  std::string fatal;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    std::string message = diag.str();
    if (StringRef(message).starts_with("LLVM failed"))
      fatal = message;
  });
  llvm::SourceMgr sourceMgr;
  pp::fuzz::addInput(sourceMgr, data, size, "fuzz.mlir");
  pp::CompileOptions options;
  options.schedule.numStages = 2;
  options.schedule.numMicrobatches = 2;
  options.driver.emit = pp::EmitKind::Object;
  options.driver.output = getObjectPath();
  options.driver.optLevel = 0;
  options.driver.jobs = 1;
  TimingScope timing;
  (void)pp::compileModel(sourceMgr, context, options, timing);
  llvm::sys::fs::remove(getObjectPath());
  if (!fatal.empty())
    pp::fuzz::finding("a model reached an LLVM fatal error: " + fatal);
  return 0;
}
