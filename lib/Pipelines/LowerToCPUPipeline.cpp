//===- LowerToCPUPipeline.cpp - from a schedule to the LLVM dialect -------===//
//
// Builds pp-lower-to-cpu in named phases: tensor-level stage-code
// optimisation, bufferization, buffer-level rewrites with the runtime calls,
// and the conversion to the LLVM dialect. Each pp pass gets the pipeline's
// options of the same name (forwardOptions).
//
//===----------------------------------------------------------------------===//

#include "ForwardOptions.h"

#include "pp/Conversion/Passes.h"
#include "pp/Pipelines/Passes.h"
#include "pp/StageCode/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::pp;

void pp::buildStageCodeOptimizationPhase(
    OpPassManager &pm, const LowerToCPUPipelineOptions &options) {
  // Scalar resources as literals, which a rank-0 memref.global lowers from.
  pm.addNestedPass<func::FuncOp>(createPPInlineScalarResources());
  // x^n with a constant n (PyTorch's `x ** 2`) as multiplications: a
  // vectorized math.fpowi would take a vector exponent, which LLVM's powi
  // intrinsic does not.
  pm.addNestedPass<func::FuncOp>(math::createMathExpandOpsPass({{"fpowi"}}));
  if (options.approximateMath)
    pm.addNestedPass<func::FuncOp>(createPPApproximateMath());
  if (options.factorContractions)
    pm.addNestedPass<func::FuncOp>(createPPFactorContractions());
  if (options.fuseElementwise)
    pm.addNestedPass<func::FuncOp>(createPPFuseElementwise());
  // A split's gradient as its pieces' gradients side by side.
  pm.addNestedPass<func::FuncOp>(createPPFoldPaddedSums());
  // After fusion, which can make two results one value (a sum into zeros
  // replaced by its term).
  pm.addNestedPass<func::FuncOp>(createPPCopyRepeatedResults());
  PPSelectGemmOptions select;
  // bf16 inputs are a property of the GEMM entry's calls.
  select.gemm = options.precision == GemmPrecision::BF16 ? GemmChoice::Library
                                                         : options.gemm;
  pm.addPass(forwardOptions(options, createPPSelectGemm(select), {"gemm"}));
  // Biases and residuals as the library GEMMs' C.
  if (options.foldGemmAdds)
    pm.addNestedPass<func::FuncOp>(createPPFoldGemmAdds());
  pm.addNestedPass<func::FuncOp>(createPPCloneSharedFills());
}

void pp::buildBufferizationPhase(OpPassManager &pm,
                                 const LowerToCPUPipelineOptions &options) {
  // Tensor-parallel collectives, which do not bufferize, as runtime calls.
  pm.addPass(createConvertShardToRuntime());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Saved values that are reshapes of temporaries, computed in their slots.
  pm.addNestedPass<func::FuncOp>(createPPFoldResultCopies());
  if (options.staticScratch)
    pm.addPass(forwardOptions(options, createPPStaticScratch()));
  bufferization::buildBufferDeallocationPipeline(pm);
}

void pp::buildMemRefPhase(OpPassManager &pm,
                          const LowerToCPUPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createPPExpandStridedCopies());
  pm.addPass(forwardOptions(options, createConvertGemmToRuntime()));
  if (options.vectorizeContractions) {
    pm.addNestedPass<func::FuncOp>(
        forwardOptions(options, createPPVectorizeContractions()));
    // The vectorizer's transposed copies are heap buffers until here.
    if (options.staticScratch)
      pm.addPass(forwardOptions(options, createPPStaticScratch()));
  }
  if (options.vectorizeElementwise) {
    pm.addPass(forwardOptions(options, createPPVectorizeElementwise()));
  }
  // Before the runtime calls: the outliner proves buffers distinct by the
  // slots of the stage functions' arguments, which convert-pp-to-runtime
  // replaces by a table of the buffers.
  if (options.outlineLoopNests)
    pm.addPass(createPPOutlineLoopNests());
  if (options.parallelLoops) {
    PPParallelizeLoopNestsOptions parallelize;
    parallelize.minWork = options.parallelMinWork;
    pm.addPass(createPPParallelizeLoopNests(parallelize));
  }
  pm.addPass(forwardOptions(options, createConvertPPToRuntime()));
  pm.addPass(createPPDropUnusedStageFunctions());
  pm.addPass(createSymbolDCEPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
}

void pp::buildToLLVMPhase(OpPassManager &pm,
                          const LowerToCPUPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass());
  // omp.parallel regions; convert-to-llvm lowers the ops in them. Each
  // loop body is a memref.alloca_scope, which the canonicalizer inlines
  // where it holds no alloca (a scope of many blocks does not verify once
  // its scf.for are branches).
  if (options.parallelLoops) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // A view at a dynamic offset (a tensor-parallel block) reshaped further
  // gets its offset as affine.apply.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // Math functions LLVM has no intrinsic for (erf) become libm calls.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createPPStripAttributes());
}

void pp::buildLowerToCPUPipeline(OpPassManager &pm,
                                 const LowerToCPUPipelineOptions &options) {
  // Before the shared phase: on a GPU the scatter-adds' loop nests would
  // run on the host.
  if (options.gathers)
    pm.addNestedPass<func::FuncOp>(createPPCollapseOneHot());
  buildStageCodeOptimizationPhase(pm, options);
  buildBufferizationPhase(pm, options);
  buildMemRefPhase(pm, options);
  buildToLLVMPhase(pm, options);
}
