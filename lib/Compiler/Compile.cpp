//===- Compile.cpp - a training step to a pipelined MPI program -----------===//
//
// The compiler driver: runs pp's pipelines and upstream lowering in process,
// emits objects with LLVM (Backend.cpp) and links them against libpprt, or
// for a profile, runs the program it built.
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/Compile.h"

#include "Backend.h"

#include "pp/Compiler/FatalErrors.h"

#include "pp/Dialect/PP/Analysis/CostProfile.h"
#include "pp/Dialect/PP/Analysis/DeviceDescription.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Dialect/PP/Transforms/Schedule/ShapeVariants.h"
#include "pp/Dialect/PP/Transforms/Schedule/StepPlans.h"
#include "pp/Dialect/PP/Utils/InputFile.h"
#include "pp/InitAll.h"
#include "pp/Pipelines/Passes.h"
#include "pp/Scheduling/ScheduleProblem.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace mlir::pp;

StringRef pp::getDefaultOutput(EmitKind emit) {
  switch (emit) {
  case EmitKind::Executable:
    return "train";
  case EmitKind::Object:
    return "train.o";
  case EmitKind::Profile:
    return "profile.json";
  case EmitKind::Schedule:
  case EmitKind::MLIR:
  case EmitKind::LLVM:
    return "-";
  }
  return "-";
}

StringRef pp::getMPIExec() { return PP_MPIEXEC; }

void pp::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // --parallel-loops: omp.parallel regions as OpenMP runtime calls.
  registerOpenMPDialectTranslation(registry);
  // --target=cuda: kernel launches and their embedded binary.
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

/// Where errors about the option or file `name` are reported.
static Location getOptionLoc(MLIRContext &context, StringRef name) {
  return NameLoc::get(StringAttr::get(&context, name));
}

/// Whether `choice` is a search that orders actions by their costs.
static bool isScheduleSearch(const sched::ScheduleChoice &choice) {
  return llvm::is_contained(ArrayRef<StringRef>{"auto", "greedy", "exact"},
                            choice.getName());
}

/// Whether the compile schedules by costs a profiling run measures first:
/// as asked, or for a search that builds an executable for this host
/// without given costs. A search decides on what the program spends here,
/// not on the cost model's estimates.
static bool measuresCosts(const CompileOptions &options) {
  const DriverOptions &driver = options.driver;
  const SchedulePipelineOptions &schedule = options.schedule;
  if (driver.measureCosts.hasValue())
    return driver.measureCosts;
  return driver.emit == EmitKind::Executable &&
         driver.target == CompileTarget::CPU && driver.targetCPU.empty() &&
         schedule.schedule.hasValue() && isScheduleSearch(schedule.schedule) &&
         schedule.costFile.empty() && schedule.devices == 0 &&
         driver.variants.empty() && driver.stepPlans.empty();
}

/// `to` with every option value of `from` but --measure-costs, which is
/// off: the compiles a measurement runs take given or estimated costs.
static void copyUnmeasuredOptions(const CompileOptions &from,
                                  CompileOptions &to) {
  to.schedule.copyOptionValuesFrom(from.schedule);
  to.cpu.copyOptionValuesFrom(from.cpu);
  to.cuda.copyOptionValuesFrom(from.cuda);
  to.driver.copyOptionValuesFrom(from.driver);
  to.driver.measureCosts = false;
  to.configurePassManager = from.configurePassManager;
}

/// At most this many stage counts are tried for a search given --ranks R
/// and no --stages: R, 2R, ... stages. Each measured one costs a profiling
/// run.
static constexpr int64_t kMaxStagesPerRank = 3;

/// Whether the compile chooses how many stages each rank runs: a search
/// (--schedule auto, greedy or exact) given --ranks and no --stages, where
/// nothing else fixes the stages (--devices, a --cost-file's profile,
/// shape variants, step plans, or a profile, which measures given stages).
static bool choosesStageCount(const CompileOptions &options) {
  const DriverOptions &driver = options.driver;
  const SchedulePipelineOptions &schedule = options.schedule;
  return schedule.schedule.hasValue() && isScheduleSearch(schedule.schedule) &&
         !schedule.numStages.hasValue() && schedule.numRanks > 0 &&
         schedule.devices == 0 && schedule.costFile.empty() &&
         driver.emit != EmitKind::Profile && driver.variants.empty() &&
         driver.stepPlans.empty();
}

/// The stage counts tried on --ranks R: R, 2R and 3R, within the supported
/// sizes of a schedule.
static SmallVector<int64_t> getStageCounts(const CompileOptions &options) {
  const SchedulePipelineOptions &schedule = options.schedule;
  SmallVector<int64_t> counts;
  for (int64_t k = 1; k <= kMaxStagesPerRank; ++k) {
    int64_t stages = k * schedule.numRanks;
    if (stages > kMaxPlannedStages ||
        stages * schedule.numMicrobatches > kMaxStageMicrobatches)
      break;
    counts.push_back(stages);
  }
  return counts;
}

/// A measurement asked for (--measure-costs) that cannot run.
static LogicalResult emitMeasureError(MLIRContext &context) {
  return emitError(getOptionLoc(context, "--measure-costs"))
         << "cannot measure the costs to schedule by: give the program "
            "its data with --run-arg (e.g. --run-arg=--tokens=FILE), or "
            "schedule on estimates with --measure-costs=false";
}

/// Says that the schedule follows measured costs.
static void emitMeasuredRemark(MLIRContext &context,
                               const CompileOptions &options) {
  emitRemark(getOptionLoc(context, "--measure-costs"))
      << "scheduling by the costs of " << options.driver.profileSteps.getValue()
      << " profiled steps on this machine";
}

namespace {

/// One stage count a search tries: the makespan pp-simulate finds for its
/// schedule, or why it has none, and the profile it was scheduled by.
struct StageCountTrial {
  int64_t stages;
  std::optional<double> makespan;
  std::string whyNot;
  /// The measured costs (a temporary file); empty: the estimates.
  std::string costFile;
};

/// Holds back the diagnostics of a trial compile, keeping its first error.
class TrialDiagnostics {
public:
  explicit TrialDiagnostics(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
              firstError.empty())
            firstError = diagnostic.str();
          return success();
        }) {}
  std::string firstError;

private:
  ScopedDiagnosticHandler handler;
};

/// One compile: the options with their defaults resolved, and the steps
/// from the model to the output.
class Compilation {
public:
  Compilation(MLIRContext &context, const CompileOptions &options)
      : context(context), options(options), output(options.driver.output) {
    if (output.empty())
      output = getDefaultOutput(options.driver.emit).str();
  }

  FailureOr<CompiledProgram> run(llvm::SourceMgr &sourceMgr,
                                 TimingScope &timing);

private:
  LogicalResult compile(llvm::SourceMgr &sourceMgr, TimingScope &timing,
                        CompiledProgram &program);
  FailureOr<CompiledProgram> runOnMeasuredCosts(llvm::SourceMgr &sourceMgr,
                                                TimingScope &timing);
  FailureOr<CompiledProgram> runOnEstimatedCosts(llvm::SourceMgr &sourceMgr,
                                                 TimingScope &timing,
                                                 StringRef whyNot);
  FailureOr<CompiledProgram> runOverStageCounts(llvm::SourceMgr &sourceMgr,
                                                TimingScope &timing);
  LogicalResult tryStageCount(llvm::SourceMgr &sourceMgr, TimingScope &timing,
                              bool &measure, StageCountTrial &trial);
  std::string measureStageCount(llvm::SourceMgr &sourceMgr, TimingScope &timing,
                                StageCountTrial &trial);
  void scheduleStageCount(llvm::SourceMgr &sourceMgr, TimingScope &timing,
                          StageCountTrial &trial);
  LogicalResult measureCosts(llvm::SourceMgr &sourceMgr, TimingScope &timing,
                             const CompileOptions &from, StringRef path);
  FailureOr<double> simulateSchedule(llvm::SourceMgr &sourceMgr,
                                     TimingScope &timing);
  std::unique_ptr<llvm::TargetMachine> createMachine();
  void warnOnEstimates(StringRef whyNot);

