//===- InitAll.cpp - register everything a pp tool needs ------------------===//
//
// Registers the pp dialect, passes and pipelines next to upstream MLIR's.
//
//===----------------------------------------------------------------------===//

#include "pp/InitAll.h"
#include "pp/Conversion/Passes.h"
#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/Transforms/Parallelize/TensorShardingModels.h"
#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/Pipelines/Passes.h"
#include "pp/StageCode/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

void mlir::pp::registerAllDialects(DialectRegistry &registry) {
  registry.insert<PPDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Sharding rules for the reshapes and slices of PyTorch's lowering.
  registerTensorShardingModels(registry);
  // gpu-module-to-binary translates NVVM kernels to LLVM IR in process.
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::pp::registerAllPasses() {
  mlir::registerAllPasses();
  mlir::pp::registerPPImportPasses();
  mlir::pp::registerPPDifferentiatePasses();
  mlir::pp::registerPPSchedulePasses();
  mlir::pp::registerPPParallelizePasses();
  mlir::pp::registerPPStageCodePasses();
  mlir::pp::registerPPConversionPasses();
  mlir::pp::registerPPPipelines();
}
