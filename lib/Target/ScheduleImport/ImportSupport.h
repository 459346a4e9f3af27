//===- ImportSupport.h - pieces the schedule importers share ----*- C++ -*-===//
//
// Locations in the imported file, and the module that holds the program
// both importers read, written through the schedule adapter.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_TARGET_SCHEDULEIMPORT_IMPORTSUPPORT_H
#define LIB_TARGET_SCHEDULEIMPORT_IMPORTSUPPORT_H

#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/SourceMgr.h"

#include <vector>

namespace mlir::pp::importer {

/// Turns byte offsets into the main buffer of a source manager into
/// file:line:column locations, so that diagnostics and the imported ops
/// point at the text they came from. A table of line starts makes each
/// lookup logarithmic: SourceMgr finds the column by scanning back to the
/// line break, which made importing a one-line (minified) file quadratic.
class SourceLocator {
public:
  SourceLocator(llvm::SourceMgr &sourceMgr, MLIRContext *context);

  /// The text of the imported file.
  StringRef getText() const { return buffer->getBuffer(); }
  /// The location of the byte at `offset` (clamped to the end of the text).
  FileLineColLoc getLoc(size_t offset) const;
  /// The name of the file without directories and extension, or "" if the
  /// input has no file name (stdin).
  StringRef getFileStem() const;

private:
  const llvm::MemoryBuffer *buffer;
  /// The offset of the first byte of each line.
  std::vector<size_t> lineStarts;
  StringAttr filename;
};

/// The symbol name of an imported schedule called `name`:
/// `<name>_schedule` in identifier characters, `imported_schedule` for an
/// empty name.
std::string getImportedScheduleSymbol(StringRef name);

/// A module holding `program` as a `pp.schedule` for `@train_step` named
/// after `spelling.name` ("imported" when empty), each op at `locate` of
/// its site.
OwningOpRef<ModuleOp> writeImportedProgram(MLIRContext *context,
                                           const sched::Program &program,
                                           ScheduleSpelling spelling,
                                           ProgramLocator locate);

} // namespace mlir::pp::importer

#endif // LIB_TARGET_SCHEDULEIMPORT_IMPORTSUPPORT_H
