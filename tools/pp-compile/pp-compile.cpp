//===- pp-compile.cpp - ahead-of-time compiler for pipelined training -----===//
//
// Compiles a training-step function into a native program that trains it
// across pipeline stages: runs pp's passes and upstream lowering in
// process, emits an object with LLVM and links it against libpprt.
//
//===----------------------------------------------------------------------===//

#include "ModuleParts.h"

#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"
#include "pp/InitAll.h"
#include "pp/Pipelines/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <atomic>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required);
static cl::opt<std::string>
    outputFile("o",
               cl::desc("Output file (default: 'train' for executables, "
                        "'-' for text)"),
               cl::value_desc("file"));
static cl::opt<int64_t> numStages("stages", cl::desc("Pipeline stages"),
                                  cl::init(1));
static cl::opt<int64_t>
    numRanks("ranks",
             cl::desc("Pipeline ranks (default: one per stage; fewer for "
                      "interleaved schedules)"),
             cl::init(0));
static cl::opt<int64_t> numMicrobatches("microbatches",
                                        cl::desc("Micro-batches per step"),
                                        cl::init(1));
static cl::opt<std::string>
    scheduleName("schedule",
                 cl::desc("Schedule (main lists the registered ones)"),
                 cl::init("1f1b"));
static cl::opt<bool> splitBackward(
    "split-backward",
    cl::desc("Run each backward as input gradient (B) then weight gradient "
             "(W)"),
    cl::init(false));
static cl::opt<int64_t> dataParallel(
    "data-parallel",
    cl::desc("Data-parallel replicas of the pipeline: the program then runs "
             "on ranks x replicas MPI processes and all-reduces each stage's "
             "weight gradients"),
    cl::init(1));
static cl::opt<std::string>
    device("device",
           cl::desc("Device the stage planner costs each pipeline rank on: "
                    "cpu or h200 for every rank, or one per rank, comma "
                    "separated (default cpu; docs/CostModel.md)"));
static cl::opt<std::string>
    deviceFile("device-file",
               cl::desc("JSON file describing every rank's device for the "
                        "stage planner (docs/CostModel.md)"),
               cl::value_desc("file"));
static cl::opt<std::string>
    costFile("cost-file",
             cl::desc("pp-profile-v1 JSON measured on the partition these "
                      "options plan: the stage planner calibrates its costs "
                      "with it and plans again (docs/CostModel.md)"),
             cl::value_desc("file"));
static cl::opt<std::string> function("function",
                                     cl::desc("Training-step function"),
                                     cl::init("train_step"));
enum class Emit { Schedule, MLIR, LLVM, Obj, Exe, Profile };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Exe),
    cl::values(clEnumValN(Emit::Schedule, "schedule",
                          "verified schedule and stage functions (MLIR)"),
               clEnumValN(Emit::MLIR, "mlir", "LLVM-dialect MLIR"),
               clEnumValN(Emit::LLVM, "llvm",
                          "LLVM IR after LLVM's -O<n> pipeline (-O0: as "
                          "translated)"),
               clEnumValN(Emit::Obj, "obj", "object file"),
               clEnumValN(Emit::Exe, "exe", "executable linked with libpprt"),
               clEnumValN(Emit::Profile, "profile",
                          "measured per-stage costs (pp-profile-v1 JSON): "
                          "builds the program with --split-backward and runs "
                          "it with --profile")));
static cl::opt<int64_t>
    profileSteps("profile-steps",
                 cl::desc("With --emit=profile: measured steps (default 10)"),
                 cl::init(10));
static cl::opt<int64_t> profileWarmup(
    "profile-warmup",
    cl::desc("With --emit=profile: unmeasured steps first (default 2)"),
    cl::init(2));
static cl::list<std::string>
    runArgs("run-arg",
            cl::desc("With --emit=profile: an option for the program run "
                     "(repeatable), e.g. --run-arg=--corpus=text.txt"));
static cl::opt<std::string> targetCPU(
    "target-cpu",
    cl::desc("CPU to generate code for (default: this host's; e.g. x86-64-v3 "
             "for a portable binary)"));
static cl::opt<std::string> targetFeatures(
    "target-features",
    cl::desc("Target features, e.g. +avx2,+fma (default: the host's, or the "
             "CPU's own with --target-cpu)"));
