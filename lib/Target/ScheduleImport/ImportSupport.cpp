//===- ImportSupport.cpp - pieces the schedule importers share ------------===//
//
// Source locations and the module both importers write.
//
//===----------------------------------------------------------------------===//

#include "ImportSupport.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::importer;

SourceLocator::SourceLocator(llvm::SourceMgr &sourceMgr, MLIRContext *context)
    : buffer(sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())),
      filename(StringAttr::get(context, buffer->getBufferIdentifier())) {
  StringRef text = getText();
  lineStarts.push_back(0);
  for (size_t i = 0, e = text.size(); i < e; ++i)
    if (text[i] == '\n')
      lineStarts.push_back(i + 1);
}

FileLineColLoc SourceLocator::getLoc(size_t offset) const {
  offset = std::min(offset, getText().size());
  auto next = llvm::upper_bound(lineStarts, offset);
  size_t line = next - lineStarts.begin();
  size_t column = offset - *std::prev(next) + 1;
  return FileLineColLoc::get(filename, line, column);
}

StringRef SourceLocator::getFileStem() const {
  StringRef name = filename.getValue();
  // mlir-translate names standard input "<stdin>".
  if (name.empty() || name == "-" || name.starts_with("<"))
    return "";
  return llvm::sys::path::stem(name);
}

std::string importer::getImportedScheduleSymbol(StringRef name) {
  if (name.empty())
    return "imported_schedule";
  std::string symbol;
  // A bare MLIR identifier starts with a letter or an underscore.
  if (!llvm::isAlpha(name.front()) && name.front() != '_')
    symbol += '_';
  for (char c : name)
    symbol += llvm::isAlnum(c) ? c : '_';
  return symbol + "_schedule";
}

OwningOpRef<ModuleOp> importer::writeImportedProgram(
    MLIRContext *context, const sched::Program &program,
    ScheduleSpelling spelling, ProgramLocator locate) {
  spelling.symbol = getImportedScheduleSymbol(spelling.name);
  if (spelling.name.empty())
    spelling.name = "imported";
  OwningOpRef<ModuleOp> module = ModuleOp::create(locate({}));
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  writeProgram(builder, program, spelling, locate);
  return module;
}
