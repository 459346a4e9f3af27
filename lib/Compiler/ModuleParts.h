//===- ModuleParts.h - split a program's LLVM module for parallel builds --===//
//
// Splits the translated module into parts that LLVM optimises and compiles
// on their own, on a thread pool: the schedule driver (cold, straight-line
// runtime calls) and balanced groups of stage code.
//
//===----------------------------------------------------------------------===//

#ifndef PP_LIB_COMPILER_MODULEPARTS_H
#define PP_LIB_COMPILER_MODULEPARTS_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir::pp {

/// One part of a module, as bitcode, so that each part can be read into its
/// own LLVMContext on its own thread.
struct ModulePart {
  llvm::SmallVector<char, 0> bitcode;
  /// True for the part that holds the schedule driver functions.
  bool driver = false;
  /// Instructions in the part's definitions (its share of the work).
  size_t size = 0;
};

/// Whether `name` is one of the schedule driver functions convert-pp-to-
/// runtime emits (pp_define_program, pp_run_step, pp_run_step_rank<N>).
bool isDriverFunction(llvm::StringRef name);

/// Splits `module` into the driver part (when it has driver functions) and
/// at most `numStageParts` parts of stage code. Functions that call each
/// other directly stay in one part, so that inlining within stage code is
/// unchanged; a constant global is copied into every part that reads it (its
/// initializer stays visible to the optimiser), and so is a local function
/// that only calls declarations (a shared loop nest), and the other symbols one
/// part uses from another become hidden external symbols. `module` is
/// modified (those symbols' linkage); the parts are independent of it.
llvm::SmallVector<ModulePart> splitModule(llvm::Module &module,
                                          unsigned numStageParts);

/// The whole of `module` as one part.
ModulePart writeModule(const llvm::Module &module);

/// Reads a part into `context`, or null after an error at `loc`.
std::unique_ptr<llvm::Module> readPart(Location loc, const ModulePart &part,
                                       llvm::LLVMContext &context);

} // namespace mlir::pp

#endif // PP_LIB_COMPILER_MODULEPARTS_H
