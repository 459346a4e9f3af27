//===- FatalErrors.h - LLVM's fatal errors as diagnostics -------*- C++ -*-===//
//
// LLVM ends the process on a fatal error (`LLVM ERROR: ...`, then abort or
// exit), which would end the Python interpreter that called pp.compile. The
// compiler runs LLVM inside recoverable regions instead: a fatal error there
// ends the region with an MLIR error, and elsewhere one line and exit 1.
//
//===----------------------------------------------------------------------===//

#ifndef PP_COMPILER_FATALERRORS_H
#define PP_COMPILER_FATALERRORS_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

namespace mlir::pp {

/// Installs LLVM's fatal-error and bad-alloc handlers (once per process):
/// inside runRecoverably they end that region; elsewhere they print
/// `<tool>: error: <reason>` and exit with 1 without aborting.
void installFatalErrorHandlers(StringRef tool);

/// Runs `fn` on this thread; an LLVM fatal error or failed allocation in it
/// ends it early with an error at `loc` that quotes LLVM's reason. What
/// `fn` held when it ended is leaked, not freed. Crashes stay crashes.
LogicalResult runRecoverably(Location loc, function_ref<LogicalResult()> fn);

} // namespace mlir::pp

#endif // PP_COMPILER_FATALERRORS_H