static cl::opt<bool> approximateMath(
    "approximate-math",
    cl::desc("Polynomial approximations of tanh, exp, expm1 and erf in stage "
             "code (default true; false: libm calls)"),
    cl::init(true));
static cl::opt<bool> staticScratch(
    "static-scratch",
    cl::desc("Stage-code temporaries in static buffers or on the stack "
             "(default true; false: on the heap, allocated every call)"),
    cl::init(true));
static cl::opt<pp::GemmChoice> gemmChoice(
    "gemm", cl::desc("Where contractions are computed (default auto)"),
    cl::init(pp::GemmChoice::Auto),
    cl::values(clEnumValN(pp::GemmChoice::Generated, "generated",
                          "MLIR-generated code for every contraction"),
               clEnumValN(pp::GemmChoice::Library, "library",
                          "pprt_gemm (a BLAS) wherever a contraction maps"),
               clEnumValN(pp::GemmChoice::Auto, "auto",
                          "per shape, by the measured rule of "
                          "bench/gemm_choice.md")));
// Its default is the pipeline's (pp::LowerToCPUPipelineOptions).
static cl::opt<bool> vectorizeContractions(
    "vectorize-contractions",
    cl::desc("Tile and vectorize generated contractions into register tiles "
             "of FMAs for the target's vector width "
             "(pp-vectorize-contractions; on by default)"));
static cl::opt<bool> fuseElementwise(
    "fuse-elementwise",
    cl::desc("Fuse elementwise ops on tensors into their consumers "
             "(pp-fuse-elementwise; on by default)"));
static cl::opt<bool> vectorizeElementwise(
    "vectorize-elementwise",
    cl::desc("Vectorize elementwise ops and reductions "
             "(pp-vectorize-elementwise; off by default)"));
static cl::opt<unsigned>
    optLevel("O",
             cl::desc("LLVM optimisation level 0-3 of stage code (default 3; "
                      "the schedule driver gets at most 1)"),
             cl::Prefix, cl::init(3));
static cl::opt<unsigned> numJobs(
    "jobs",
    cl::desc("Threads that optimise and compile the module's parts (default "
             "0: one per core; --time-passes: 1)"),
    cl::init(0));

/// The host CPU's features as a target feature string.
static std::string getHostFeatures() {
  llvm::SubtargetFeatures features;
  for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  return features.getString();
}

static llvm::CodeGenOptLevel getCodeGenOptLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

/// The ranks the program runs on: --ranks, except that a profile runs every
/// stage on one process unless --ranks is given (compute times need no
/// more). The partition is planned for --ranks and --schedule regardless, so
/// that the profile measures the stages the real run has.
static int64_t scheduledRanks() {
  return emit == Emit::Profile && !numRanks.getNumOccurrences() ? 1 : numRanks;
}

/// The schedule the program runs: --schedule, or for a profile with several
/// stages per rank and no --schedule, the looped `looped-bfs`.
static std::string scheduledName() {
  bool looped = scheduledRanks() != 0 && scheduledRanks() < numStages;
  return emit == Emit::Profile && !scheduleName.getNumOccurrences() && looped
             ? "looped-bfs"
             : scheduleName.getValue();
}

