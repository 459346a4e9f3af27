//===- pp-schedule-ir-fuzzer.cpp - fuzz schedule IR through the checks ----===//
//
// Parses the input as MLIR with the pp and func dialects and runs
// pp-verify-schedule, then pp-simulate, under async and rendezvous
// semantics. The verifier and the simulator must agree: a schedule the
// verifier accepts under some semantics simulates under the same semantics
// (both prove it free of deadlocks).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "pp/Dialect/PP/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

/// Runs `pass` alone on `module`.
static LogicalResult runPass(ModuleOp module, std::unique_ptr<Pass> pass) {
  PassManager pm(module->getContext());
  pm.addPass(std::move(pass));
  return pm.run(module);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp::fuzz::QuietContext quiet;
  quiet.context.loadDialect<func::FuncDialect>();
  llvm::SourceMgr sourceMgr;
  pp::fuzz::addInput(sourceMgr, data, size, "fuzz.mlir");
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, &quiet.context);
  if (!module)
    return 0;
  for (pp::TransferSemantics semantics :
       {pp::TransferSemantics::async, pp::TransferSemantics::rendezvous}) {
    pp::PPVerifyScheduleOptions verifyOptions;
    verifyOptions.semantics = semantics;
    if (failed(runPass(*module, pp::createPPVerifySchedule(verifyOptions))))
      continue;
    pp::PPSimulateOptions simulateOptions;
    simulateOptions.semantics = semantics;
    if (failed(runPass(*module, pp::createPPSimulate(simulateOptions))))
      pp::fuzz::finding(("a schedule that verifies under " +
                         pp::stringifyTransferSemantics(semantics) +
                         " semantics does not simulate")
                            .str());
  }
  return 0;
}
