//===- Registration.cpp - register pp's pass pipelines --------------------===//
//
// Makes pp's pipelines available by name to pp-opt and textual pipelines.
//
//===----------------------------------------------------------------------===//

#include "pp/Pipelines/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::pp;

void pp::registerPPPipelines() {
  PassPipelineRegistration<>(
      "pp-tosa-to-linalg",
      "Lower a TOSA model to the linalg, tensor and arith ops pp reads",
      buildTosaToLinalgPipeline);
  PassPipelineRegistration<>(
      "pp-elementwise-to-linalg",
      "Turn elementwise arith and math ops on tensors into linalg.generic",
      buildElementwiseToLinalgPipeline);
  PassPipelineRegistration<SchedulePipelineOptions>(
      "pp-schedule-pipeline",
      "Split, partition, differentiate, schedule and verify a training step",
      buildSchedulePipeline);
  PassPipelineRegistration<LowerToCPUPipelineOptions>(
      "pp-lower-to-cpu",
      "Lower a verified schedule and its stage functions to the LLVM dialect "
      "for CPUs",
      buildLowerToCPUPipeline);
  // PassPipelineRegistration, with the options checked before building.
  registerPassPipeline(
      "pp-lower-to-cuda",
      "Lower a verified schedule and its stage functions to the LLVM dialect "
      "with GEMM calls and CUDA kernels for NVIDIA GPUs",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        LowerToCUDAPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error = checkLowerToCUDAOptions(options);
        if (!error.empty())
          return errorHandler("pp-lower-to-cuda: " + error);
        buildLowerToCUDAPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optionHandler) {
        optionHandler(LowerToCUDAPipelineOptions());
      });
}