static bool hasTosaOps(ModuleOp module) {
  return module
      .walk([](Operation *op) {
        return isa<tosa::TosaDialect>(op->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Sets the options of pp-schedule-pipeline that the flags ask for.
static void setScheduleOptions(pp::SchedulePipelineOptions &options) {
  options.function = function;
  options.numMicrobatches = numMicrobatches;
  options.numStages = numStages;
  options.numRanks = scheduledRanks();
  options.schedule = scheduledName();
  options.splitBackward = splitBackward;
  options.numReplicas = dataParallel;
  options.planRanks = numRanks;
  options.planSchedule = scheduleName;
  if (!device.empty()) {
    SmallVector<StringRef> devices;
    StringRef(device).split(devices, ',');
    for (StringRef name : devices)
      options.device.push_back(name.str());
  }
  options.deviceFile = deviceFile;
  options.costFile = costFile;
}

/// Checks that `--<option>` lies in [min, max]; `meaning` explains a
/// special minimum.
static LogicalResult checkRange(const cl::opt<int64_t> &option, int64_t min,
                                int64_t max, StringRef meaning = "") {
  if (option >= min && option <= max)
    return success();
  llvm::errs() << "pp-compile: --" << option.ArgStr << " must be between "
               << min << " and " << max << meaning << ", got " << option
               << "\n";
  return failure();
}

/// A profile times B and W apart. False, after a message, for invalid
/// profiling options.
static bool configureProfile() {
  if (failed(checkRange(profileSteps, 1, INT32_MAX)) ||
      failed(checkRange(profileWarmup, 0, INT32_MAX)))
    return false;
  splitBackward = true;
  return true;
}

/// The target machine for the host triple and --target-cpu and
/// --target-features (default: the host's) at -O<level>, or null after a
/// message. Thread-safe once the native target is initialised.
static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(unsigned level) {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    llvm::errs() << "pp-compile: " << error << "\n";
    return nullptr;
  }
  std::string cpu = targetCPU.getNumOccurrences()
                        ? targetCPU.getValue()
                        : llvm::sys::getHostCPUName().str();
  std::string features = targetFeatures.getNumOccurrences()
                             ? targetFeatures.getValue()
                         : targetCPU.getNumOccurrences() ? std::string()
                                                         : getHostFeatures();
  // No global FP contraction: the X86 backend ignores it, and FMAs come
  // from the IR (math.fma, vector.fma, `contract` flags).
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt,
      getCodeGenOptLevel(level)));
}

/// The width in bits of the widest vector registers `machine` generates code
/// for: 512 with AVX-512F, 256 with AVX (and AVX2), else 128 (SSE, NEON).
static int64_t getVectorBits(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  if (machine.getTargetTriple().isX86()) {
    if (subtarget->checkFeatures("+avx512f"))
      return 512;
    if (subtarget->checkFeatures("+avx"))
      return 256;
  }
  return 128;
}

/// Sets the target triple and data layout of `machine` on `module` (without
/// them, LLVM turns `memcpy` into byte loops).
static void setTarget(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setTargetTriple(machine.getTargetTriple());
  module.setDataLayout(machine.createDataLayout());
}

/// Runs LLVM's new-PM default pipeline at -O<level> for `machine`.
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           unsigned level) {
  setTarget(module, machine);
  if (level == 0)
    return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentations(module.getContext(),
                                                  /*DebugLogging=*/false);
  instrumentations.registerCallbacks(callbacks, &mam);
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = level >= 2;
  tuning.SLPVectorization = level >= 2;
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &callbacks);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel pipeline = level == 1   ? llvm::OptimizationLevel::O1
                                     : level == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  builder.buildPerModuleDefaultPipeline(pipeline).run(module, mam);
}

/// Flushes `os` and reports a write error once, as a message rather than
/// the fatal "IO failure on output stream" of an unchecked stream.
static LogicalResult checkStream(llvm::raw_fd_ostream &os, StringRef path) {
  os.flush();
  if (!os.has_error())
    return success();
  llvm::errs() << "pp-compile: cannot write '" << path
               << "': " << os.error().message() << "\n";
  os.clear_error();
  return failure();
}

static LogicalResult emitObject(llvm::Module &module,
                                llvm::TargetMachine &machine, StringRef path) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "pp-compile: cannot write " << path << ": " << ec.message()
                 << "\n";
    return failure();
  }
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, out.os(), nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    llvm::errs() << "pp-compile: the target cannot emit object files\n";
    return failure();
  }
  pm.run(module);
  if (failed(checkStream(out.os(), path)))
    return failure();
  out.keep();
  return success();
}

static LogicalResult linkExecutable(ArrayRef<std::string> objects,
                                    StringRef path) {
  llvm::ErrorOr<std::string> driver =
      llvm::sys::findProgramByName(PP_LINK_DRIVER);
  if (!driver) {
    llvm::errs() << "pp-compile: cannot find '" << PP_LINK_DRIVER
                 << "' to link with\n";
    return failure();
  }
  SmallVector<StringRef> args = {*driver};
  args.append(objects.begin(), objects.end());
  args.push_back(PP_RUNTIME_LIBRARY);
  StringRef(PP_LINK_LIBRARIES).split(args, '|', -1, /*KeepEmpty=*/false);
  args.append({"-lm", "-o", path});
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0, &error);
  if (rc != 0) {
    llvm::errs() << "pp-compile: linking failed: " << error << "\n";
    return failure();
  }
  return success();
}

