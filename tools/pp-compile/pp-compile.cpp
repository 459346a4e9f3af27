//===- pp-compile.cpp - ahead-of-time compiler for pipelined training -----===//
//
// Compiles a training-step function into a native program that trains it
// across pipeline stages: runs pp's passes and upstream lowering in
// process, emits an object with LLVM and links it against libpprt.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

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
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

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
static cl::opt<bool> factorContractions(
    "factor-contractions",
    cl::desc("Split contractions of products into GEMMs and elementwise ops "
             "(pp-factor-contractions; on by default)"));
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

/// The back end's options from the flags.
static pp::BackendOptions getBackendOptions() {
  pp::BackendOptions options;
  if (targetCPU.getNumOccurrences())
    options.cpu = targetCPU;
  if (targetFeatures.getNumOccurrences())
    options.features = targetFeatures;
  options.optLevel = optLevel;
  options.jobs = numJobs;
  return options;
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
  LogicalResult profiled = pp::linkExecutable(objects, program);
  if (succeeded(profiled))
    profiled =
        runProfile(program, (scheduledRanks() ? scheduledRanks() : numStages) *
                                dataParallel);
  llvm::sys::fs::remove(program);
  return profiled;
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
  if (failed(pp::checkStream(out->os(), path)))
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
    options.vectorBits = pp::getVectorBits(machine);
    if (factorContractions.getNumOccurrences())
      options.factorContractions = factorContractions;
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
  pp::BackendOptions backendOptions = getBackendOptions();
  std::unique_ptr<llvm::TargetMachine> machine =
      pp::createTargetMachine(backendOptions, optLevel);
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
    pp::setTarget(*llvmModule, *machine);
    parts = optLevel == 0
                ? SmallVector<pp::ModulePart>{pp::writeModule(*llvmModule)}
                : pp::splitModule(*llvmModule, pp::getNumJobs(backendOptions));
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
    built = pp::buildParts(parts, objects, backendOptions, backend);
  }
  if (succeeded(built) && emit == Emit::Exe) {
    TimingScope linking = timing.nest("Link");
    built = pp::linkExecutable(objects, outputFile);
  } else if (succeeded(built) && emit == Emit::Profile) {
    built = profileExecutable(objects, program);
  }
  removeFiles(objects);
  if (failed(built) || emit == Emit::Exe || emit == Emit::Profile)
    return built;
  std::unique_ptr<llvm::Module> merged;
  {
    TimingScope merging = timing.nest("Merge parts");
    merged = pp::mergeParts(parts, llvmContext);
  }
  if (!merged)
    return failure();
  if (emit == Emit::LLVM)
    return writeText(outputFile,
                     [&](raw_ostream &os) { merged->print(os, nullptr); });
  TimingScope codegen = timing.nest("Code generation");
  return pp::emitObject(*merged, *machine, outputFile);
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
