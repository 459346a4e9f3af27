//===- pp-schedule-json-fuzzer.cpp - fuzz the pp-schedule-v1 importer -----===//
//
// Imports the input as pp-schedule-v1 JSON; a schedule that imports and
// verifies must print as IR that parses back to the same IR (costs print
// exactly). The JSON exporter's round trip is a lit test
// (test/Target/import-limits.test): linking it here would pull in every
// pass through the translation registry.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "pp/Target/ScheduleImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

static std::string print(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, OpPrintingFlags().enableDebugInfo());
  return text;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp::fuzz::QuietContext quiet;
  llvm::SourceMgr sourceMgr;
  pp::fuzz::addInput(sourceMgr, data, size, "fuzz.json");
  OwningOpRef<ModuleOp> module =
      pp::importScheduleFromJSON(sourceMgr, &quiet.context);
  if (!module || failed(verify(*module)))
    return 0;
  std::string printed = print(*module);
  OwningOpRef<ModuleOp> parsed =
      parseSourceString<ModuleOp>(printed, &quiet.context);
  if (!parsed)
    pp::fuzz::finding("an imported schedule does not parse back:\n" + printed);
  if (print(*parsed) != printed)
    pp::fuzz::finding("an imported schedule does not round-trip:\n" + printed);
  return 0;
}