  bool emits(EmitKind kind) const { return options.driver.emit == kind; }
  Location getOutputLoc() { return getOptionLoc(context, output); }
  int64_t getScheduledRanks() const;
  int64_t getScheduledReplicas() const;
  SmallVector<int64_t> getScheduledZero() const;
  ZeroGather getScheduledZeroGather() const;
  sched::ScheduleChoice getScheduledChoice() const;
  void setScheduleOptions(SchedulePipelineOptions &schedule) const;
  void buildLowering(OpPassManager &pm,
                     const llvm::TargetMachine &machine) const;
  /// Schedules each --variant model like `module` and brings its stage
  /// functions in as a shape variant, run by the micro-batches it lists.
  LogicalResult attachVariants(ModuleOp module, TimingScope &timing);
  /// Replaces the schedule by one per distinct plan of the --step-plans
  /// index's steps, with their transfers.
  LogicalResult planSteps(ModuleOp module, TimingScope &timing);
  FailureOr<sched::StepPlanProblem>
  getStepPlanProblem(ModuleOp module, ScheduleOp main, Location loc);
  FailureOr<int64_t> choosePacking(ArrayRef<SmallVector<int64_t>> lines,
                                   const sched::StepPlanProblem &problem,
                                   const sched::ScheduleGenerator &generator,
                                   sched::PlannedSteps &planned);
  LogicalResult runPipeline(ModuleOp module, TimingScope &timing,
                            function_ref<void(OpPassManager &)> build);
  OwningOpRef<ModuleOp> lowerModel(llvm::SourceMgr &sourceMgr,
                                   TimingScope &timing,
                                   const llvm::TargetMachine &machine,
                                   CompiledProgram &program);
  LogicalResult getObjectBase(std::string &base, std::string &program);
  LogicalResult profileExecutable(ArrayRef<std::string> objects,
                                  StringRef program);
  LogicalResult runProfile(StringRef program, int64_t processes);
  LogicalResult writeText(function_ref<void(raw_ostream &)> print);
  LogicalResult build(ModuleOp module, llvm::TargetMachine &machine,
                      TimingScope &timing);

  /// Chooses the layout of --devices on a copy of `module`.
  LogicalResult planLayout(ModuleOp module, TimingScope &timing);

  MLIRContext &context;
  const CompileOptions &options;
  /// pp-plan-parallelism's choice for --devices, each part used where the
  /// options do not set it.
  struct Layout {
    int64_t tensorParallel, stages, replicas;
    /// Each stage's ZeRO level, and whether ZeRO-3 gathers per param.
    SmallVector<int64_t> zero;
    bool gatherPerParam;
  };
  std::optional<Layout> layout;
  /// The file written: the option's, or the default for what is emitted.
  std::string output;
  /// The model's identity (getModelFingerprint), which a profile records.
  /// Set before the compile, that of the same model parsed earlier in the
  /// context (a second parse renames its resources).
  std::string modelFingerprint;
  BackendOptions backendOptions;
  /// Where the step planner's per-variant costs came from.
  struct StepCosts {
    /// The cost file whose measured seconds it used; empty: FLOPs.
    std::string measuredFrom;
    std::string describe() const {
      return measuredFrom.empty()
                 ? "FLOP estimates at the device's peak"
                 : "seconds measured per variant in '" + measuredFrom + "'";
    }
  } stepCosts;
};

} // namespace

/// The ranks the program runs on: the requested ones, except that a profile
/// runs every stage on one process unless ranks are given (compute times
/// need no more). The partition is planned for the requested ranks and
/// schedule regardless, so that the profile measures the stages the real
/// run has.
int64_t Compilation::getScheduledRanks() const {
  if (emits(EmitKind::Profile) && !options.schedule.numRanks.hasValue())
    return 1;
  return options.schedule.numRanks;
}

/// The data-parallel replicas the program runs: the requested ones, or
/// those of the planned layout.
int64_t Compilation::getScheduledReplicas() const {
  if (layout && !options.schedule.numReplicas.hasValue())
    return layout->replicas;
  return options.schedule.numReplicas;
}

/// The ZeRO levels the program runs: the requested ones, or those the
/// planner chose per stage (one value where they are all equal).
SmallVector<int64_t> Compilation::getScheduledZero() const {
  if (layout && !options.schedule.zero.hasValue()) {
    if (llvm::all_equal(layout->zero))
      return {layout->zero.front()};
    return layout->zero;
  }
  if (options.schedule.zero.empty())
    return {0};
  return llvm::to_vector(options.schedule.zero);
}

/// ZeRO-3's unit of gathering: the requested one, or that of the planned
/// layout.
ZeroGather Compilation::getScheduledZeroGather() const {
  if (layout && !options.cpu.zeroGather.hasValue() && layout->gatherPerParam)
    return ZeroGather::Param;
  return options.cpu.zeroGather;
}

/// The schedule the program runs: the requested one, or for a profile with
/// no schedule given or a search (whose choice needs the costs the profile
/// measures) 1f1b, or with several stages per rank the looped `looped-bfs`.
sched::ScheduleChoice Compilation::getScheduledChoice() const {
  const SchedulePipelineOptions &schedule = options.schedule;
  if (schedule.schedule.hasValue() &&
      !(emits(EmitKind::Profile) && isScheduleSearch(schedule.schedule)))
    return schedule.schedule;
  int64_t ranks = getScheduledRanks();
  bool looped = ranks != 0 && ranks < schedule.numStages;
  return sched::ScheduleChoice::get(
      emits(EmitKind::Profile) && looped ? "looped-bfs" : "1f1b");
}

/// How the target's transport synchronises a transfer: MPI's sends (the
/// CPU target) never block; NCCL's wait for their receive.
static TransferSemantics getTransportSemantics(CompileTarget target) {
  return target == CompileTarget::CUDA ? TransferSemantics::rendezvous
                                       : TransferSemantics::async;
}

/// The pipeline's options as given, with the ranks and schedule the program
/// runs; the planner plans for the requested ones. A profile times B and W
/// apart unless --split-backward=false asks for the fused backward.
void Compilation::setScheduleOptions(SchedulePipelineOptions &schedule) const {
  schedule.copyOptionValuesFrom(options.schedule);
  if (layout) {
    const SchedulePipelineOptions &given = options.schedule;
    if (!given.tensorParallel.hasValue())
      schedule.tensorParallel = layout->tensorParallel;
    if (!given.numStages.hasValue())
      schedule.numStages = layout->stages;
  }
  schedule.numReplicas = getScheduledReplicas();
  schedule.zero = ArrayRef<int64_t>(getScheduledZero());
  schedule.zeroGather = getScheduledZeroGather();
  schedule.numRanks = getScheduledRanks();
  schedule.schedule = getScheduledChoice();
  schedule.planRanks = options.schedule.numRanks;
  schedule.planSchedule = options.schedule.schedule;
  if (emits(EmitKind::Profile) && !options.schedule.splitBackward.hasValue())
    schedule.splitBackward = true;
  if (!options.schedule.semantics.hasValue())
    schedule.semantics = getTransportSemantics(options.driver.target);
}

/// Adds the lowering of the target: pp-lower-to-cpu with the target
/// machine's vector width, or pp-lower-to-cuda with the tensor-level
/// options given for both.
void Compilation::buildLowering(OpPassManager &pm,
                                const llvm::TargetMachine &machine) const {
  if (options.driver.target == CompileTarget::CUDA) {
    LowerToCUDAPipelineOptions cuda;
    cuda.copyOptionValuesFrom(options.cuda);
    cuda.setStageCodeOptions(options.cpu);
    return buildLowerToCUDAPipeline(pm, cuda);
  }
  LowerToCPUPipelineOptions cpu;
  cpu.copyOptionValuesFrom(options.cpu);
  cpu.zeroGather = getScheduledZeroGather();
  cpu.vectorBits = getVectorBits(machine);
  buildLowerToCPUPipeline(pm, cpu);
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

/// Runs the pipeline `build` adds on `module`, timed under `timing`.
LogicalResult
Compilation::runPipeline(ModuleOp module, TimingScope &timing,
                         function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext());
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  pm.enableTiming(timing);
  build(pm);
  return pm.run(module);
}

namespace {
/// An option ZeRO-3 does not run with yet: the flag, what it asks for, and
/// why ZeRO-3 cannot do it.
struct Zero3Refusal {
  StringRef option, what, why;
};
} // namespace

/// The first option of `options` ZeRO-3 has not been built and tested
/// with, or none.
static std::optional<Zero3Refusal>
getZero3Refusal(const CompileOptions &options) {
  const SchedulePipelineOptions &schedule = options.schedule;
  if (schedule.schedule.getValue().getName() == "pipedream-2bw")
    return Zero3Refusal{"--schedule", "--schedule pipedream-2bw",
                        "ZeRO-3 gathers one weight version per step"};
  // One gather per rank and step keeps the replicas' collectives in step
  // whatever plan each replica runs; with several stages per rank two
  // plans may gather them in different orders.
  if (!options.driver.stepPlans.empty() && schedule.numRanks != 0 &&
      schedule.numRanks != schedule.numStages)
    return Zero3Refusal{"--step-plans",
                        "--step-plans and several stages per rank",
                        "the replicas' plans may gather their stages in "
                        "different orders"};
  if (options.driver.target == CompileTarget::CUDA)
    return Zero3Refusal{"--target", "--target=cuda",
                        "ZeRO-3 has been checked on the CPU runtime only"};
  return std::nullopt;
}

