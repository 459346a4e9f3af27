//===- pp-compile.cpp - ahead-of-time compiler for pipelined training -----===//
//
// Compiles a training-step function into a native program that trains it
// across pipeline stages: runs pp's passes and upstream lowering in
// process, emits an object with LLVM and links it against libpprt.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"
#include "pp/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

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
static cl::opt<std::string> scheduleName(
    "schedule",
    cl::desc("Schedule: auto, gpipe, 1f1b, interleaved-1f1b, looped-bfs, "
             "zb-h1, zb-h2, zbv, v-half, v-min"),
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
               clEnumValN(Emit::LLVM, "llvm", "LLVM IR"),
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
static cl::opt<std::string> gemmChoice(
    "gemm",
    cl::desc("Contractions: generated (MLIR code), library (pprt_gemm, a "
             "BLAS) or auto (per shape, bench/gemm_choice.md)"),
    cl::init("auto"));
static cl::list<std::string>
    runArgs("run-arg",
            cl::desc("With --emit=profile: an option for the program run "
                     "(repeatable), e.g. --run-arg=--corpus=text.txt"));

/// Options of the stage planner: the pipeline it plans for and its devices.
/// Schedules it does not know (plugins) leave it to its default, 1f1b.
static std::string plannerOptions() {
  std::string options = llvm::formatv("num-stages={0} num-ranks={1}",
                                      numStages.getValue(), numRanks.getValue())
                            .str();
  if (mlir::pp::lookupScheduleGenerator(scheduleName))
    options += " schedule=" + scheduleName;
  if (!device.empty())
    options += " device=" + device;
  if (!deviceFile.empty())
    options += " device-file=" + deviceFile;
  if (!costFile.empty())
    options += " cost-file=" + costFile;
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

/// The pass pipeline from a model to a verified schedule.
static std::string schedulePipeline() {
  std::string fn = "function=" + function;
  return llvm::formatv(
             "pp-split-microbatches{{num-microbatches={0} {2}},"
             "pp-partition-stages{{{7} {2}},pp-derive-backward{{{2}},"
             "pp-schedule{{schedule={3} num-microbatches={0} "
             "num-ranks={5} split-backward={4} {2}},"
             "pp-insert-transfers{{num-replicas={6}},pp-verify-schedule,"
             "canonicalize,cse",
             numMicrobatches.getValue(), numStages.getValue(), fn,
             scheduledName(), splitBackward ? "true" : "false",
             scheduledRanks(), dataParallel.getValue(), plannerOptions())
      .str();
}

/// TOSA models are first lowered to the linalg, tensor and arith ops that
/// pp differentiates.
static const char *kTosaPipeline = "tosa-to-linalg-pipeline,func.func(tosa-"
                                   "to-tensor,tosa-to-arith),canonicalize";
/// Elementwise arith and math ops on tensors become linalg.generic ops.
static const char *kElementwisePipeline =
    "func.func(convert-elementwise-to-linalg)";

/// From a verified schedule to buffers.
static const char *kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs "
    "modify-public-functions},buffer-deallocation-pipeline";

/// From buffers to the LLVM dialect; math functions that LLVM has no
/// intrinsic for (erf) become libm calls.
static const char *kLoweringPipeline =
    "convert-pp-to-runtime,convert-linalg-to-loops,lower-affine,"
    "convert-scf-to-cf,expand-strided-metadata,finalize-memref-to-llvm,"
    "convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,"
    "reconcile-unrealized-casts";

/// The GEMM choice on tensors before bufferization, then the marked
/// contractions as pprt_gemm calls on buffers before the lowering.
static std::string bufferizePipeline() {
  return "pp-select-gemm{gemm=" + gemmChoice + "}," + kBufferizePipeline;
}
static std::string loweringPipeline() {
  return std::string("convert-gemm-to-runtime,") + kLoweringPipeline;
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

/// Copies into or out of slices become loops: lowered as is, a copy between
/// strided buffers calls `memrefCopy`, which libpprt does not provide.
static void lowerStridedCopies(ModuleOp module) {
  module.walk([](memref::CopyOp copy) {
    auto isDense = [](Value buffer) {
      return cast<MemRefType>(buffer.getType()).getLayout().isIdentity();
    };
    if (isDense(copy.getSource()) && isDense(copy.getTarget()))
      return;
    OpBuilder builder(copy);
    linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  });
}

/// A profile times B and W apart. False, after a message, for invalid
/// profiling options.
static bool configureProfile() {
  if (profileSteps < 1 || profileWarmup < 0) {
    llvm::errs() << "pp-compile: --profile-steps must be at least 1 and "
                    "--profile-warmup at least 0\n";
    return false;
  }
  splitBackward = true;
  return true;
}

static LogicalResult runPipeline(ModuleOp module, StringRef pipeline) {
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  return pm.run(module);
}

/// The pp attributes have no meaning in LLVM IR.
static void dropPPAttributes(ModuleOp module) {
  module.walk([](Operation *op) {
    for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
      if (attr.getName().strref().starts_with("pp."))
        op->removeDiscardableAttr(attr.getName());
  });
}

/// Gives every repeat of a value in a func.return its own copy. A stage
/// function may return one tensor twice (an activation it also saves for
/// its backward, or two input gradients that CSE merged), but
/// buffer-results-to-out-params needs a distinct buffer per result.
static void copyRepeatedResults(ModuleOp module) {
  module.walk([](func::ReturnOp ret) {
    OpBuilder builder(ret);
    DenseSet<Value> seen;
    for (OpOperand &operand : ret->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || seen.insert(operand.get()).second)
        continue;
      Value empty = tensor::EmptyOp::create(
          builder, ret.getLoc(), type.getShape(), type.getElementType());
      operand.set(linalg::CopyOp::create(builder, ret.getLoc(), TypeRange{type},
                                         ValueRange{operand.get()},
                                         ValueRange{empty})
                      .getResult(0));
    }
  });
}

static LogicalResult emitObject(llvm::Module &module, StringRef path) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    llvm::errs() << "pp-compile: " << error << "\n";
    return failure();
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  module.setTargetTriple(triple);
  module.setDataLayout(machine->createDataLayout());
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "pp-compile: cannot write " << path << ": " << ec.message()
                 << "\n";
    return failure();
  }
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    llvm::errs() << "pp-compile: the target cannot emit object files\n";
    return failure();
  }
  pm.run(module);
  out.keep();
  return success();
}

