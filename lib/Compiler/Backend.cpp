//===- Backend.cpp - LLVM optimisation, objects and linking --------------===//
//
// The compiler's back end: target machines for the host or the requested CPU,
// LLVM's optimisation pipelines and code generation for the module's parts
// on a thread pool, and the link against libpprt.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include "pp/Compiler/FatalErrors.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <atomic>

using namespace mlir;

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

/// Checks `cpu` and `features` against `target` before LLVM sees them: it
/// warns about unknown names and ignores them, and ends the process on a
/// CPU that cannot run the triple's code (`--target-cpu i386` on x86-64)
/// or a changed mode (`-64bit-mode`).
/// Errors are at `loc` (the CPU's) or at the features' option.
static LogicalResult checkSubtarget(Location loc, const llvm::Target &target,
                                    const llvm::Triple &triple, StringRef cpu,
                                    StringRef features) {
  Location featuresLoc =
      NameLoc::get(StringAttr::get(loc.getContext(), "--target-features"));
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target.createMCSubtargetInfo(triple, "", ""));
  if (!generic->isCPUStringValid(cpu))
    return emitError(loc) << "--target-cpu '" << cpu
                          << "' is not a CPU of target '" << triple.str()
                          << "'";
  SmallVector<StringRef> names;
  features.split(names, ',', -1, /*KeepEmpty=*/false);
  for (StringRef name : names) {
    if (!name.starts_with("+") && !name.starts_with("-"))
      return emitError(featuresLoc)
             << "--target-features '" << features << "': '" << name
             << "' must begin with '+' or '-'";
    if (!llvm::any_of(generic->getAllProcessorFeatures(),
                      [&](const llvm::SubtargetFeatureKV &feature) {
                        return name.drop_front() == feature.Key;
                      }))
      return emitError(featuresLoc)
             << "--target-features '" << features << "': '" << name.drop_front()
             << "' is not a feature of target '" << triple.str() << "'";
    // X86's modes follow the triple; changing one mixes 16-, 32- and
    // 64-bit code or ends in LLVM's fatal errors.
    if (triple.isX86() && name.ends_with("bit-mode"))
      return emitError(featuresLoc)
             << "--target-features '" << features << "': '" << name.drop_front()
             << "' is set by target '" << triple.str()
             << "' and cannot be changed";
  }
  std::unique_ptr<llvm::MCSubtargetInfo> chosen(
      target.createMCSubtargetInfo(triple, cpu, features));
  if (triple.isX86() && triple.isArch64Bit() &&
      !chosen->checkFeatures("+64bit")) {
    if (features.contains("-64bit"))
      return emitError(featuresLoc)
             << "--target-features '" << features
             << "' turn off the 64-bit code of target '" << triple.str() << "'";
    return emitError(loc) << "--target-cpu '" << cpu
                          << "' cannot run the 64-bit code of target '"
                          << triple.str() << "'";
  }
  return success();
}

std::unique_ptr<llvm::TargetMachine>
pp::createTargetMachine(Location loc, const BackendOptions &options,
                        unsigned level) {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << error;
    return nullptr;
  }
  std::string cpu = options.cpu.value_or(llvm::sys::getHostCPUName().str());
  std::string features = options.features ? *options.features
                         : options.cpu    ? std::string()
                                          : getHostFeatures();
  if ((options.cpu || options.features) &&
      failed(checkSubtarget(loc, *target, triple, cpu, features)))
    return nullptr;
  // No global FP contraction: the X86 backend ignores it, and FMAs come
  // from the IR (math.fma, vector.fma, `contract` flags).
  llvm::TargetOptions targetOptions;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      getCodeGenOptLevel(level)));
}

int64_t pp::getVectorBits(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  if (machine.getTargetTriple().isX86()) {
    if (subtarget->checkFeatures("+avx512f"))
      return 512;
    if (subtarget->checkFeatures("+avx"))
      return 256;
  }
  return 128;
}

void pp::setTarget(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setTargetTriple(machine.getTargetTriple());
  module.setDataLayout(machine.createDataLayout());
}

/// Runs LLVM's new-PM default pipeline at -O<level> for `machine`.
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           unsigned level) {
  pp::setTarget(module, machine);
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

namespace {
/// Forwards LLVM's errors and warnings to MLIR at one location; only the
/// first error, as LLVM repeats it for every instruction it cannot lower.
/// Unsupported code (a float return with SSE off) names its function
/// without the long signature LLVM prints.
struct ForwardingHandler : llvm::DiagnosticHandler {
  explicit ForwardingHandler(Location loc) : loc(loc) {}

  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    llvm::DiagnosticSeverity severity = info.getSeverity();
    if ((severity == llvm::DS_Error && reportedError) ||
        (severity != llvm::DS_Error && severity != llvm::DS_Warning))
      return true;
    std::string message;
    llvm::raw_string_ostream os(message);
    if (auto *unsupported = dyn_cast<llvm::DiagnosticInfoUnsupported>(&info)) {
      os << "cannot generate code for '" << unsupported->getFunction().getName()
         << "': " << unsupported->getMessage();
    } else {
      llvm::DiagnosticPrinterRawOStream printer(os);
      info.print(printer);
    }
    if (severity == llvm::DS_Warning) {
      emitWarning(loc) << message;
      return true;
    }
    emitError(loc) << message;
    reportedError = true;
    return true;
  }

  Location loc;
  bool reportedError = false;
};
} // namespace

void pp::forwardDiagnostics(llvm::LLVMContext &context, Location loc) {
  context.setDiagnosticHandler(std::make_unique<ForwardingHandler>(loc));
}