/// The ZeRO stages --devices chooses from when --zero is not given:
/// --plan-zero's, or those the other options run with.
static SmallVector<int64_t> getZeroLevels(const CompileOptions &options) {
  const SchedulePipelineOptions &schedule = options.schedule;
  if (!schedule.planZero.empty())
    return llvm::to_vector(schedule.planZero);
  if (getZero3Refusal(options))
    return {0, 1};
  return {0, 1, 3};
}

/// Whether --devices may choose ZeRO-3 gathered per param: not where
/// --zero-gather fixes the unit or --step-plans refuses it (the replicas'
/// plans may run their computes, and so gather, in different orders).
static bool mayPlanParamGathers(const CompileOptions &options) {
  return !options.cpu.zeroGather.hasValue() && options.driver.stepPlans.empty();
}

LogicalResult Compilation::planLayout(ModuleOp module, TimingScope &timing) {
  OwningOpRef<ModuleOp> copy(module.clone());
  SchedulePipelineOptions planned;
  planned.copyOptionValuesFrom(options.schedule);
  auto plan = [&](OpPassManager &pm) {
    if (hasTosaOps(*copy))
      buildTosaToLinalgPipeline(pm);
    buildElementwiseToLinalgPipeline(pm);
    buildPlanParallelismPipeline(pm, planned, getZeroLevels(options),
                                 mayPlanParamGathers(options));
  };
  if (failed(runPipeline(*copy, timing, plan)))
    return failure();
  auto step = copy->lookupSymbol<func::FuncOp>(options.schedule.function);
  auto chosen = step ? step->getAttrOfType<DictionaryAttr>("pp.parallelism")
                     : DictionaryAttr();
  if (!chosen)
    return module.emitError("pp-plan-parallelism chose no layout");
  auto get = [&](StringRef name) {
    return cast<IntegerAttr>(chosen.get(name)).getInt();
  };
  auto zero = cast<DenseI64ArrayAttr>(chosen.get("zero")).asArrayRef();
  layout = Layout{get("tensor_parallel"), get("stages"), get("replicas"),
                  llvm::to_vector(zero), get("zero_gather_param") != 0};
  return success();
}

/// The `pp.param` arguments of `function` in the model as written.
static std::vector<CompiledParam> getParams(ModuleOp module,
                                            StringRef function) {
  std::vector<CompiledParam> params;
  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func)
    return params;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (!func.getArgAttr(index, "pp.param"))
      continue;
    CompiledParam param;
    param.argument = index;
    llvm::raw_string_ostream(param.type) << type;
    Type elementType = type;
    if (auto shaped = dyn_cast<ShapedType>(type)) {
      if (shaped.hasRank())
        param.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
      elementType = shaped.getElementType();
    }
    llvm::raw_string_ostream(param.elementType) << elementType;
    params.push_back(std::move(param));
  }
  return params;
}

/// Whether `offset` in `text` lies in a `//` comment.
static bool isInComment(StringRef text, size_t offset) {
  size_t lineStart = text.rfind('\n', offset);
  lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
  return text.slice(lineStart, offset).contains("//");
}

/// MLIR's parsers of linalg.broadcast, linalg.reduce and linalg.transpose
/// store what they parse for `dimensions = [...]` (`permutation`) without
/// checking it, and crash on anything but a list of integers (`[1, ]`, a
/// missing `[`): such a value is an error at its place, before the model is
/// parsed. The generic form's `array<i64: ...>` is left to the parser.
static LogicalResult checkIndexLists(llvm::SourceMgr &sourceMgr,
                                     MLIRContext &context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef text = buffer->getBuffer();
  static const llvm::Regex keyword(
      "(^|[^[:alnum:]_])(dimensions|permutation)[[:space:]]*=[[:space:]]*");
  static const llvm::Regex value(
      "^(array<|\\[[[:space:]]*(-?[0-9]+([[:space:]]*:[[:space:]]*i[0-9]+)?"
      "[[:space:]]*(,[[:space:]]*-?[0-9]+([[:space:]]*:[[:space:]]*i[0-9]+)?"
      "[[:space:]]*)*)?\\])");
  SmallVector<StringRef> match;
  for (size_t offset = 0; keyword.match(text.drop_front(offset), &match);) {
    size_t start = match[2].data() - text.data();
    offset = match[0].data() + match[0].size() - text.data();
    if (isInComment(text, start) || value.match(text.drop_front(offset)))
      continue;
    auto [line, column] = sourceMgr.getLineAndColumn(
        llvm::SMLoc::getFromPointer(text.data() + offset));
    return emitError(FileLineColLoc::get(
               &context, buffer->getBufferIdentifier(), line, column))
           << "expected a list of integers in brackets after '" << match[2]
           << " ='";
  }
  return success();
}

