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

#include "pp/Pipelines/Passes.h"

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

/// Whether a program planned per step packs its samples into rows of the
/// context instead (docs/VariableLength.md, "Packing or plans").
enum class PackingChoice {
  /// Step plans: every sample in rows of its own, padded to the shapes.
  Never,
  /// Whichever of plans and packing the step planner's costs find quicker.
  Auto,
  /// Packing, whatever it costs.
  Always,
};

/// The driver's own options: what a compile produces, where, and how LLVM
/// builds it. Declared like the pipelines' options, so that pp-compile and
/// pp.compile take them the same way (forEachCompileFlag).
struct DriverOptions : public PassPipelineOptions<DriverOptions> {
  PassOptions::Option<EmitKind> emit{
      *this, "emit", llvm::cl::desc("What to produce"),
      llvm::cl::init(EmitKind::Executable),
      llvm::cl::values(
          clEnumValN(EmitKind::Schedule, "schedule",
                     "verified schedule and stage functions (MLIR)"),
          clEnumValN(EmitKind::MLIR, "mlir", "LLVM-dialect MLIR"),
          clEnumValN(EmitKind::LLVM, "llvm",
                     "LLVM IR after LLVM's -O<n> pipeline (-O0: as "
                     "translated)"),
          clEnumValN(EmitKind::Object, "obj", "object file"),
          clEnumValN(EmitKind::Executable, "exe",
                     "executable linked with libpprt"),
          clEnumValN(EmitKind::Profile, "profile",
                     "measured per-stage costs (pp-profile-v1 JSON): builds "
                     "the program with --split-backward (unless "
                     "--split-backward=false) and runs it with --profile"))};
  /// Empty: getDefaultOutput(emit). "-" writes text to stdout.
  PassOptions::Option<std::string> output{
      *this, "output",
      llvm::cl::desc("Output file (default: 'train' for executables, '-' for "
                     "text)"),
      llvm::cl::value_desc("file"), llvm::cl::init("")};
  PassOptions::Option<int64_t> profileSteps{
      *this, "profile-steps",
      llvm::cl::desc("With --emit=profile: measured steps (default 10)"),
      llvm::cl::init(10)};
  PassOptions::Option<int64_t> profileWarmup{
      *this, "profile-warmup",
      llvm::cl::desc("With --emit=profile: unmeasured steps first (default "
                     "2)"),
      llvm::cl::init(2)};
  PassOptions::ListOption<std::string> runArgs{
      *this, "run-arg",
      llvm::cl::desc("With --emit=profile or --measure-costs: an option for "
                     "the program run (repeatable), e.g. "
                     "--run-arg=--corpus=text.txt")};
  /// Unset: on for a search (--schedule auto, greedy or exact) that builds
  /// an executable for this host without a --cost-file
  /// (measuresCosts).
  PassOptions::Option<bool> measureCosts{
      *this, "measure-costs",
      llvm::cl::desc("Schedule by the costs a profiling run measures on "
                     "this machine first (--emit=profile on the program's "
                     "ranks); default: on for --schedule auto, greedy or "
                     "exact building an executable without --cost-file"),
      llvm::cl::init(false)};
  PassOptions::Option<CompileTarget> target{
      *this, "target", llvm::cl::desc("Where stage code runs (default cpu)"),
      llvm::cl::init(CompileTarget::CPU),
      llvm::cl::values(
          clEnumValN(CompileTarget::CPU, "cpu", "the host CPU"),
          clEnumValN(CompileTarget::CUDA, "cuda",
                     "NVIDIA GPUs: cuBLAS GEMMs and generated CUDA kernels, "
                     "run under --backend cuda"))};
  /// Empty: the host's.
  PassOptions::Option<std::string> targetCPU{
      *this, "target-cpu",
      llvm::cl::desc("CPU to generate code for (default: this host's; e.g. "
                     "x86-64-v3 for a portable binary)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("Target features, e.g. +avx2,+fma (default: the host's, "
                     "or the CPU's own with --target-cpu)"),
      llvm::cl::init("")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimisation level 0-3 of stage code (default 3; "
                     "the schedule driver gets at most 1)"),
      llvm::cl::init(3)};
  /// `MODEL:MB[,MB...]`: shape variant k (the k-th occurrence) is MODEL,
  /// the same model at another (rows, length) bucket, and runs the listed
  /// micro-batches; the others run the main model's (docs/VariableLength.md).
  PassOptions::ListOption<std::string> variants{
      *this, "variant",
      llvm::cl::desc("MODEL:MB[,MB...]: the model at another shape, run by "
                     "the listed micro-batches (repeatable)")};
  /// An index of sample lengths, one line per step: every step's
  /// micro-batches and schedule planned ahead at the variants' shapes.
  PassOptions::Option<std::string> stepPlans{
      *this, "step-plans",
      llvm::cl::desc("FILE: an index of sample lengths (one line per step); "
                     "cut each step's samples into micro-batches at the "
                     "--variant shapes and schedule each step ahead")};
  /// Packing changes what a model learns (documents attend to the ones
  /// before them in a row), so it is asked for, never assumed.
  PassOptions::Option<PackingChoice> packing{
      *this, "packing",
      llvm::cl::desc("With --step-plans: pack each step's samples into rows "
                     "of the longest shape instead of planning them (default "
                     "never)"),
      llvm::cl::init(PackingChoice::Never),
      llvm::cl::values(
          clEnumValN(PackingChoice::Never, "never",
                     "step plans: each sample in a row of its own"),
          clEnumValN(PackingChoice::Auto, "auto",
                     "whichever the step planner's costs find quicker"),
          clEnumValN(PackingChoice::Always, "always",
                     "packed rows; documents attend to the ones before them "
                     "in a row"))};
  /// 0: one per core.
  PassOptions::Option<unsigned> jobs{
      *this, "jobs",
      llvm::cl::desc("Threads that optimise and compile the module's parts "
                     "(default 0: one per core; --time-passes: 1)"),
      llvm::cl::init(0)};
};

/// Every option of a compile: the registered pipelines' options, which
/// are the one declaration of each, and the driver's. The defaults are
/// pp-compile's.
struct CompileOptions {
  /// pp-schedule-pipeline's. Unset num-ranks is one per stage (a profile:
  /// one process); unset schedule is 1f1b, or looped-bfs for a profile of
  /// several stages per rank.
  SchedulePipelineOptions schedule;
  /// pp-lower-to-cpu's; with CompileTarget::CUDA its tensor-level options
  /// (StageCodePipelineOptions) go to pp-lower-to-cuda. vector-bits is the
  /// target machine's.
  LowerToCPUPipelineOptions cpu;
  /// pp-lower-to-cuda's own (chip, ...), with CompileTarget::CUDA.
  LowerToCUDAPipelineOptions cuda;
  DriverOptions driver;