LogicalResult pp::checkDiagnostics(llvm::LLVMContext &context) {
  return failure(context.getDiagHandlerPtr()->HasErrors);
}

LogicalResult pp::checkStream(Location loc, llvm::raw_fd_ostream &os,
                              StringRef path) {
  os.flush();
  if (!os.has_error())
    return success();
  emitError(loc) << "cannot write '" << path << "': " << os.error().message();
  os.clear_error();
  return failure();
}

LogicalResult pp::emitObject(Location loc, llvm::Module &module,
                             llvm::TargetMachine &machine, StringRef path) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    return emitError(loc) << "cannot write " << path << ": " << ec.message();
  }
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, out.os(), nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    return emitError(loc) << "the target cannot emit object files";
  }
  pm.run(module);
  if (failed(checkDiagnostics(module.getContext())) ||
      failed(checkStream(loc, out.os(), path)))
    return failure();
  out.keep();
  return success();
}

bool pp::hasOpenMPRuntime() { return *PP_OPENMP_LIBRARY != '\0'; }

LogicalResult pp::linkExecutable(Location loc, ArrayRef<std::string> objects,
                                 const BackendOptions &options,
                                 StringRef path) {
  llvm::ErrorOr<std::string> driver =
      llvm::sys::findProgramByName(PP_LINK_DRIVER);
  if (!driver) {
    return emitError(loc) << "cannot find '" << PP_LINK_DRIVER
                          << "' to link with";
  }
  SmallVector<StringRef> args = {*driver};
  args.append(objects.begin(), objects.end());
  args.push_back(PP_RUNTIME_LIBRARY);
  StringRef(PP_LINK_LIBRARIES).split(args, '|', -1, /*KeepEmpty=*/false);
  std::string rpath;
  if (options.openmp) {
    rpath =
        ("-Wl,-rpath," + llvm::sys::path::parent_path(PP_OPENMP_LIBRARY)).str();
    args.append({PP_OPENMP_LIBRARY, rpath});
  }
  args.append({"-lm", "-o", path});
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0, &error);
  if (rc != 0) {
    return emitError(loc) << "linking failed: " << error;
  }
  return success();
}

unsigned pp::getNumJobs(const BackendOptions &options) {
  if (llvm::TimePassesIsEnabled)
    return 1;
  if (options.jobs)
    return options.jobs;
  return llvm::heavyweight_hardware_concurrency().compute_thread_count();
}

/// Optimises one part in its own context: the schedule driver at -O1 at
/// most and through the fast instruction selector (straight-line runtime
/// calls, run once per step: 2-5% more instructions, half the code
/// generation time), stage code at -O<n>. With an `object` path, compiles
/// it there; else leaves the optimised bitcode in `part`.
static LogicalResult buildPart(Location loc, pp::ModulePart &part,
                               StringRef object,
                               const pp::BackendOptions &options,
                               TimingScope &backend) {
  TimingScope timing =
      backend.nest((Twine(part.driver ? "Schedule driver" : "Stage code") +
                    " part (" + Twine(part.size) + " instructions)")
                       .str());
  llvm::LLVMContext context;
  pp::forwardDiagnostics(context, loc);
  std::unique_ptr<llvm::Module> module = pp::readPart(loc, part, context);
  if (!module)
    return failure();
  unsigned level =
      part.driver ? std::min(options.optLevel, 1u) : options.optLevel;
  std::unique_ptr<llvm::TargetMachine> machine =
      pp::createTargetMachine(loc, options, part.driver ? 0 : level);
  if (!machine)
    return failure();
  {
    TimingScope optimization = timing.nest("LLVM optimisation");
    optimizeModule(*module, *machine, level);
  }
  if (failed(pp::checkDiagnostics(context)))
    return failure();
  if (object.empty()) {
    part.bitcode.clear();
    llvm::raw_svector_ostream os(part.bitcode);
    llvm::WriteBitcodeToFile(*module, os);
    return success();
  }
  TimingScope codegen = timing.nest("Code generation");
  return pp::emitObject(loc, *module, *machine, object);
}

LogicalResult pp::buildParts(Location loc, MutableArrayRef<ModulePart> parts,
                             ArrayRef<std::string> objects,
                             const BackendOptions &options,
                             TimingScope &timing) {
  auto order = llvm::to_vector(llvm::seq<size_t>(0, parts.size()));
  llvm::stable_sort(
      order, [&](size_t a, size_t b) { return parts[a].size > parts[b].size; });
  std::atomic<bool> failed = false;
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(getNumJobs(options)));
  for (size_t index : order)
    pool.async([&, index] {
      StringRef object = objects.empty() ? StringRef() : objects[index];
      // A fatal error of LLVM's ends this part, not the process.
      if (mlir::failed(pp::runRecoverably(loc, [&] {
            return buildPart(loc, parts[index], object, options, timing);
          })))
        failed = true;
    });
  pool.wait();
  return failure(failed);
}

std::unique_ptr<llvm::Module> pp::mergeParts(Location loc,
                                             ArrayRef<ModulePart> parts,
                                             llvm::LLVMContext &context) {
  std::unique_ptr<llvm::Module> merged;
  for (const ModulePart &part : parts) {
    std::unique_ptr<llvm::Module> module = readPart(loc, part, context);
    if (!module)
      return nullptr;
    if (!merged) {
      merged = std::move(module);
      continue;
    }
    if (llvm::Linker::linkModules(*merged, std::move(module))) {
      emitError(loc) << "cannot link the module's parts";
      return nullptr;
    }
  }
  return merged;
}