/// `schedule` in a module with declarations of the module's functions (the
/// stage functions its actions run), as `pp-translate` and `pp.Schedule`
/// read it.
static std::string printScheduleModule(ScheduleOp schedule) {
  OpBuilder builder(schedule.getContext());
  OwningOpRef<ModuleOp> module = ModuleOp::create(schedule.getLoc());
  builder.setInsertionPointToEnd(module->getBody());
  for (auto func :
       schedule->getParentOfType<ModuleOp>().getOps<func::FuncOp>()) {
    auto declaration = cast<func::FuncOp>(builder.cloneWithoutRegions(*func));
    declaration.setPrivate();
  }
  builder.clone(*schedule);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

/// Parses the model and runs the registered pipelines: to a verified
/// schedule (whose shape goes into `program`), then (unless the schedule is
/// the output) to the LLVM dialect for `machine`.
OwningOpRef<ModuleOp>
Compilation::lowerModel(llvm::SourceMgr &sourceMgr, TimingScope &timing,
                        const llvm::TargetMachine &machine,
                        CompiledProgram &program) {
  OwningOpRef<ModuleOp> module;
  if (failed(checkIndexLists(sourceMgr, context)))
    return nullptr;
  {
    TimingScope parsing = timing.nest("Parse");
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
  if (!module)
    return nullptr;
  // The passes check a cost file against it: a profile of another model
  // is an error.
  (*module)->removeAttr(kModelFingerprintAttr);
  if (modelFingerprint.empty())
    modelFingerprint = getModelFingerprint(*module);
  (*module)->setAttr(kModelFingerprintAttr,
                     StringAttr::get(&context, modelFingerprint));
  program.params = getParams(*module, options.schedule.function);
  if (options.schedule.devices > 0 && failed(planLayout(*module, timing)))
    return nullptr;
  auto schedule = [&](OpPassManager &pm) {
    if (hasTosaOps(*module))
      buildTosaToLinalgPipeline(pm);
    buildElementwiseToLinalgPipeline(pm);
    SchedulePipelineOptions scheduleOptions;
    setScheduleOptions(scheduleOptions);
    buildSchedulePipeline(pm, scheduleOptions);
  };
  if (failed(runPipeline(*module, timing, schedule)) ||
      failed(attachVariants(*module, timing)) ||
      failed(planSteps(*module, timing)))
    return nullptr;
  for (ScheduleOp op : module->getOps<ScheduleOp>()) {
    program.schedule = op.getName().str();
    program.numStages = op.getNumStages();
    program.numRanks = op.getNumRanks();
    program.numMicrobatches = op.getNumMicrobatches();
    program.numReplicas = op.getNumReplicas().value_or(1);
    program.tensorParallel = getTensorParallelism(op);
    program.scheduleIR = printScheduleModule(op);
  }
  if (emits(EmitKind::Schedule))
    return module;
  auto lower = [&](OpPassManager &pm) { buildLowering(pm, machine); };
  if (failed(runPipeline(*module, timing, lower)))
    return nullptr;
  return module;
}

LogicalResult Compilation::attachVariants(ModuleOp module,
                                          TimingScope &timing) {
  const auto &specs = options.driver.variants;
  if (specs.empty())
    return success();
  Location loc = getOptionLoc(context, "--variant");
  SmallVector<int64_t> microbatchVariants;
  for (auto [k, spec] : llvm::enumerate(specs)) {
    // Planned per step, a variant is a shape the plans may use: MODEL.
    bool planned = !options.driver.stepPlans.empty();
    auto [path, list] = planned ? std::pair<StringRef, StringRef>(spec, "")
                                : StringRef(spec).rsplit(':');
    if ((list.empty() && !planned) || path.empty())
      return emitError(loc) << "'" << spec << "' is not MODEL:MB[,MB...]";
    SmallVector<StringRef> fields;
    if (!list.empty())
      list.split(fields, ',');
    for (StringRef field : fields) {
      int64_t mb;
      if (field.trim().getAsInteger(10, mb) || mb < 0)
        return emitError(loc) << "'" << field << "' in '" << spec
                              << "' is not a micro-batch number";
      if (microbatchVariants.size() <= static_cast<size_t>(mb))
        microbatchVariants.resize(mb + 1, 0);
      if (microbatchVariants[mb] != 0)
        return emitError(loc) << "micro-batch " << mb << " is listed twice";
      microbatchVariants[mb] = k + 1;
    }
    llvm::SourceMgr sourceMgr;
    std::string error;
    auto file = openInputFile(path, &error);
    if (!file)
      return emitError(loc) << error;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    OwningOpRef<ModuleOp> variant =
        parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
    bool tosa = variant && hasTosaOps(*variant);
    auto schedule = [&](OpPassManager &pm) {
      if (tosa)
        buildTosaToLinalgPipeline(pm);
      buildElementwiseToLinalgPipeline(pm);
      SchedulePipelineOptions scheduleOptions;
      setScheduleOptions(scheduleOptions);
      buildSchedulePipeline(pm, scheduleOptions);
    };
    if (!variant || failed(runPipeline(*variant, timing, schedule)) ||
        failed(attachShapeVariant(module, *variant, k + 1)))
      return failure();
  }
  int64_t numMicrobatches = 0;
  for (ScheduleOp op : module.getOps<ScheduleOp>())
    numMicrobatches = op.getNumMicrobatches();
  if (static_cast<int64_t>(microbatchVariants.size()) > numMicrobatches)
    return emitError(loc) << "micro-batch " << microbatchVariants.size() - 1
                          << " is listed, but the program has "
                          << numMicrobatches;
  microbatchVariants.resize(numMicrobatches, 0);
  return assignMicrobatchVariants(module, microbatchVariants);
}

/// The lines of the length index at `path` that hold samples.
static FailureOr<SmallVector<SmallVector<int64_t>>>
readLengthIndex(StringRef path, Location loc) {
  auto buffer = readRegularFile(path, kMaxModelFileBytes);
  if (!buffer)
    return emitError(loc) << "cannot read '" << path
                          << "': " << llvm::toString(buffer.takeError());
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  SmallVector<SmallVector<int64_t>> steps;
  for (auto [index, line] : llvm::enumerate(lines)) {
    SmallVector<StringRef> fields;
    llvm::SplitString(line.split('#').first, fields, " \t,\r");
    SmallVector<int64_t> lengths;
    for (StringRef field : fields) {
      int64_t length;
      if (field.getAsInteger(10, length) || length <= 0)
        return emitError(loc) << "'" << path << "' line " << index + 1 << ": '"
                              << field << "' is not a positive length";
      lengths.push_back(length);
    }
    if (!lengths.empty())
      steps.push_back(std::move(lengths));
  }
  if (steps.empty())
    return emitError(loc) << "'" << path << "' has no step with a sample";
  return steps;
}

/// One line per step (and replica) of `planned`: its micro-batches'
/// samples and shapes, and its plan.
static std::string describeStepPlans(const sched::PlannedSteps &planned,
                                     const sched::StepPlanProblem &problem,
                                     int64_t replicas, StringRef held,
                                     StringRef costs) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << planned.steps.size() / replicas << " steps in "
     << planned.schedules.size() << " plans (" << costs << ")";
  for (auto [index, step] : llvm::enumerate(planned.steps)) {
    const sched::MicrobatchPlan &mbs = step.microbatches;
    os << "\n  step " << index / replicas;
    if (replicas > 1)
      os << " replica " << index % replicas;
    os << ": plan " << planned.scheduleOfStep[index] << ", " << held << " ";
    llvm::interleave(mbs.rows, os, "+");
    os << " at ";
    llvm::interleave(
        mbs.shape, os,
        [&](int64_t shape) {
          os << problem.shapes[shape].rows << "x"
             << problem.shapes[shape].length;
        },
        ", ");
  }
  return text;
}

/// The seconds `cost` (the shapes' units: measured seconds, or FLOPs at the
/// slowest rank's peak rate, --device, --device-file) takes.
static FailureOr<double> getSeconds(double cost, bool measured,
                                    const SchedulePipelineOptions &schedule,
                                    int64_t numRanks, Location loc) {
  if (measured)
    return cost;
  llvm::Expected<SmallVector<DeviceDescription>> devices =
      resolveDevices(schedule.device, schedule.deviceFile, numRanks);
  if (!devices)
    return emitError(loc) << llvm::toString(devices.takeError());
  double peak = std::numeric_limits<double>::infinity();
  for (const DeviceDescription &device : *devices)
    peak = std::min(peak, device.peakFlops);
  return cost / peak;
}

/// Under --packing: plans each step's samples packed into rows of the
/// longest shape as well, and replaces `planned` by the packed plans where
/// asked to or (auto) where the step planner's costs find them quicker.
/// The row length when packed, 0 when not.
FailureOr<int64_t> Compilation::choosePacking(
    ArrayRef<SmallVector<int64_t>> lines, const sched::StepPlanProblem &problem,
    const sched::ScheduleGenerator &generator, sched::PlannedSteps &planned) {
  PackingChoice choice = options.driver.packing;
  if (choice == PackingChoice::Never)
    return 0;
  Location loc = getOptionLoc(context, "--packing");
  int64_t context = sched::getPackingContext(problem);
  SmallVector<SmallVector<int64_t>> rows;
  for (const SmallVector<int64_t> &line : lines)
    rows.push_back(sched::packSamples(line, context));
  int64_t replicas = getScheduledReplicas();
  llvm::Expected<sched::PlannedSteps> packed =
      sched::planSteps(rows, replicas, problem, generator);
  if (!packed && choice == PackingChoice::Auto) {
    emitRemark(loc) << "rows of " << context
                    << " tokens: " << llvm::toString(packed.takeError())
                    << "; step plans";
    return 0;
  }
  if (!packed)
    return emitError(loc) << "rows of " << context
                          << " tokens: " << llvm::toString(packed.takeError());
  auto seconds = [&](const sched::PlannedSteps &steps) {
    return getSeconds(sched::getPipelineTime(steps, replicas),
                      !stepCosts.measuredFrom.empty(), options.schedule,
                      problem.numRanks, loc);
  };
  FailureOr<double> plansTime = seconds(planned);
  FailureOr<double> packedTime = seconds(*packed);
  if (failed(plansTime) || failed(packedTime))
    return failure();
  bool pack = choice == PackingChoice::Always ||
              sched::isPackingQuicker(planned, *packed, replicas);
  emitRemark(loc) << llvm::formatv(
      "step plans {0:e3} s, packing into rows of {1} tokens {2:e3} s a pass "
      "over the index ({3}); {4}",
      *plansTime, context, *packedTime, stepCosts.describe(),
      pack ? (choice == PackingChoice::Always ? "packing, as asked" : "packing")
           : "step plans");
  if (!pack)
    return 0;
  planned = std::move(*packed);
  return context;
}

LogicalResult Compilation::planSteps(ModuleOp module, TimingScope &timing) {
  StringRef path = options.driver.stepPlans;
  if (path.empty())
    return success();
  Location loc = getOptionLoc(context, "--step-plans");
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  FailureOr<SmallVector<SmallVector<int64_t>>> lines =
      readLengthIndex(path, loc);
  if (failed(lines) || schedules.size() != 1)
    return failure();
  ScheduleOp main = schedules.front();
  if (main.getNumWeightVersions() != 1 || main.getNumSlices() != 1)
    return emitError(loc) << "step plans run flushed steps of whole "
                             "micro-batches; schedule '"
                          << main.getName() << "' does not";
  FailureOr<sched::StepPlanProblem> problem =
      getStepPlanProblem(module, main, loc);
  if (failed(problem))
    return failure();
  StringRef name = getScheduledChoice().getName();
  const sched::ScheduleGenerator *generator =
      sched::lookupScheduleGenerator(name);
  if (!generator)
    return emitError(loc) << "schedule '" << name
                          << "' cannot be generated per step";
  problem->microbatchMultiple =
      sched::getMicrobatchMultiple(*generator, problem->numRanks);
  int64_t replicas = getScheduledReplicas();
  llvm::Expected<sched::PlannedSteps> planned =
      sched::planSteps(*lines, replicas, *problem, *generator);
  if (!planned)
    return emitError(loc) << "'" << path
                          << "': " << llvm::toString(planned.takeError());
  FailureOr<int64_t> packed =
      choosePacking(*lines, *problem, *generator, *planned);
  if (failed(packed))
    return failure();
  if (failed(addStepPlans(module, *planned, *problem, lines->size(), replicas)))
    return failure();
  if (*packed)
    module->setAttr(kPackedRowsAttr,
                    IntegerAttr::get(IntegerType::get(&context, 64), *packed));
  emitRemark(loc) << describeStepPlans(*planned, *problem, replicas,
                                       *packed ? "rows" : "samples",
                                       stepCosts.describe());
  return runPipeline(module, timing, [&](OpPassManager &pm) {
    PPInsertTransfersOptions transfers;
    transfers.numReplicas = replicas;
    transfers.zero = getScheduledZero();
    pm.addPass(createPPInsertTransfers(transfers));
    pm.addPass(createPPVerifySchedule());
  });
}

/// What every step is planned for: `main`'s stages and ranks, each
/// variant's shape at the costs the --cost-file measured for it (else its
/// stage functions' FLOPs), and each rank's activation cap under
/// --memory-cap (`main`'s).
FailureOr<sched::StepPlanProblem>
Compilation::getStepPlanProblem(ModuleOp module, ScheduleOp main,
                                Location loc) {
  sched::StepPlanProblem problem;
  problem.numStages = main.getNumStages();
  problem.numRanks = main.getNumRanks();
  problem.splitBackward = main.walk([](ComputeOp op) {
                                return op.getPhase() == Phase::backward_input
                                           ? WalkResult::interrupt()
                                           : WalkResult::advance();
                              })
                              .wasInterrupted();
  FailureOr<std::vector<sched::StepShape>> shapes =
      getVariantShapes(module, problem.splitBackward, loc);
  if (failed(shapes))
    return failure();
  problem.shapes = std::move(*shapes);
  stepCosts.measuredFrom.clear();
  StringRef costFile = options.schedule.costFile;
  if (!costFile.empty()) {
    FailureOr<CostProfile> profile =
        readCostProfile(costFile, [&] { return emitError(loc); });
    if (failed(profile))
      return failure();
    if (profile->getNumVariants()) {
      if (failed(
              setMeasuredVariantCosts(*profile, costFile, problem.shapes, loc)))
        return failure();
      stepCosts.measuredFrom = costFile.str();
    }
  }
  for (int64_t rank = 0; rank < problem.numRanks; ++rank)
    if (std::optional<double> cap = main.getRankMemoryCap(rank))
      problem.memoryCap.push_back(*cap);
  return problem;
}

/// Runs the program just built with --profile, on one process per pipeline
/// rank (and replica), writing the profile to the output.
LogicalResult Compilation::runProfile(StringRef program, int64_t processes) {
  const DriverOptions &driver = options.driver;
  std::string steps =
      "--steps=" + std::to_string(driver.profileSteps.getValue());
  std::string warmup =
      "--warmup=" + std::to_string(driver.profileWarmup.getValue());
  std::string profile = "--profile=" + output;
  std::string model = "--profile-model=" + modelFingerprint;
  std::string np = std::to_string(processes);
  SmallVector<StringRef> args;
  std::string launcher = program.str();
  if (processes > 1) {
    llvm::ErrorOr<std::string> mpiexec =
        llvm::sys::findProgramByName(getMPIExec());
    if (!mpiexec)
      return emitError(getOutputLoc())
             << "cannot find '" << getMPIExec() << "' to run the " << np
             << " processes with";
    launcher = *mpiexec;
    args = {launcher, "-n", np};
  }
  args.append({program, steps, warmup, profile, model});
  for (const std::string &arg : driver.runArgs)
    args.push_back(arg);
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(launcher, args, std::nullopt, {}, 0, 0, &error);
  if (rc != 0)
    return emitError(getOutputLoc())
           << "the profiling run failed" << (error.empty() ? "" : ": " + error);
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
LogicalResult Compilation::profileExecutable(ArrayRef<std::string> objects,
                                             StringRef program) {
  LogicalResult profiled =
      linkExecutable(getOutputLoc(), objects, backendOptions, program);
  if (succeeded(profiled)) {
    SchedulePipelineOptions scheduled;
    setScheduleOptions(scheduled);
    int64_t ranks = getScheduledRanks();
    profiled = runProfile(program, (ranks ? ranks : scheduled.numStages) *
                                       scheduled.numReplicas *
                                       scheduled.tensorParallel);
  }
  llvm::sys::fs::remove(program);
  return profiled;
}

LogicalResult Compilation::writeText(function_ref<void(raw_ostream &)> print) {
  std::string error;
  auto out = openOutputFile(output, &error);
  if (!out)
    return emitError(getOutputLoc()) << error;
  print(out->os());
  if (failed(checkStream(getOutputLoc(), out->os(), output)))
    return failure();
  out->keep();
  return success();
}

/// Where the parts' objects go: next to the executable, or for a profile
/// next to a temporary program (`program`). Empty for one object or IR.
LogicalResult Compilation::getObjectBase(std::string &base,
                                         std::string &program) {
  if (emits(EmitKind::Executable))
    base = output;
  if (!emits(EmitKind::Profile))
    return success();
  SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("pp-profile", "", path))
    return emitError(getOutputLoc()) << "cannot create a temporary file";
  program = base = path.str().str();
  return success();
}

/// Translates the lowered `module` to LLVM IR and builds the output from it.
LogicalResult Compilation::build(ModuleOp module, llvm::TargetMachine &machine,
                                 TimingScope &timing) {
  llvm::LLVMContext llvmContext;
  forwardDiagnostics(llvmContext, getOutputLoc());
  std::unique_ptr<llvm::Module> llvmModule;
  {
    TimingScope translation = timing.nest("Translate to LLVM IR");
    llvmModule = translateModuleToLLVMIR(module, llvmContext);
  }
  if (!llvmModule)
    return module->emitError("translation to LLVM IR failed");
  // Parts optimise and compile in parallel; -O0 keeps the module whole, as
  // translated.
  SmallVector<ModulePart> parts;
  {
    TimingScope splitting = timing.nest("Split module");
    setTarget(*llvmModule, machine);
    parts = options.driver.optLevel == 0
                ? SmallVector<ModulePart>{writeModule(*llvmModule)}
                : splitModule(*llvmModule, getNumJobs(backendOptions));
    llvmModule.reset();
  }
  std::string base, program;
  if (failed(getObjectBase(base, program)))
    return failure();
  SmallVector<std::string> objects = base.empty()
                                         ? SmallVector<std::string>()
                                         : getObjectPaths(base, parts.size());
  Location loc = getOutputLoc();
  LogicalResult built = success();
  {
    TimingScope backend = timing.nest("LLVM backend (parallel)");
    built = buildParts(loc, parts, objects, backendOptions, backend);
  }
  if (succeeded(built) && emits(EmitKind::Executable)) {
    TimingScope linking = timing.nest("Link");
    built = linkExecutable(loc, objects, backendOptions, output);
  } else if (succeeded(built) && emits(EmitKind::Profile)) {
    built = profileExecutable(objects, program);
  }
  removeFiles(objects);
  if (failed(built) || emits(EmitKind::Executable) || emits(EmitKind::Profile))
    return built;
  std::unique_ptr<llvm::Module> merged;
  {
    TimingScope merging = timing.nest("Merge parts");
    merged = mergeParts(loc, parts, llvmContext);
  }
  if (!merged)
    return failure();
  if (emits(EmitKind::LLVM))
    return writeText([&](raw_ostream &os) { merged->print(os, nullptr); });
  TimingScope codegen = timing.nest("Code generation");
  return emitObject(loc, *merged, machine, output);
}

FailureOr<CompiledProgram> Compilation::run(llvm::SourceMgr &sourceMgr,
                                            TimingScope &timing) {
  if (failed(checkCompileOptions(context, options)))
    return failure();
  if (choosesStageCount(options))
    return runOverStageCounts(sourceMgr, timing);
  if (measuresCosts(options))
    return runOnMeasuredCosts(sourceMgr, timing);
  // The parts build on threads of their own, each recoverable too.
  CompiledProgram program;
  if (failed(runRecoverably(
          getOutputLoc(), [&] { return compile(sourceMgr, timing, program); })))
    return failure();
  return program;
}

/// Profiles the program on the ranks it runs on (as --emit=profile, under a
/// fixed schedule with split backwards), then compiles it by the measured
/// costs, as with --cost-file.
FailureOr<CompiledProgram>
Compilation::runOnMeasuredCosts(llvm::SourceMgr &sourceMgr,
                                TimingScope &timing) {
  SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("pp-costs", "json", path))
    return emitError(getOutputLoc()) << "cannot create a temporary file";
  llvm::FileRemover remover(path);
  bool asked = options.driver.measureCosts.hasValue();
  std::string whyNot;
  LogicalResult profiled = failure();
  {
    TimingScope measuring = timing.nest("Measure costs");
    // Measuring by default, a failed profile is a warning below.
    std::optional<ScopedDiagnosticHandler> quiet;
    if (!asked)
      quiet.emplace(&context, [&](Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() != DiagnosticSeverity::Error)
          return failure();
        if (whyNot.empty())
          whyNot = diagnostic.str();
        return success();
      });
    profiled = measureCosts(sourceMgr, measuring, options, path);
  }
  if (failed(profiled) && asked)
    return emitMeasureError(context);
  if (failed(profiled))
    return runOnEstimatedCosts(sourceMgr, timing, whyNot);
  emitMeasuredRemark(context, options);
  CompileOptions measured;
  copyUnmeasuredOptions(options, measured);
  measured.schedule.costFile = path.str().str();
  Compilation compilation(context, measured);
  compilation.modelFingerprint = modelFingerprint;
  return compilation.run(sourceMgr, timing);
}

