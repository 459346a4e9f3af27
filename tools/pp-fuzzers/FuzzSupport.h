//===- FuzzSupport.h - shared pieces of pp's libFuzzer targets --*- C++ -*-===//
//
// Each target feeds one input to a reader in a fresh context whose
// diagnostics are dropped: a rejected input is the expected outcome, only a
// crash, a hang, a sanitizer report or a broken round trip is a finding.
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_PP_FUZZERS_FUZZSUPPORT_H
#define TOOLS_PP_FUZZERS_FUZZSUPPORT_H

#include "pp/Dialect/PP/IR/PPDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

/// LLVM's allocators poison and unpoison their slabs only where compiled
/// with AddressSanitizer: the prebuilt LLVM and MLIR libraries are not, so
/// their allocations from slabs that instrumented code poisoned would be
/// reported. Manual poisoning is off; ASan still checks every access.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

namespace mlir::pp::fuzz {

/// A context with the pp dialect whose diagnostics go nowhere.
struct QuietContext {
  QuietContext()
      : context(mlir::MLIRContext::Threading::DISABLED),
        handler(&context, [](mlir::Diagnostic &) {}) {
    context.loadDialect<mlir::pp::PPDialect>();
  }
  mlir::MLIRContext context;
  mlir::ScopedDiagnosticHandler handler;
};

/// A source manager holding the input as the file `name`.
inline void addInput(llvm::SourceMgr &sourceMgr, const uint8_t *data,
                     size_t size, llvm::StringRef name) {
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), name),
      llvm::SMLoc());
}

/// Ends the run with a message: libFuzzer saves the input as a crash.
[[noreturn]] inline void finding(llvm::StringRef message) {
  llvm::errs() << "pp fuzz finding: " << message << "\n";
  std::abort();
}

} // namespace mlir::pp::fuzz

#endif // TOOLS_PP_FUZZERS_FUZZSUPPORT_H