  /// Called on every pass manager before it runs (pp-compile applies
  /// MLIR's command-line pass manager options there).
  std::function<LogicalResult(PassManager &)> configurePassManager;
};

/// How pp-compile spells an option of CompileOptions, and how pp.compile
/// names it.
struct CompileFlag {
  /// pp-compile's flag without dashes, e.g. `stages`.
  llvm::StringRef flag;
  /// pp.compile's keyword argument, e.g. `stages`; empty where only
  /// pp-compile takes the option.
  llvm::StringRef keyword;
  /// The heading pp-compile --help lists it under.
  llvm::StringRef group;
  /// The value follows the flag directly (`-O3`).
  bool prefix = false;
  /// For a list: each occurrence is one element, commas included
  /// (`--run-arg=--x=a,b`), instead of comma-separated elements.
  bool wholeElements = false;
};

/// Calls `visit(flag, option)` for every option pp-compile and pp.compile
/// take, with the pipeline or driver option it sets: the one table of
/// their spellings and --help groups. The options' types, defaults and
/// help are their declarations'. A new option is one row.
template <typename Visitor>
void forEachCompileFlag(CompileOptions &options, Visitor &&visit) {
  SchedulePipelineOptions &schedule = options.schedule;
  LowerToCPUPipelineOptions &cpu = options.cpu;
  DriverOptions &driver = options.driver;
  llvm::StringRef group;
  auto row = [&](llvm::StringRef flag, llvm::StringRef keyword, auto &option,
                 bool prefix = false, bool wholeElements = false) {
    visit(CompileFlag{flag, keyword, group, prefix, wholeElements}, option);
  };
  group = "Model and step";
  row("function", "function", schedule.function);
  row("microbatches", "microbatches", schedule.numMicrobatches);
  row("variant", "variant", driver.variants, false, /*wholeElements=*/true);
  row("step-plans", "step_plans", driver.stepPlans);
  row("packing", "packing", driver.packing);
  row("recompute", "recompute", schedule.recompute);
  group = "Parallelism and layout";
  row("stages", "stages", schedule.numStages);
  row("ranks", "ranks", schedule.numRanks);
  row("data-parallel", "replicas", schedule.numReplicas);
  row("zero", "zero", schedule.zero);
  row("zero-gather", "zero_gather", cpu.zeroGather);
  row("tensor-parallel", "tensor_parallel", schedule.tensorParallel);
  row("vocabulary-parallel", "vocabulary_parallel",
      schedule.vocabularyParallel);
  row("devices", "devices", schedule.devices);
  row("plan-optimizer", "plan_optimizer", schedule.planOptimizer);
  row("plan-zero", "plan_zero", schedule.planZero);
  row("device", "device", schedule.device);
  row("device-file", "device_file", schedule.deviceFile);
  row("cost-file", "cost_file", schedule.costFile);
  row("memory-cap", "memory_cap", schedule.memoryCap);
  group = "Schedule";
  row("schedule", "schedule", schedule.schedule);
  row("measure-costs", "measure_costs", driver.measureCosts);
  row("split-backward", "split_backward", schedule.splitBackward);
  row("semantics", "semantics", schedule.semantics);
  row("slices", "slices", schedule.slices);
  row("slice-split", "slice_split", schedule.sliceSplit);
  group = "Stage code and target";
  row("approximate-math", "approximate_math", cpu.approximateMath);
  row("static-scratch", "static_scratch", cpu.staticScratch);
  row("gathers", "gathers", cpu.gathers);
  row("gemm", "gemm", cpu.gemm);
  row("precision", "precision", cpu.precision);
  row("vectorize-contractions", "vectorize_contractions",
      cpu.vectorizeContractions);
  row("batch-by-product", "batch_by_product", cpu.batchByProduct);
  row("wide-tile-vectors", "wide_tile_vectors", cpu.wideTileVectors);
  row("factor-contractions", "factor_contractions", cpu.factorContractions);
  row("fuse-elementwise", "fuse_elementwise", cpu.fuseElementwise);
  row("fold-gemm-adds", "fold_gemm_adds", cpu.foldGemmAdds);
  row("vectorize-elementwise", "vectorize_elementwise",
      cpu.vectorizeElementwise);
  row("outline-loop-nests", "outline_loop_nests", cpu.outlineLoopNests);
  row("parallel-loops", "parallel_loops", cpu.parallelLoops);
  row("parallel-min-work", "parallel_min_work", cpu.parallelMinWork);
  row("cuda-chip", "cuda_chip", options.cuda.chip);
  row("target", "target", driver.target);
  row("target-cpu", "target_cpu", driver.targetCPU);
  row("target-features", "target_features", driver.targetFeatures);
  row("O", "opt_level", driver.optLevel, /*prefix=*/true);
  row("jobs", "jobs", driver.jobs);
  group = "Profiling and output";
  row("o", "output", driver.output);
  row("emit", "", driver.emit);
  row("profile-steps", "", driver.profileSteps);
  row("profile-warmup", "", driver.profileWarmup);
  row("run-arg", "run_arg", driver.runArgs, false, /*wholeElements=*/true);
}

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
  /// Processes per pipeline rank splitting its weights.
  int64_t tensorParallel = 1;
  std::vector<CompiledParam> params;
  /// The verified `pp.schedule`, alone in a module, in MLIR's text form.
  std::string scheduleIR;
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
/// pp-compile spells it, e.g. `--ranks`) or the output file. The output
/// must not be the model at `modelPath` (when given) or a cost or device
/// file.
LogicalResult checkCompileOptions(MLIRContext &context,
                                  const CompileOptions &options,
                                  StringRef modelPath = "");

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