/// Profiles the program `from` describes, as --emit=profile under a fixed
/// schedule with split backwards but on the ranks the run has, into `path`.
LogicalResult Compilation::measureCosts(llvm::SourceMgr &sourceMgr,
                                        TimingScope &timing,
                                        const CompileOptions &from,
                                        StringRef path) {
  CompileOptions profiling;
  copyUnmeasuredOptions(from, profiling);
  profiling.driver.emit = EmitKind::Profile;
  profiling.driver.output = path.str();
  // The run's ranks, which a profile otherwise folds into one process.
  profiling.schedule.numRanks = from.schedule.numRanks.getValue();
  Compilation profiler(context, profiling);
  profiler.modelFingerprint = modelFingerprint;
  LogicalResult profiled = profiler.run(sourceMgr, timing);
  modelFingerprint = profiler.modelFingerprint;
  return profiled;
}

/// Reports each stage count tried and the one chosen, or fails with an
/// error where none works.
static LogicalResult reportStageCounts(MLIRContext &context,
                                       const CompileOptions &options,
                                       ArrayRef<StageCountTrial> trials,
                                       const StageCountTrial *best) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      trials, os,
      [&](const StageCountTrial &trial) {
        os << trial.stages << " stages: ";
        if (trial.makespan)
          os << "makespan " << sched::formatPrecisely(*trial.makespan);
        else
          os << trial.whyNot;
      },
      "; ");
  StringRef name = options.schedule.schedule.getValue().getName();
  int64_t ranks = options.schedule.numRanks;
  if (!best)
    return emitError(getOptionLoc(context, "--ranks"))
           << "--schedule " << name << " found no stage count to run on "
           << ranks << " ranks (" << text
           << "); give --stages to see the errors in the model";
  emitRemark(getOptionLoc(context, "--stages"))
      << "--schedule " << name << " on " << ranks << " ranks: " << best->stages
      << " stages, the fastest of " << text;
  return success();
}

