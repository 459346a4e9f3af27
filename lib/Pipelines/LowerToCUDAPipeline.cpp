//===- LowerToCUDAPipeline.cpp - from a schedule to LLVM with GPU kernels -===//
//
// Builds pp-lower-to-cuda: pp-lower-to-cpu's tensor-level and bufferization
// phases with every contraction a pprt_gemm call, then upstream MLIR's GPU
// path (parallel loops, kernel outlining, NVVM, gpu-module-to-binary,
// gpu-to-llvm) for everything else.
//
//===----------------------------------------------------------------------===//

#include "ForwardOptions.h"

#include "pp/Conversion/Passes.h"
#include "pp/Pipelines/Passes.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::pp;

#ifndef PP_CUDA_TOOLKIT
#define PP_CUDA_TOOLKIT ""
#endif

/// pp-lower-to-cpu's options for the phases both pipelines share: no
/// vectorization (kernels are scalar per thread) and no static scratch
/// (kernels cannot reach host globals or the stack).
static void setSharedOptions(const LowerToCUDAPipelineOptions &options,
                             LowerToCPUPipelineOptions &shared) {
  shared.setStageCodeOptions(options);
  shared.gemm = GemmChoice::Library;
  shared.vectorizeContractions = false;
  shared.vectorizeElementwise = false;
  shared.staticScratch = false;
}

std::string
pp::checkLowerToCUDAOptions(const LowerToCUDAPipelineOptions &options) {
  StringRef chip = options.chip;
  StringRef digits = chip.starts_with("sm_") ? chip.drop_front(3) : "";
  if (digits.ends_with("a") || digits.ends_with("f"))
    digits = digits.drop_back();
  if (digits.empty() || !llvm::all_of(digits, llvm::isDigit))
    return ("chip '" + chip +
            "' is not an NVIDIA GPU architecture such as sm_90 or sm_90a")
        .str();
  if (options.kernelOptLevel < 0 || options.kernelOptLevel > 3)
    return ("kernel-opt-level must be 0, 1, 2 or 3, got " +
            Twine(options.kernelOptLevel.getValue()))
        .str();
  return "";
}

void pp::buildKernelOutliningPhase(OpPassManager &pm,
                                   const LowerToCUDAPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createPPExpandStridedCopies());
  pm.addPass(forwardOptions(options, createConvertGemmToRuntime()));
  pm.addPass(createConvertPPToRuntime());
  pm.addPass(createPPDropUnusedStageFunctions());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createPPDeviceMemory());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(
      forwardOptions(options, createPPMapParallelLoops()));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createGpuKernelOutliningPass());
}

void pp::buildKernelBinaryPhase(OpPassManager &pm,
                                const LowerToCUDAPipelineOptions &options) {
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = options.kernelOptLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.kernelFormat;
  binary.toolkitPath = options.cudaToolkit.empty()
                           ? std::string(PP_CUDA_TOOLKIT)
                           : options.cudaToolkit.getValue();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void pp::buildHostToLLVMPhase(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // gpu-to-llvm lowers the launches with the rest of host code, so that
  // both agree on the memref descriptors passed to kernels.
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createPPStripAttributes());
}

void pp::buildLowerToCUDAPipeline(OpPassManager &pm,
                                  const LowerToCUDAPipelineOptions &options) {
  LowerToCPUPipelineOptions shared;
  setSharedOptions(options, shared);
  buildStageCodeOptimizationPhase(pm, shared);
  buildBufferizationPhase(pm, shared);
  buildKernelOutliningPhase(pm, options);
  buildKernelBinaryPhase(pm, options);
  buildHostToLLVMPhase(pm);
}
