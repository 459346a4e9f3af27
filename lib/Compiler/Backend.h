//===- Backend.h - LLVM optimisation, objects and linking -------*- C++ -*-===//
//
// The compiler's back end: from the translated LLVM module's parts to
// objects and an executable linked against libpprt. Errors are MLIR
// diagnostics at the `loc` each function takes.
//
//===----------------------------------------------------------------------===//

#ifndef PP_LIB_COMPILER_BACKEND_H
#define PP_LIB_COMPILER_BACKEND_H

#include "ModuleParts.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class TargetMachine;
} // namespace llvm

namespace mlir::pp {

struct BackendOptions {
  /// The CPU and features code is generated for; the host's when unset. A
  /// CPU without features gets that CPU's own.
  std::optional<std::string> cpu, features;
  /// LLVM optimisation level 0-3 of stage code; the driver gets at most 1.
  unsigned optLevel = 3;
  /// Threads that build the parts; 0 for one per core.
  unsigned jobs = 0;
  /// The objects call the OpenMP runtime (--parallel-loops).
  bool openmp = false;
};

/// The target machine for the host triple and `options` at -O<level>, or
/// null after an error at `loc`. Thread-safe once the native target is
/// initialised.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(Location loc, const BackendOptions &options,
                    unsigned level);

/// The width in bits of the widest vector registers `machine` generates code
/// for: 512 with AVX-512F, 256 with AVX (and AVX2), else 128 (SSE, NEON).
int64_t getVectorBits(const llvm::TargetMachine &machine);

/// Sets the target triple and data layout of `machine` on `module` (without
/// them, LLVM turns `memcpy` into byte loops).
void setTarget(llvm::Module &module, llvm::TargetMachine &machine);

/// The threads that build the module's parts. LLVM's pass timers are
/// global, so --time-passes builds on one.
unsigned getNumJobs(const BackendOptions &options);

/// Optimises every part on a thread pool, the largest first, and compiles
/// part i into objects[i] when `objects` is not empty (else leaves the
/// optimised bitcode in the part).
LogicalResult buildParts(Location loc, MutableArrayRef<ModulePart> parts,
                         ArrayRef<std::string> objects,
                         const BackendOptions &options, TimingScope &timing);

/// Links the optimised parts back into one module, or null after an error.
std::unique_ptr<llvm::Module> mergeParts(Location loc,
                                         ArrayRef<ModulePart> parts,
                                         llvm::LLVMContext &context);

/// Compiles `module` into an object file at `path`.
LogicalResult emitObject(Location loc, llvm::Module &module,
                         llvm::TargetMachine &machine, StringRef path);

/// Links `objects` with libpprt and BLAS (and the OpenMP runtime where
/// `options` say so) into the executable `path`.
LogicalResult linkExecutable(Location loc, ArrayRef<std::string> objects,
                             const BackendOptions &options, StringRef path);

/// Whether pp was built with an OpenMP runtime to link programs with.
bool hasOpenMPRuntime();

/// Reports LLVM's errors in `context` (code the target cannot generate) as
/// errors at `loc`, which it would otherwise print before exiting, and its
/// warnings as warnings.
void forwardDiagnostics(llvm::LLVMContext &context, Location loc);

/// Fails if LLVM reported an error in `context`.
LogicalResult checkDiagnostics(llvm::LLVMContext &context);

/// Flushes `os` and reports a write error once, as an error rather than
/// the fatal "IO failure on output stream" of an unchecked stream.
LogicalResult checkStream(Location loc, llvm::raw_fd_ostream &os,
                          StringRef path);

} // namespace mlir::pp

#endif // PP_LIB_COMPILER_BACKEND_H