/// Tries each stage count of getStageCounts on its own measured costs
/// (or the estimates), and compiles the one whose schedule pp-simulate
/// finds fastest; of equally fast ones, the fewest stages. A count that
/// fails (the model cannot be cut into it, no schedule fits the memory
/// caps, its profile fails) is skipped, with a note in the remark.
FailureOr<CompiledProgram>
Compilation::runOverStageCounts(llvm::SourceMgr &sourceMgr,
                                TimingScope &timing) {
  bool measure = measuresCosts(options);
  SmallVector<StageCountTrial> trials;
  llvm::scope_exit removeProfiles([&] {
    for (const StageCountTrial &trial : trials)
      if (!trial.costFile.empty())
        llvm::sys::fs::remove(trial.costFile);
  });
  for (int64_t stages : getStageCounts(options)) {
    StageCountTrial &trial = trials.emplace_back(StageCountTrial{stages});
    if (failed(tryStageCount(sourceMgr, timing, measure, trial)))
      return failure();
  }
  const StageCountTrial *best = nullptr;
  for (const StageCountTrial &trial : trials)
    if (trial.makespan &&
        (!best || *trial.makespan < *best->makespan * (1 - 1e-9)))
      best = &trial;
  if (failed(reportStageCounts(context, options, trials, best)))
    return failure();
  if (!best->costFile.empty())
    emitMeasuredRemark(context, options);
  CompileOptions chosen;
  copyUnmeasuredOptions(options, chosen);
  chosen.schedule.numStages = best->stages;
  chosen.schedule.costFile = best->costFile;
  Compilation compilation(context, chosen);
  compilation.modelFingerprint = modelFingerprint;
  return compilation.run(sourceMgr, timing);
}

/// Schedules the program at `trial`'s stage count by its measured costs
/// (`measure`) or the estimates, and records the makespan or why there is
/// none. Where the first count's program can be scheduled but not
/// measured, a measurement asked for is an error, and a default one gives
/// way to the estimates at every count, with a warning.
LogicalResult Compilation::tryStageCount(llvm::SourceMgr &sourceMgr,
                                         TimingScope &timing, bool &measure,
                                         StageCountTrial &trial) {
  TimingScope trying =
      timing.nest(("Schedule on " + Twine(trial.stages) + " stages").str());
  std::string whyNot =
      measure ? measureStageCount(sourceMgr, trying, trial) : "";
  if (!whyNot.empty() && trial.stages != options.schedule.numRanks) {
    trial.whyNot = whyNot;
    return success();
  }
  scheduleStageCount(sourceMgr, trying, trial);
  if (whyNot.empty() || !trial.makespan)
    return success();
  if (options.driver.measureCosts.hasValue())
    return emitMeasureError(context);
  warnOnEstimates(whyNot);
  measure = false;
  return success();
}

/// Profiles the program at `trial`'s stage count into a temporary file,
/// `trial`'s cost file; or why it cannot.
std::string Compilation::measureStageCount(llvm::SourceMgr &sourceMgr,
                                           TimingScope &timing,
                                           StageCountTrial &trial) {
  SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("pp-costs", "json", path))
    return "cannot create a temporary file";
  CompileOptions atStages;
  copyUnmeasuredOptions(options, atStages);
  atStages.schedule.numStages = trial.stages;
  TrialDiagnostics diagnostics(context);
  TimingScope measuring = timing.nest("Measure costs");
  if (succeeded(measureCosts(sourceMgr, measuring, atStages, path))) {
    trial.costFile = path.str().str();
    return "";
  }
  llvm::sys::fs::remove(path);
  return diagnostics.firstError.empty() ? "the profiling run failed"
                                        : diagnostics.firstError;
}

/// Schedules the program at `trial`'s stage count by its cost file, or the
/// estimates, and records pp-simulate's makespan or the first error.
void Compilation::scheduleStageCount(llvm::SourceMgr &sourceMgr,
                                     TimingScope &timing,
                                     StageCountTrial &trial) {
  CompileOptions atStages;
  copyUnmeasuredOptions(options, atStages);
  atStages.schedule.numStages = trial.stages;
  atStages.schedule.costFile = trial.costFile;
  atStages.driver.emit = EmitKind::Schedule;
  Compilation compilation(context, atStages);
  compilation.modelFingerprint = modelFingerprint;
  TrialDiagnostics diagnostics(context);
  FailureOr<double> makespan = compilation.simulateSchedule(sourceMgr, timing);
  modelFingerprint = compilation.modelFingerprint;
  trial.makespan.reset();
  trial.whyNot.clear();
  if (succeeded(makespan))
    trial.makespan = *makespan;
  else
    trial.whyNot = diagnostics.firstError;
}

/// The makespan pp-simulate finds for the schedule the options give the
/// program.
FailureOr<double> Compilation::simulateSchedule(llvm::SourceMgr &sourceMgr,
                                                TimingScope &timing) {
  FailureOr<double> makespan = failure();
  (void)runRecoverably(getOutputLoc(), [&] {
    std::unique_ptr<llvm::TargetMachine> machine = createMachine();
    CompiledProgram program;
    OwningOpRef<ModuleOp> module =
        machine ? lowerModel(sourceMgr, timing, *machine, program) : nullptr;
    if (!module || failed(runPipeline(*module, timing, [](OpPassManager &pm) {
          pm.addPass(createPPSimulate());
        })))
      return failure();
    for (ScheduleOp schedule : module->getOps<ScheduleOp>())
      if (auto attr = schedule->getAttrOfType<FloatAttr>(kMakespanAttr))
        makespan = attr.getValueAsDouble();
    return success(succeeded(makespan));
  });
  return makespan;
}

