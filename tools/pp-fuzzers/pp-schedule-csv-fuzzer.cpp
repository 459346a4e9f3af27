//===- pp-schedule-csv-fuzzer.cpp - fuzz the PyTorch schedule CSV importer ===//
//
// Imports the input as a torch.distributed.pipelining schedule CSV; a
// schedule that imports must verify as an op (indices, placement).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "pp/Target/ScheduleImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp::fuzz::QuietContext quiet;
  llvm::SourceMgr sourceMgr;
  pp::fuzz::addInput(sourceMgr, data, size, "fuzz.csv");
  OwningOpRef<ModuleOp> module =
      pp::importScheduleFromPyTorchCSV(sourceMgr, &quiet.context);
  if (module && failed(verify(*module)))
    pp::fuzz::finding("an imported CSV schedule does not verify");
  return 0;
}
