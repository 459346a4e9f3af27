//===- Compile.h - a training step to a pipelined MPI program ---*- C++ -*-===//
//
// pp's compiler driver as a library: parses a model, runs the registered
// pipelines, emits objects with LLVM and links them against libpprt.
// pp-compile and the Python package (pp.compile) both call it; every error
// is an MLIR diagnostic, located in the model where it comes from the model
// and at a NameLoc naming the option or file otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef PP_COMPILER_COMPILE_H
#define PP_COMPILER_COMPILE_H

#include "pp/Scheduling/PartitionPlanner.h"
#include "pp/StageCode/GemmLayout.h"

#include "mlir/Support/LLVM.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class MLIRContext;
class PassManager;

namespace pp {

/// What a compile produces.
enum class EmitKind {
  /// The verified schedule and stage functions (MLIR text).
  Schedule,
  /// LLVM-dialect MLIR text.
  MLIR,
  /// LLVM IR after LLVM's -O<n> pipeline (-O0: as translated).
  LLVM,
  /// One object file.
  Object,
  /// An executable linked with libpprt.
  Executable,
  /// Measured per-stage costs (pp-profile-v1 JSON): builds the program with
  /// split backwards and runs it with --profile.
  Profile,
};

/// Where stage code runs.
enum class CompileTarget {
  /// The host CPU (pp-lower-to-cpu).
  CPU,
  /// NVIDIA GPUs (pp-lower-to-cuda): contractions through pprt_gemm
  /// (cuBLAS), other loop nests as embedded CUDA kernels; the program runs
  /// under --backend cuda.
  CUDA,
};

/// Every option of pp-compile; the defaults are pp-compile's.
struct CompileOptions {
  /// The training-step function.
  std::string function = "train_step";
  int64_t numStages = 1;
  /// Pipeline ranks; unset is one per stage (a profile: one process). 0 is
  /// one per stage too.
  std::optional<int64_t> numRanks;
  int64_t numMicrobatches = 1;
  /// The schedule (a registered generator's name); unset is 1f1b, or
  /// looped-bfs for a profile of several stages per rank.
  std::optional<std::string> schedule;
  bool splitBackward = false;
  /// Data-parallel replicas of the pipeline.
  int64_t numReplicas = 1;
  /// The stage planner's devices: one for every rank or one per rank.
  std::vector<std::string> devices;
  std::string deviceFile, costFile;
  /// The stage planner's memory caps in bytes: one for every rank or one
  /// per rank; empty for the devices' memory.
  std::vector<double> memoryCaps;
  /// Which stages' backwards recompute their forward.
  RecomputePolicy recompute = RecomputePolicy::None;

  EmitKind emit = EmitKind::Executable;
  /// Empty: getDefaultOutput(emit). "-" writes text to stdout.
  std::string output;
  /// With EmitKind::Profile: measured and unmeasured steps, and options
  /// for the program's run.
  int64_t profileSteps = 10, profileWarmup = 2;
  std::vector<std::string> runArgs;

  CompileTarget target = CompileTarget::CPU;
  /// With CompileTarget::CUDA: the GPU architecture kernels are built for.
  std::string cudaChip = "sm_90";
  /// The CPU and features code is generated for; the host's when unset.
  std::optional<std::string> targetCPU, targetFeatures;
  bool approximateMath = true;
  bool staticScratch = true;
  GemmChoice gemm = GemmChoice::Auto;
  /// What the GEMMs read A and B in; bf16 makes every contraction that
  /// maps a pprt_gemm call (it needs `gemm` auto or library).
  GemmPrecision precision = GemmPrecision::FP32;
  /// Unset: the pipeline's defaults (pp::LowerToCPUPipelineOptions).
  std::optional<bool> vectorizeContractions, factorContractions,
      fuseElementwise, vectorizeElementwise;
  /// LLVM optimisation level 0-3 of stage code.
  unsigned optLevel = 3;
  /// Threads that optimise and compile the module's parts; 0: one per core.
  unsigned jobs = 0;

  /// Called on every pass manager before it runs (pp-compile applies
  /// MLIR's command-line pass manager options there).
  std::function<LogicalResult(PassManager &)> configurePassManager;
};

/// One `pp.param` argument of the training step.
struct CompiledParam {
  /// The argument's position in the training step's signature.
  unsigned argument;
  /// Its type as MLIR prints it, e.g. `tensor<16x32xf32>`.
  std::string type;
  std::vector<int64_t> shape;
  /// The element type, e.g. `f32`.
  std::string elementType;
};

/// What a successful compile made, read from the verified schedule.
struct CompiledProgram {
  /// The file written (`-` for stdout).
  std::string output;
  /// The schedule the program runs (auto's choice for `auto`).
  std::string schedule;
  int64_t numStages = 0, numRanks = 0, numMicrobatches = 0, numReplicas = 1;
  std::vector<CompiledParam> params;
};

/// The output file a compile writes when CompileOptions::output is empty:
/// `train`, `train.o`, `profile.json`, or `-` for text.
StringRef getDefaultOutput(EmitKind emit);

/// The MPI launcher programs are built for (mpiexec of the MPI libpprt
/// links).
StringRef getMPIExec();

/// Registers the dialects and the LLVM IR translations a compile needs.
void registerCompilerDialects(DialectRegistry &registry);

/// Checks the option values and the output path before anything is
/// compiled: one error per problem, at a NameLoc naming the option (as
/// pp-compile spells it, e.g. `--ranks`) or the output file.
LogicalResult checkCompileOptions(MLIRContext &context,
                                  const CompileOptions &options);

/// Compiles the model in `sourceMgr`'s main buffer as `options` ask, into
/// `options.output`. Errors are diagnostics in `context`, whose registry
/// holds registerCompilerDialects's dialects.
FailureOr<CompiledProgram> compileModel(llvm::SourceMgr &sourceMgr,
                                        MLIRContext &context,
                                        const CompileOptions &options,
                                        TimingScope &timing);

/// Reads the model file `path` (`-` for stdin) into `sourceMgr`, which
/// must be empty, and compiles it.
FailureOr<CompiledProgram> compileModelFile(StringRef path,
                                            llvm::SourceMgr &sourceMgr,
                                            MLIRContext &context,
                                            const CompileOptions &options,
                                            TimingScope &timing);

} // namespace pp
} // namespace mlir

#endif // PP_COMPILER_COMPILE_H