/// Compiles by the cost model's estimates where measuring by default
/// failed (`whyNot`), saying so.
FailureOr<CompiledProgram>
Compilation::runOnEstimatedCosts(llvm::SourceMgr &sourceMgr,
                                 TimingScope &timing, StringRef whyNot) {
  warnOnEstimates(whyNot);
  CompileOptions estimated;
  copyUnmeasuredOptions(options, estimated);
  Compilation compilation(context, estimated);
  return compilation.run(sourceMgr, timing);
}

/// Says that a default measurement failed (`whyNot`), and the compile
/// schedules on the estimates.
void Compilation::warnOnEstimates(StringRef whyNot) {
  emitWarning(getOptionLoc(context, "--measure-costs"))
      << "scheduling on estimated costs: " << whyNot
      << "; give the program its data with --run-arg (e.g. "
         "--run-arg=--tokens=FILE) to schedule by measured costs";
}

/// The target machine of the options, with the back end's options set.
std::unique_ptr<llvm::TargetMachine> Compilation::createMachine() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  const DriverOptions &driver = options.driver;
  if (!driver.targetCPU.empty())
    backendOptions.cpu = driver.targetCPU.getValue();
  if (!driver.targetFeatures.empty())
    backendOptions.features = driver.targetFeatures.getValue();
  backendOptions.optLevel = driver.optLevel;
  backendOptions.jobs = driver.jobs;
  backendOptions.openmp =
      driver.target == CompileTarget::CPU && options.cpu.parallelLoops;
  return createTargetMachine(getOptionLoc(context, "--target-cpu"),
                             backendOptions, driver.optLevel);
}

LogicalResult Compilation::compile(llvm::SourceMgr &sourceMgr,
                                   TimingScope &timing,
                                   CompiledProgram &program) {
  std::unique_ptr<llvm::TargetMachine> machine = createMachine();
  if (!machine)
    return failure();
  program.output = output;
  OwningOpRef<ModuleOp> module =
      lowerModel(sourceMgr, timing, *machine, program);
  if (!module)
    return failure();
  return emits(EmitKind::Schedule) || emits(EmitKind::MLIR)
             ? writeText([&](raw_ostream &os) { module->print(os); })
             : build(*module, *machine, timing);
}

/// Checks that `--<name>` lies in [min, max]; `meaning` explains a special
/// minimum.
static LogicalResult checkRange(MLIRContext &context, StringRef name,
                                int64_t value, int64_t min, int64_t max,
                                StringRef meaning = "") {
  if (value >= min && value <= max)
    return success();
  std::string option = ("--" + name).str();
  return emitError(getOptionLoc(context, option))
         << option << " must be between " << min << " and " << max << meaning
         << ", got " << value;
}

/// A file the compile reads, and what it is for messages.
struct InputFile {
  StringRef path;
  StringRef what;
};

/// Fails with an error if the output cannot be created: its directory is
/// missing or not writable, or it is one of `inputs` (the same file, by
/// device and inode, under any name), which writing would destroy.
/// Checked before compiling, which can take long.
static LogicalResult checkOutputPath(MLIRContext &context, StringRef path,
                                     ArrayRef<InputFile> inputs) {
  if (path == "-")
    return success();
  Location loc = getOptionLoc(context, path);
  for (const InputFile &input : inputs) {
    bool same = false;
    if (!input.path.empty() && input.path != "-" &&
        !llvm::sys::fs::equivalent(input.path, path, same) && same)
      return emitError(loc)
             << "cannot write '" << path << "': it is " << input.what << " '"
             << input.path << "'; give the output a name of its own";
  }
  SmallString<128> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  if (!llvm::sys::fs::is_directory(dir))
    return emitError(loc) << "cannot write '" << path << "': '" << dir
                          << "' is not a directory";
  if (llvm::sys::fs::is_directory(path))
    return emitError(loc) << "cannot write '" << path << "': it is a directory";
  bool exists = llvm::sys::fs::exists(path);
  if (std::error_code ec = llvm::sys::fs::access(
          exists ? path : StringRef(dir), llvm::sys::fs::AccessMode::Write))
    return emitError(loc) << "cannot write '" << path << "': " << ec.message();
  return success();
}

/// Whether `schedule` runs the sequence slices of every micro-batch in the
/// order their attention needs (forwards in slice order, backwards in
/// reverse) on the options' stages and ranks. Generators whose order does
/// not depend on costs show it on unit costs; a problem the generator
/// refuses is left to the compile, which reports the generator's reason.
static bool ordersSlices(const sched::ScheduleChoice &schedule,
                         const SchedulePipelineOptions &options) {
  int64_t ranks = options.numRanks ? options.numRanks : options.numStages;
  sched::ScheduleProblem problem{options.numStages,
                                 options.numMicrobatches * options.slices,
                                 ranks, options.splitBackward};
  problem.numSlices = options.slices;
  llvm::Expected<sched::GeneratedSchedule> generated =
      schedule.generate(problem);
  if (!generated) {
    llvm::consumeError(generated.takeError());
    return true;
  }
  if (llvm::Error error = sched::verifySliceOrder(problem, *generated)) {
    llvm::consumeError(std::move(error));
    return false;
  }
  return true;
}

/// Fails with an error naming the options when the schedule and parallelism
/// options ask for a combination the compiler does not build: sequence
/// slices with per-step plans, per-step plans under pipedream-2bw, and
/// sequence slices under a schedule that does not keep them in order.
static LogicalResult checkParallelismOptions(MLIRContext &context,
                                             const CompileOptions &options) {
  const SchedulePipelineOptions &schedule = options.schedule;
  int64_t slices = schedule.slices;
  if (failed(checkRange(context, "slices", slices, 1, kMaxMicrobatches)))
    return failure();
  // Both are at most kMaxMicrobatches here, so the product fits.
  if (schedule.numMicrobatches * slices > kMaxMicrobatches)
    return emitError(getOptionLoc(context, "--slices"))
           << "--microbatches " << schedule.numMicrobatches.getValue()
           << " x --slices " << slices << " is too many slices: at most "
           << kMaxMicrobatches << " are supported";
  if (schedule.numStages * schedule.numMicrobatches * slices >
      kMaxStageMicrobatches)
    return emitError(getOptionLoc(context, "--slices"))
           << "--stages " << schedule.numStages.getValue()
           << " x --microbatches " << schedule.numMicrobatches.getValue()
           << " x --slices " << slices << " is too large a schedule: at most "
           << kMaxStageMicrobatches << " stage slices are supported";
  if (options.driver.stepPlans.empty() &&
      options.driver.packing != PackingChoice::Never)
    return emitError(getOptionLoc(context, "--packing"))
           << "--packing chooses between step plans and packed rows: give "
              "it --step-plans INDEX";
  if (!options.driver.stepPlans.empty() &&
      schedule.schedule.getValue().getName() == "pipedream-2bw")
    return emitError(getOptionLoc(context, "--step-plans"))
           << "--step-plans cannot be combined with --schedule pipedream-2bw: "
              "the per-step plans run flushed steps, and pipedream-2bw's "
              "steps overlap";
  if (!options.driver.stepPlans.empty() && slices > 1)
    return emitError(getOptionLoc(context, "--step-plans"))
           << "--step-plans cannot be combined with --slices " << slices
           << " so far: the per-step plans schedule whole micro-batches";
  // With --devices the stages and ranks are planned later; the schedule
  // pass checks the slice order then.
  if (slices <= 1 || schedule.devices > 0)
    return success();
  const sched::ScheduleChoice &choice = schedule.schedule;
  StringRef name = choice.getName();
  if (isScheduleSearch(choice))
    return emitError(getOptionLoc(context, "--schedule"))
           << "--schedule " << name
           << " orders whole micro-batches, not sequence slices; with "
              "--slices "
           << slices << " use --schedule seq1f1b";
  if (!ordersSlices(choice, schedule))
    return emitError(getOptionLoc(context, "--schedule"))
           << "--schedule " << name
           << " does not keep sequence slices in order (a slice's backward "
              "must run before those of the earlier slices of its "
              "micro-batch); with --slices "
           << slices << " use --schedule seq1f1b";
  return success();
}