/// Runs the program just built with --profile, on one process per pipeline
/// rank (and replica), writing the profile to `outputFile`.
static LogicalResult runProfile(StringRef program, int64_t processes) {
  std::string steps = "--steps=" + std::to_string(profileSteps);
  std::string warmup = "--warmup=" + std::to_string(profileWarmup);
  std::string profile = "--profile=" + outputFile.getValue();
  std::string np = std::to_string(processes);
  SmallVector<StringRef> args;
  std::string launcher = program.str();
  if (processes > 1) {
    llvm::ErrorOr<std::string> mpiexec =
        llvm::sys::findProgramByName(PP_MPIEXEC);
    if (!mpiexec) {
      llvm::errs() << "pp-compile: cannot find '" << PP_MPIEXEC
                   << "' to run the " << np << " processes with\n";
      return failure();
    }
    launcher = *mpiexec;
    args = {launcher, "-n", np};
  }
  args.append({program, steps, warmup, profile});
  for (const std::string &arg : runArgs)
    args.push_back(arg);
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(launcher, args, std::nullopt, {}, 0, 0, &error);
  if (rc != 0) {
    llvm::errs() << "pp-compile: the profiling run failed"
                 << (error.empty() ? "" : ": " + error) << "\n";
    return failure();
  }
  return success();
}

static void removeFiles(ArrayRef<std::string> paths) {
  for (const std::string &path : paths)
    llvm::sys::fs::remove(path);
}

/// Object file names for `numParts` parts of a program at `base`.
static SmallVector<std::string> getObjectPaths(StringRef base,
                                               size_t numParts) {
  SmallVector<std::string> paths;
  for (size_t index = 0; index < numParts; ++index)
    paths.push_back((base + "." + Twine(index) + ".o").str());
  return paths;
}

/// Links the parts' objects at a temporary path and profiles the program.
static LogicalResult profileExecutable(ArrayRef<std::string> objects,
                                       StringRef program) {
  LogicalResult profiled = linkExecutable(objects, program);
  if (succeeded(profiled))
    profiled =
        runProfile(program, (scheduledRanks() ? scheduledRanks() : numStages) *
                                dataParallel);
  llvm::sys::fs::remove(program);
  return profiled;
}

/// The threads that build the module's parts. LLVM's pass timers are
/// global, so --time-passes builds on one.
static unsigned getNumJobs() {
  if (llvm::TimePassesIsEnabled)
    return 1;
  if (numJobs)
    return numJobs;
  return llvm::heavyweight_hardware_concurrency().compute_thread_count();
}

/// Optimises one part in its own context: the schedule driver at -O1 at
/// most and through the fast instruction selector (straight-line runtime
/// calls, run once per step: 2-5% more instructions, half the code
/// generation time), stage code at -O<n>. With an `object` path, compiles
/// it there; else leaves the optimised bitcode in `part`.
static LogicalResult buildPart(pp::ModulePart &part, StringRef object,
                               TimingScope &backend) {
  TimingScope timing =
      backend.nest((Twine(part.driver ? "Schedule driver" : "Stage code") +
                    " part (" + Twine(part.size) + " instructions)")
                       .str());
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = pp::readPart(part, context);
  if (!module)
    return failure();
  unsigned level = part.driver ? std::min(optLevel.getValue(), 1u) : optLevel;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(part.driver ? 0 : level);
  if (!machine)
    return failure();
  {
    TimingScope optimization = timing.nest("LLVM optimisation");
    optimizeModule(*module, *machine, level);
  }
  if (object.empty()) {
    part.bitcode.clear();
    llvm::raw_svector_ostream os(part.bitcode);
    llvm::WriteBitcodeToFile(*module, os);
    return success();
  }
  TimingScope codegen = timing.nest("Code generation");
  return emitObject(*module, *machine, object);
}

/// Builds every part on a thread pool, the largest first; part i into
/// objects[i] when `objects` is not empty.
static LogicalResult buildParts(MutableArrayRef<pp::ModulePart> parts,
                                ArrayRef<std::string> objects,
                                TimingScope &timing) {
  auto order = llvm::to_vector(llvm::seq<size_t>(0, parts.size()));
  llvm::stable_sort(
      order, [&](size_t a, size_t b) { return parts[a].size > parts[b].size; });
  std::atomic<bool> failed = false;
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(getNumJobs()));
  for (size_t index : order)
    pool.async([&, index] {
      StringRef object = objects.empty() ? StringRef() : objects[index];
      if (mlir::failed(buildPart(parts[index], object, timing)))
        failed = true;
    });
  pool.wait();
  return failure(failed);
}