static LogicalResult linkExecutable(StringRef object, StringRef path) {
  llvm::ErrorOr<std::string> mpicc =
      llvm::sys::findProgramByName(PP_MPI_C_COMPILER);
  if (!mpicc) {
    llvm::errs() << "pp-compile: cannot find the MPI compiler wrapper '"
                 << PP_MPI_C_COMPILER << "' to link with\n";
    return failure();
  }
  SmallVector<StringRef> args = {
      *mpicc, object, PP_RUNTIME_LIBRARY, PP_BLAS_LIBRARY, "-lm", "-o", path};
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(*mpicc, args, std::nullopt, {}, 0, 0, &error);
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

/// Builds the executable at a temporary path and profiles it.
static LogicalResult profileExecutable(llvm::Module &module) {
  SmallString<128> program;
  if (llvm::sys::fs::createTemporaryFile("pp-profile", "", program)) {
    llvm::errs() << "pp-compile: cannot create a temporary file\n";
    return failure();
  }
  std::string object = (program + ".o").str();
  LogicalResult profiled = emitObject(module, object);
  if (succeeded(profiled))
    profiled = linkExecutable(object, program);
  llvm::sys::fs::remove(object);
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
  out->keep();
  return success();
}

static LogicalResult compile(MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  if (!module)
    return failure();
  if (hasTosaOps(*module) && failed(runPipeline(*module, kTosaPipeline)))
    return failure();
  if (failed(runPipeline(*module, kElementwisePipeline)))
    return failure();
  if (failed(runPipeline(*module, schedulePipeline())))
    return failure();
  if (emit == Emit::Schedule)
    return writeText(outputFile, [&](raw_ostream &os) { module->print(os); });
  copyRepeatedResults(*module);
  if (failed(runPipeline(*module, bufferizePipeline())))
    return failure();
  lowerStridedCopies(*module);
  if (failed(runPipeline(*module, loweringPipeline())))
    return failure();
  if (emit == Emit::MLIR)
    return writeText(outputFile, [&](raw_ostream &os) { module->print(os); });
  dropPPAttributes(*module);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext);
  if (!llvmModule)
    return module->emitError("translation to LLVM IR failed");
  if (emit == Emit::LLVM)
    return writeText(outputFile,
                     [&](raw_ostream &os) { llvmModule->print(os, nullptr); });
  if (emit == Emit::Profile)
    return profileExecutable(*llvmModule);
  std::string object =
      emit == Emit::Obj ? outputFile.getValue() : outputFile.getValue() + ".o";
  if (failed(emitObject(*llvmModule, object)))
    return failure();
  if (emit == Emit::Obj)
    return success();
  LogicalResult linked = linkExecutable(object, outputFile);
  llvm::sys::fs::remove(object);
  return linked;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
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
  if (numStages < 1 || numMicrobatches < 1 || numRanks < 0) {
    llvm::errs() << "pp-compile: --stages and --microbatches must be at "
                    "least 1\n";
    return 2;
  }
  if (dataParallel < 1) {
    llvm::errs() << "pp-compile: --data-parallel must be at least 1\n";
    return 2;
  }
  DialectRegistry registry;
  pp::registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  pp::registerAllPasses();
  MLIRContext context(registry);
  return failed(compile(context)) ? 1 : 0;
}