/// `zero`, given as `flag`, is 0, 1 or 3; ZeRO-3 runs with the options it
/// was built and tested with, and refuses the others by name.
static LogicalResult checkZeroLevel(MLIRContext &context,
                                    const CompileOptions &options,
                                    StringRef flag, int64_t zero) {
  if (zero != 0 && zero != 1 && zero != 3)
    return emitError(getOptionLoc(context, flag))
           << flag << " must be 0, 1 or 3, got " << zero
           << (zero == 2 ? " (ZeRO-2 saves nothing over ZeRO-1 here: the "
                           "gradients are accumulated over the micro-batches)"
                         : "");
  std::optional<Zero3Refusal> refusal = getZero3Refusal(options);
  if (zero != 3 || !refusal)
    return success();
  return emitError(getOptionLoc(context, refusal->option))
         << flag << " 3 cannot be combined with " << refusal->what
         << " yet: " << refusal->why;
}

/// `--zero` and every `--plan-zero` stage are runnable ZeRO stages.
static LogicalResult checkZeroOptions(MLIRContext &context,
                                      const CompileOptions &options) {
  const SchedulePipelineOptions &schedule = options.schedule;
  for (int64_t zero : schedule.zero)
    if (failed(checkZeroLevel(context, options, "--zero", zero)))
      return failure();
  // One level per stage needs the stages fixed, by --stages or, with
  // --devices, by the layouts the planner may choose.
  bool stagesFixed = schedule.numStages.hasValue() || schedule.devices > 0;
  if (schedule.zero.size() > 1 &&
      (!stagesFixed ||
       (schedule.numStages.hasValue() &&
        schedule.numStages != static_cast<int64_t>(schedule.zero.size()))))
    return emitError(getOptionLoc(context, "--zero"))
           << "--zero gives " << schedule.zero.size()
           << " levels; give one for every stage or one per stage of "
              "--stages";
  for (int64_t zero : schedule.planZero)
    if (failed(checkZeroLevel(context, options, "--plan-zero", zero)))
      return failure();
  bool gatherParams = options.cpu.zeroGather == ZeroGather::Param;
  if (gatherParams && !llvm::is_contained(schedule.zero, 3))
    return emitError(getOptionLoc(context, "--zero-gather"))
           << "--zero-gather=param needs --zero 3: it gathers the weights "
              "ZeRO-3 shards";
  // Each compute gathers: the replicas must run them in one order.
  if (gatherParams && !options.driver.stepPlans.empty())
    return emitError(getOptionLoc(context, "--step-plans"))
           << "--zero-gather=param cannot be combined with --step-plans yet: "
              "the replicas' plans may run their computes, and so gather "
              "their weights, in different orders";
  return success();
}

/// --measure-costs profiles one program of whole micro-batches and
/// schedules it by what it measured: it takes no costs of its own.
static LogicalResult checkMeasureCosts(MLIRContext &context,
                                       const CompileOptions &options) {
  const DriverOptions &driver = options.driver;
  if (!driver.measureCosts)
    return success();
  Location loc = getOptionLoc(context, "--measure-costs");
  if (driver.emit == EmitKind::Profile)
    return emitError(loc) << "--measure-costs cannot be combined with "
                             "--emit=profile, which writes the costs it "
                             "measures";
  if (!options.schedule.costFile.empty())
    return emitError(loc) << "--measure-costs measures the costs that "
                             "--cost-file gives: give one of them";
  for (auto [given, flag] :
       {std::pair{options.schedule.devices > 0, "--devices"},
        {!driver.variants.empty(), "--variant"},
        {!driver.stepPlans.empty(), "--step-plans"}})
    if (given)
      return emitError(loc)
             << "--measure-costs cannot be combined with " << flag
             << " yet: profile with --emit=profile and give "
                "the profile as --cost-file";
  return success();
}

LogicalResult pp::checkCompileOptions(MLIRContext &context,
                                      const CompileOptions &options,
                                      StringRef modelPath) {
  const DriverOptions &driver = options.driver;
  const SchedulePipelineOptions &schedule = options.schedule;
  bool profiles = driver.emit == EmitKind::Profile || measuresCosts(options);
  if (profiles && (failed(checkRange(context, "profile-steps",
                                     driver.profileSteps, 1, INT32_MAX)) ||
                   failed(checkRange(context, "profile-warmup",
                                     driver.profileWarmup, 0, INT32_MAX))))
    return failure();
  if (failed(checkMeasureCosts(context, options)))
    return failure();
  if (failed(checkRange(context, "stages", schedule.numStages, 1,
                        kMaxPlannedStages)) ||
      failed(checkRange(context, "ranks", schedule.numRanks, 0, kMaxRanks,
                        " (0: one rank per stage)")) ||
      failed(checkRange(context, "microbatches", schedule.numMicrobatches, 1,
                        kMaxMicrobatches)) ||
      failed(checkRange(context, "data-parallel", schedule.numReplicas, 1,
                        kMaxRanks)) ||
      failed(checkZeroOptions(context, options)) ||
      failed(checkRange(context, "tensor-parallel", schedule.tensorParallel, 1,
                        kMaxRanks)) ||
      failed(checkRange(context, "devices", schedule.devices, 0, kMaxProcesses,
                        " (0: no layout planning)")))
    return failure();
  if (schedule.numStages * schedule.numMicrobatches > kMaxStageMicrobatches)
    return emitError(getOptionLoc(context, "--microbatches"))
           << "--stages " << schedule.numStages.getValue()
           << " x --microbatches " << schedule.numMicrobatches.getValue()
           << " is too large a schedule: at most " << kMaxStageMicrobatches
           << " stage micro-batches are supported";
  // Each factor is at most kMaxRanks here, so the product fits in 64 bits.
  int64_t ranks = schedule.numRanks ? schedule.numRanks : schedule.numStages;
  int64_t processes = ranks * schedule.numReplicas * schedule.tensorParallel;
  if (processes > kMaxProcesses)
    return emitError(getOptionLoc(context, "--data-parallel"))
           << "the program would run on " << processes
           << " processes (ranks x --data-parallel x --tensor-parallel); at "
              "most "
           << kMaxProcesses << " are supported";
  if (driver.target == CompileTarget::CUDA) {
    std::string error = checkLowerToCUDAOptions(options.cuda);
    if (!error.empty())
      return emitError(getOptionLoc(context, "--cuda-chip"))
             << "--cuda-" << error;
  }
  if (driver.target == CompileTarget::CUDA && !PP_RUNTIME_HAS_CUDA &&
      (driver.emit == EmitKind::Executable || driver.emit == EmitKind::Profile))
    return emitError(getOptionLoc(context, "--target"))
           << "--target=cuda links with a libpprt built with CUDA, and this "
              "one was built without (no CUDA toolkit when pp was "
              "configured; see docs/Runtime.md)";
  if (options.cpu.parallelLoops && driver.target == CompileTarget::CPU &&
      !hasOpenMPRuntime() &&
      (driver.emit == EmitKind::Executable || driver.emit == EmitKind::Profile))
    return emitError(getOptionLoc(context, "--parallel-loops"))
           << "--parallel-loops links with the OpenMP runtime, and none was "
              "found when pp was configured (libomp-22-dev; see "
              "docs/Runtime.md)";
  if (options.cpu.precision == GemmPrecision::BF16 &&
      options.cpu.gemm == GemmChoice::Generated)
    return emitError(getOptionLoc(context, "--precision"))
           << "--precision=bf16 computes GEMMs through pprt_gemm; it cannot "
              "be combined with --gemm=generated";
  if (failed(checkParallelismOptions(context, options)))
    return failure();
  if (driver.optLevel > 3)
    return emitError(getOptionLoc(context, "-O"))
           << "-O takes 0, 1, 2 or 3, got " << driver.optLevel.getValue();
  StringRef output = driver.output.empty() ? getDefaultOutput(driver.emit)
                                           : StringRef(driver.output);
  InputFile inputs[] = {{modelPath, "the model"},
                        {schedule.costFile, "the --cost-file"},
                        {schedule.deviceFile, "the --device-file"}};
  return checkOutputPath(context, output, inputs);
}

FailureOr<CompiledProgram> pp::compileModel(llvm::SourceMgr &sourceMgr,
                                            MLIRContext &context,
                                            const CompileOptions &options,
                                            TimingScope &timing) {
  return Compilation(context, options).run(sourceMgr, timing);
}

FailureOr<CompiledProgram> pp::compileModelFile(StringRef path,
                                                llvm::SourceMgr &sourceMgr,
                                                MLIRContext &context,
                                                const CompileOptions &options,
                                                TimingScope &timing) {
  if (failed(checkCompileOptions(context, options, path)))
    return failure();
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      path == "-" ? readStandardInput(kMaxModelFileBytes)
                  : readRegularFile(path, kMaxModelFileBytes);
  if (!file)
    return emitError(getOptionLoc(context, path))
           << "cannot open input file '" << (path == "-" ? "<stdin>" : path)
           << "': " << llvm::toString(file.takeError());
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  return compileModel(sourceMgr, context, options, timing);
}
