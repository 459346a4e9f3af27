//===- pp-compile.cpp - ahead-of-time compiler for pipelined training -----===//
//
// Compiles a training-step function into a native program that trains it
// across pipeline stages. The compiler is a library (pp/Compiler/Compile.h);
// the tool parses its flags into CompileOptions and prints its diagnostics.
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/Compile.h"
#include "pp/InitAll.h"
#include "pp/Scheduling/ScheduleGenerators.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

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
using Emit = pp::EmitKind;
static cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Executable),
    cl::values(clEnumValN(Emit::Schedule, "schedule",
                          "verified schedule and stage functions (MLIR)"),
               clEnumValN(Emit::MLIR, "mlir", "LLVM-dialect MLIR"),
               clEnumValN(Emit::LLVM, "llvm",
                          "LLVM IR after LLVM's -O<n> pipeline (-O0: as "
                          "translated)"),
               clEnumValN(Emit::Object, "obj", "object file"),
               clEnumValN(Emit::Executable, "exe",
                          "executable linked with libpprt"),
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
static cl::opt<pp::CompileTarget>
    target("target", cl::desc("Where stage code runs (default cpu)"),
           cl::init(pp::CompileTarget::CPU),
           cl::values(clEnumValN(pp::CompileTarget::CPU, "cpu", "the host CPU"),
                      clEnumValN(pp::CompileTarget::CUDA, "cuda",
                                 "NVIDIA GPUs: cuBLAS GEMMs and generated CUDA "
                                 "kernels, run under --backend cuda")));
static cl::opt<std::string>
    cudaChip("cuda-chip",
             cl::desc("With --target=cuda: the GPU architecture kernels are "
                      "built for (default sm_90)"),
             cl::init("sm_90"));
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
static cl::list<double> memoryCap(
    "memory-cap",
    cl::desc("Bytes each pipeline rank may hold, for the stage planner: one "
             "value for every rank or one per rank, comma separated "
             "(default: the device's memory; docs/CostModel.md)"),
    cl::CommaSeparated);
static cl::opt<pp::RecomputePolicy> recompute(
    "recompute",
    cl::desc("Which stages' backwards recompute their forward from the "
             "stage inputs instead of keeping activations (default none; "
             "docs/Recompute.md)"),
    cl::init(pp::RecomputePolicy::None),
    cl::values(clEnumValN(pp::RecomputePolicy::None, "none", "no stage"),
               clEnumValN(pp::RecomputePolicy::All, "all", "every stage"),
               clEnumValN(pp::RecomputePolicy::Auto, "auto",
                          "those the stage planner needs to fit every "
                          "rank's memory cap, at the least added compute")));
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
static cl::opt<pp::GemmPrecision> precision(
    "precision",
    cl::desc("Element type the GEMMs read their inputs in (default fp32)"),
    cl::init(pp::GemmPrecision::FP32),
    cl::values(clEnumValN(pp::GemmPrecision::FP32, "fp32", "fp32 throughout"),
               clEnumValN(pp::GemmPrecision::BF16, "bf16",
                          "GEMM inputs rounded to bf16 with fp32 "
                          "accumulation (every contraction a pprt_gemm "
                          "call); fp32 weights, optimizer and loss")));
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
static cl::opt<bool>
    vectorizeElementwise("vectorize-elementwise",
                         cl::desc("Vectorize elementwise ops and reductions "
                                  "(pp-vectorize-elementwise; on by default)"));
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

/// The compile the flags ask for.
static pp::CompileOptions getCompileOptions() {
  pp::CompileOptions options;
  options.function = function;
  options.numStages = numStages;
  if (numRanks.getNumOccurrences())
    options.numRanks = numRanks;
  options.numMicrobatches = numMicrobatches;
  if (scheduleName.getNumOccurrences())
    options.schedule = scheduleName;
  options.splitBackward = splitBackward;
  options.numReplicas = dataParallel;
  if (!device.empty()) {
    SmallVector<StringRef> devices;
    StringRef(device).split(devices, ',');
    for (StringRef name : devices)
      options.devices.push_back(name.str());
  }
  options.deviceFile = deviceFile;
  options.costFile = costFile;
  options.memoryCaps.assign(memoryCap.begin(), memoryCap.end());
  options.recompute = recompute;
  options.emit = emit;
  options.output = outputFile;
  options.profileSteps = profileSteps;
  options.profileWarmup = profileWarmup;
  options.runArgs.assign(runArgs.begin(), runArgs.end());
  options.target = target;
  options.cudaChip = cudaChip;
  if (targetCPU.getNumOccurrences())
    options.targetCPU = targetCPU;
  if (targetFeatures.getNumOccurrences())
    options.targetFeatures = targetFeatures;
  options.approximateMath = approximateMath;
  options.staticScratch = staticScratch;
  options.gemm = gemmChoice;
  options.precision = precision;
  if (vectorizeContractions.getNumOccurrences())
    options.vectorizeContractions = vectorizeContractions;
  if (factorContractions.getNumOccurrences())
    options.factorContractions = factorContractions;
  if (fuseElementwise.getNumOccurrences())
    options.fuseElementwise = fuseElementwise;
  if (vectorizeElementwise.getNumOccurrences())
    options.vectorizeElementwise = vectorizeElementwise;
  options.optLevel = optLevel;
  options.jobs = numJobs;
  options.configurePassManager = [](PassManager &pm) {
    return applyPassManagerCLOptions(pm);
  };
  return options;
}

/// Prints the compiler's own errors, those about an option or a file (at a
/// NameLoc), as one `pp-compile: <message>` line; the model's go through
/// the source manager's handler, with their source lines.
static LogicalResult printToolError(Diagnostic &diag) {
  auto name = dyn_cast<NameLoc>(diag.getLocation());
  if (diag.getSeverity() != DiagnosticSeverity::Error || !name ||
      !isa<UnknownLoc>(name.getChildLoc()))
    return failure();
  llvm::errs() << "pp-compile: " << diag << "\n";
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // The registry's names, so the help lists every schedule pp-schedule has.
  static const std::string scheduleHelp =
      "Schedule: " + pp::sched::listScheduleGenerators();
  scheduleName.setDescription(scheduleHelp);
  cl::ParseCommandLineOptions(
      argc, argv,
      "pp-compile: compile a training step into a pipelined MPI program\n\n"
      "  pp-compile model.mlir --stages 4 --microbatches 8 --schedule 1f1b "
      "-o train\n  mpirun -np 4 ./train --steps 20\n\n"
      "With --data-parallel D, run on ranks x D processes (mpirun -np 8 for "
      "4 ranks and D = 2).\n");
  pp::CompileOptions options = getCompileOptions();
  DialectRegistry registry;
  pp::registerCompilerDialects(registry);
  pp::registerAllPasses();
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler sourceHandler(sourceMgr, &context);
  ScopedDiagnosticHandler toolHandler(&context, printToolError);
  // Option errors exit with 2 before anything is compiled.
  if (failed(pp::checkCompileOptions(context, options)))
    return 2;
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  FailureOr<pp::CompiledProgram> compiled =
      pp::compileModelFile(inputFile, sourceMgr, context, options, timing);
  timing.stop();
  return failed(compiled) ? 1 : 0;
}