/// Links the optimised parts back into one module.
static std::unique_ptr<llvm::Module> mergeParts(ArrayRef<pp::ModulePart> parts,
                                                llvm::LLVMContext &context) {
  std::unique_ptr<llvm::Module> merged;
  for (const pp::ModulePart &part : parts) {
    std::unique_ptr<llvm::Module> module = pp::readPart(part, context);
    if (!module)
      return nullptr;
    if (!merged) {
      merged = std::move(module);
      continue;
    }
    if (llvm::Linker::linkModules(*merged, std::move(module))) {
      llvm::errs() << "pp-compile: cannot link the module's parts\n";
      return nullptr;
    }
  }
  return merged;
}

static LogicalResult writeText(StringRef path,
                               llvm::function_ref<void(raw_ostream &)> print) {
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out) {
    llvm::errs() << "pp-compile: " << error << "\n";
    return failure();
  }
  print(out->os());
  if (failed(checkStream(out->os(), path)))
    return failure();
  out->keep();
  return success();
}

/// Runs the pipeline `build` adds on `module`, timed under `timing`.
static LogicalResult
runPipeline(ModuleOp module, TimingScope &timing,
            llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  build(pm);
  return pm.run(module);
}

/// Parses the model and runs the registered pipelines: to a verified
/// schedule, then (unless --emit=schedule) to the LLVM dialect for
/// `machine`.
static OwningOpRef<ModuleOp> lowerModel(MLIRContext &context,
                                        llvm::SourceMgr &sourceMgr,
                                        TimingScope &timing,
                                        const llvm::TargetMachine &machine) {
  OwningOpRef<ModuleOp> module;
  {
    TimingScope parsing = timing.nest("Parse");
    module = parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  }
  if (!module)
    return nullptr;
  auto schedule = [&](OpPassManager &pm) {
    if (hasTosaOps(*module))
      pp::buildTosaToLinalgPipeline(pm);
    pp::buildElementwiseToLinalgPipeline(pm);
    pp::SchedulePipelineOptions options;
    setScheduleOptions(options);
    pp::buildSchedulePipeline(pm, options);
  };
  if (failed(runPipeline(*module, timing, schedule)))
    return nullptr;
  if (emit == Emit::Schedule)
    return module;
  auto lower = [&](OpPassManager &pm) {
    pp::LowerToCPUPipelineOptions options;
    options.approximateMath = approximateMath;
    options.staticScratch = staticScratch;
    options.gemm = gemmChoice;
    if (vectorizeContractions.getNumOccurrences())
      options.vectorizeContractions = vectorizeContractions;
    options.vectorBits = getVectorBits(machine);
    if (fuseElementwise.getNumOccurrences())
      options.fuseElementwise = fuseElementwise;
    if (vectorizeElementwise.getNumOccurrences())
      options.vectorizeElementwise = vectorizeElementwise;
    pp::buildLowerToCPUPipeline(pm, options);
  };
  if (failed(runPipeline(*module, timing, lower)))
    return nullptr;
  return module;
}

/// Where the parts' objects go: next to the executable, or for a profile
/// next to a temporary program (`program`). Empty for one object or IR.
static LogicalResult getObjectBase(std::string &base, std::string &program) {
  if (emit == Emit::Exe)
    base = outputFile;
  if (emit != Emit::Profile)
    return success();
  SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("pp-profile", "", path)) {
    llvm::errs() << "pp-compile: cannot create a temporary file\n";
    return failure();
  }
  program = base = path.str().str();
  return success();
}

