//===- FatalErrors.cpp - LLVM's fatal errors as diagnostics ---------------===//
//
// A fatal-error handler that jumps back to the innermost recoverable region
// of its thread (as LLVM's CrashRecoveryContext does for clang's in-process
// cc1, without taking over the crash signals), and the regions the
// compiler runs LLVM in.
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/FatalErrors.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"

#include <csetjmp>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>

using namespace mlir;

/// The tool named in errors outside a recoverable region.
static std::string toolName = "pp";

/// Where a fatal error on this thread returns to; null outside a region.
static thread_local std::jmp_buf *recoveryPoint = nullptr;

/// The reason of the last fatal error on this thread. A fixed buffer: the
/// bad-alloc handler must not allocate.
static thread_local char fatalReason[512];

static void writeStderr(const char *text) {
  size_t size = std::strlen(text);
  while (size > 0) {
    ssize_t written = ::write(2, text, size);
    if (written <= 0)
      return;
    text += written;
    size -= written;
  }
}

/// Records `reason` and returns to the thread's recoverable region; without
/// one, prints it on one line and exits with 1 (no abort, no core).
static void handleFatalError(void *, const char *reason, bool) {
  std::strncpy(fatalReason, reason, sizeof(fatalReason) - 1);
  fatalReason[sizeof(fatalReason) - 1] = '\0';
  if (recoveryPoint)
    std::longjmp(*recoveryPoint, 1);
  writeStderr(toolName.c_str());
  writeStderr(": error: ");
  writeStderr(fatalReason);
  writeStderr("\n");
  // Removes the partial outputs registered with RemoveFileOnSignal.
  llvm::sys::RunInterruptHandlers();
  llvm::sys::Process::Exit(1, /*NoCleanup=*/true);
}

void pp::installFatalErrorHandlers(StringRef tool) {
  static std::once_flag once;
  std::call_once(once, [&] {
    toolName = tool.str();
    llvm::install_fatal_error_handler(handleFatalError);
    llvm::install_bad_alloc_error_handler(handleFatalError);
  });
}

/// Runs `fn` with a recovery point; false if a fatal error ended it. Apart
/// from runRecoverably so that no local of the caller lives across setjmp.
static bool runWithRecoveryPoint(function_ref<void()> fn) {
  std::jmp_buf point;
  std::jmp_buf *outer = recoveryPoint;
  if (setjmp(point) != 0) {
    recoveryPoint = outer;
    return false;
  }
  recoveryPoint = &point;
  fn();
  recoveryPoint = outer;
  return true;
}

LogicalResult pp::runRecoverably(Location loc,
                                 function_ref<LogicalResult()> fn) {
  installFatalErrorHandlers("pp");
  LogicalResult result = failure();
  if (runWithRecoveryPoint([&] { result = fn(); }))
    return result;
  return emitError(loc) << "LLVM failed: " << fatalReason;
}