static LogicalResult compile(MLIRContext &context, TimingScope &timing) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(optLevel);
  if (!machine)
    return failure();
  OwningOpRef<ModuleOp> module =
      lowerModel(context, sourceMgr, timing, *machine);
  if (!module)
    return failure();
  if (emit == Emit::Schedule || emit == Emit::MLIR)
    return writeText(outputFile, [&](raw_ostream &os) { module->print(os); });
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    TimingScope translation = timing.nest("Translate to LLVM IR");
    llvmModule = translateModuleToLLVMIR(*module, llvmContext);
  }
  if (!llvmModule)
    return module->emitError("translation to LLVM IR failed");
  // Parts optimise and compile in parallel; -O0 keeps the module whole, as
  // translated.
  SmallVector<pp::ModulePart> parts;
  {
    TimingScope splitting = timing.nest("Split module");
    setTarget(*llvmModule, *machine);
    parts = optLevel == 0
                ? SmallVector<pp::ModulePart>{pp::writeModule(*llvmModule)}
                : pp::splitModule(*llvmModule, getNumJobs());
    llvmModule.reset();
  }
  std::string base, program;
  if (failed(getObjectBase(base, program)))
    return failure();
  SmallVector<std::string> objects = base.empty()
                                         ? SmallVector<std::string>()
                                         : getObjectPaths(base, parts.size());
  LogicalResult built = success();
  {
    TimingScope backend = timing.nest("LLVM backend (parallel)");
    built = buildParts(parts, objects, backend);
  }
  if (succeeded(built) && emit == Emit::Exe) {
    TimingScope linking = timing.nest("Link");
    built = linkExecutable(objects, outputFile);
  } else if (succeeded(built) && emit == Emit::Profile) {
    built = profileExecutable(objects, program);
  }
  removeFiles(objects);
  if (failed(built) || emit == Emit::Exe || emit == Emit::Profile)
    return built;
  std::unique_ptr<llvm::Module> merged;
  {
    TimingScope merging = timing.nest("Merge parts");
    merged = mergeParts(parts, llvmContext);
  }
  if (!merged)
    return failure();
  if (emit == Emit::LLVM)
    return writeText(outputFile,
                     [&](raw_ostream &os) { merged->print(os, nullptr); });
  TimingScope codegen = timing.nest("Code generation");
  return emitObject(*merged, *machine, outputFile);
}

/// Checks the option values that the command line parser cannot, with one
/// line naming the option, the accepted values and the value given.
static LogicalResult checkOptions() {
  if (failed(checkRange(numStages, 1, pp::kMaxStages)) ||
      failed(
          checkRange(numRanks, 0, pp::kMaxRanks, " (0: one rank per stage)")) ||
      failed(checkRange(numMicrobatches, 1, pp::kMaxMicrobatches)) ||
      failed(checkRange(dataParallel, 1, pp::kMaxRanks)))
    return failure();
  if (optLevel > 3) {
    llvm::errs() << "pp-compile: -O takes 0, 1, 2 or 3, got " << optLevel
                 << "\n";
    return failure();
  }
  return success();
}

/// Fails with a message if the output cannot be created: its directory is
/// missing or not writable. Checked before compiling, which can take long.
static LogicalResult checkOutputPath() {
  StringRef path = outputFile;
  if (path == "-")
    return success();
  SmallString<128> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  if (!llvm::sys::fs::is_directory(dir)) {
    llvm::errs() << "pp-compile: cannot write '" << path << "': '" << dir
                 << "' is not a directory\n";
    return failure();
  }
  if (llvm::sys::fs::is_directory(path)) {
    llvm::errs() << "pp-compile: cannot write '" << path
                 << "': it is a directory\n";
    return failure();
  }
  bool exists = llvm::sys::fs::exists(path);
  if (std::error_code ec = llvm::sys::fs::access(
          exists ? path : StringRef(dir), llvm::sys::fs::AccessMode::Write)) {
    llvm::errs() << "pp-compile: cannot write '" << path
                 << "': " << ec.message() << "\n";
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // The registry's names, so the help lists every schedule pp-schedule has.
  static const std::string scheduleHelp =
      "Schedule: " + pp::listScheduleGenerators();
  scheduleName.setDescription(scheduleHelp);
  cl::ParseCommandLineOptions(
      argc, argv,
      "pp-compile: compile a training step into a pipelined MPI program\n\n"
      "  pp-compile model.mlir --stages 4 --microbatches 8 --schedule 1f1b "
      "-o train\n  mpirun -np 4 ./train --steps 20\n\n"
      "With --data-parallel D, run on ranks x D processes (mpirun -np 8 for "
      "4 ranks and D = 2).\n");
  if (outputFile.empty())
    outputFile = emit == Emit::Exe       ? "train"
                 : emit == Emit::Obj     ? "train.o"
                 : emit == Emit::Profile ? "profile.json"
                                         : "-";
  if (emit == Emit::Profile && !configureProfile())
    return 2;
  if (failed(checkOptions()) || failed(checkOutputPath()))
    return 2;
  DialectRegistry registry;
  pp::registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  pp::registerAllPasses();
  MLIRContext context(registry);
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  LogicalResult compiled = compile(context, timing);
  timing.stop();
  return failed(compiled) ? 1 : 0;
}
