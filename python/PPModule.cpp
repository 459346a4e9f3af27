//===- PPModule.cpp - the native half of the pp Python package ------------===//
//
// `pp._pp`: generates, imports, exports, verifies and simulates
// `pp.schedule`s in process, by running pp's passes and translations on
// modules that Python objects own, and compiles models into programs with
// pp's compiler library (pp/Compiler/Compile.h). MLIR's diagnostics become
// `pp.Error` (or `pp.VerifyError`, `pp.CompileError`) exceptions that keep
// each located message.
// python/pp/__init__.py is the documented API over it.
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/Compile.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/InitAll.h"
#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleOption.h"
#include "pp/Target/ScheduleExport.h"
#include "pp/Target/ScheduleImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace nb = nanobind;
using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// One MLIR diagnostic as Python sees it: `location` is `file:line:col`
/// where the diagnostic has a file location.
struct LocatedDiagnostic {
  std::string severity, location, message;
  std::vector<LocatedDiagnostic> notes;

  /// `location: severity: message`, then each note on its own line, as
  /// mlir-opt prints them.
  std::string str() const {
    std::string text = location.empty() ? "" : location + ": ";
    text += severity + ": " + message;
    for (const LocatedDiagnostic &note : notes)
      text += "\n" + note.str();
    return text;
  }
};

/// Which Python exception a DiagnosticError becomes.
enum class ErrorKind {
  /// pp.Error: an input MLIR rejected.
  Error,
  /// pp.VerifyError: a schedule the verifier rejects.
  Verify,
  /// pp.CompileError: a model or options the compiler rejects.
  Compile,
};

/// Thrown when MLIR reported errors.
struct DiagnosticError : std::runtime_error {
  DiagnosticError(ErrorKind kind, std::string summary,
                  std::vector<LocatedDiagnostic> diagnostics)
      : std::runtime_error(std::move(summary)), kind(kind),
        diagnostics(std::move(diagnostics)) {}
  ErrorKind kind;
  std::vector<LocatedDiagnostic> diagnostics;
};

/// Throws `errors` under the summary `what`, which the message follows with
/// every error as mlir-opt prints it.
[[noreturn]] void throwErrors(StringRef what, ErrorKind kind,
                              std::vector<LocatedDiagnostic> errors) {
  std::string summary = what.str();
  for (const LocatedDiagnostic &error : errors)
    summary += "\n" + error.str();
  throw DiagnosticError(kind, summary, std::move(errors));
}

std::string formatLocation(Location loc) {
  if (isa<UnknownLoc>(loc))
    return "";
  // The compiler names the option or file an error is about.
  if (auto name = dyn_cast<NameLoc>(loc);
      name && isa<UnknownLoc>(name.getChildLoc()))
    return name.getName().str();
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn());
  std::string text;
  llvm::raw_string_ostream(text) << loc;
  return text;
}

StringRef getSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// A call site's location is the callee's, and each caller a "called from"
/// note, as mlir-opt prints them: a PyTorch model's op names the model's
/// line that called it.
LocatedDiagnostic toLocated(Diagnostic &diag) {
  Location loc = diag.getLocation();
  SmallVector<Location> callers;
  while (auto call = dyn_cast<CallSiteLoc>(loc)) {
    callers.push_back(call.getCaller());
    loc = call.getCallee();
  }
  LocatedDiagnostic result{getSeverityName(diag.getSeverity()).str(),
                           formatLocation(loc),
                           diag.str(),
                           {}};
  for (size_t i = 0; i < callers.size(); ++i) {
    Location caller = callers[i];
    // A caller may itself be a call site: its callee is the calling line.
    while (auto call = dyn_cast<CallSiteLoc>(caller)) {
      callers.insert(callers.begin() + i + 1, call.getCaller());
      caller = call.getCallee();
    }
    result.notes.push_back({"note", formatLocation(caller), "called from", {}});
  }
  for (Diagnostic &note : diag.getNotes())
    result.notes.push_back(toLocated(note));
  return result;
}

/// Collects every diagnostic emitted in the context while it lives.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          diagnostics.push_back(toLocated(diag));
          return success();
        }) {}

  /// The remarks, e.g. what `auto` found.
  std::vector<std::string> getRemarks() const {
    std::vector<std::string> remarks;
    for (const LocatedDiagnostic &diag : diagnostics)
      if (diag.severity == "remark")
        remarks.push_back(diag.message);
    return remarks;
  }

  /// The errors (and their notes) collected so far.
  std::vector<LocatedDiagnostic> getErrors() const {
    std::vector<LocatedDiagnostic> errors;
    for (const LocatedDiagnostic &diag : diagnostics)
      if (diag.severity == "error")
        errors.push_back(diag);
    return errors;
  }

  /// Throws the errors collected so far.
  [[noreturn]] void raise(StringRef what,
                          ErrorKind kind = ErrorKind::Error) const {
    throwErrors(what, kind, getErrors());
  }

  std::vector<LocatedDiagnostic> diagnostics;

private:
  ScopedDiagnosticHandler handler;
};

/// The one context every schedule lives in. Never destroyed: Python may
/// free schedules after static destructors ran.
MLIRContext &getContext() {
  static MLIRContext *context = [] {
    // Every dialect pp-opt knows, so that from_mlir reads any of its
    // outputs (a schedule next to the model's functions).
    DialectRegistry registry;
    mlir::pp::registerAllDialects(registry);
    auto *context = new MLIRContext(registry);
    context->loadDialect<PPDialect>();
    // A failing pass would otherwise attach the whole module to its error.
    context->printOpOnDiagnostic(false);
    return context;
  }();
  return *context;
}

//===----------------------------------------------------------------------===//
// Schedule
//===----------------------------------------------------------------------===//

/// A module holding one `pp.schedule`.
struct Schedule {
  OwningOpRef<ModuleOp> module;
  /// Remarks of the passes that made it (auto's search result).
  std::vector<std::string> remarks;

  ModuleOp getModule() const { return module.get(); }
  ScheduleOp get() const { return *getModule().getOps<ScheduleOp>().begin(); }
};

/// Takes `module` as a schedule, or raises with the diagnostics of why not.
Schedule adoptSchedule(OwningOpRef<ModuleOp> module,
                       const DiagnosticCapture &capture, StringRef what) {
  if (!module || failed(findExportedSchedule(*module)))
    capture.raise(what);
  return Schedule{std::move(module), capture.getRemarks()};
}

/// Runs `pm` on a module; raises with its diagnostics on failure.
void runPasses(PassManager &pm, ModuleOp module,
               const DiagnosticCapture &capture, StringRef what,
               ErrorKind kind = ErrorKind::Error) {
  if (failed(pm.run(module)))
    capture.raise(what, kind);
}

/// Options of pp-schedule and pp-insert-transfers as Python passes them.
struct GenerateRequest {
  PPScheduleOptions schedule;
  int64_t numReplicas = 1;
  bool insertTransfers = true;
};

Schedule generate(const GenerateRequest &request) {
  MLIRContext &context = getContext();
  DiagnosticCapture capture(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(
      FileLineColLoc::get(&context, "<pp.schedule>", /*line=*/1, /*col=*/1));
  PassManager pm(&context);
  pm.addPass(createPPSchedule(request.schedule));
  if (request.insertTransfers) {
    PPInsertTransfersOptions transfers;
    transfers.numReplicas = request.numReplicas;
    transfers.semantics = request.schedule.semantics;
    pm.addPass(createPPInsertTransfers(transfers));
  }
  runPasses(
      pm, *module, capture,
      ("cannot generate schedule '" + request.schedule.schedule.getName() + "'")
          .str());
  return adoptSchedule(std::move(module), capture, "no schedule generated");
}

using Importer = OwningOpRef<ModuleOp> (*)(llvm::SourceMgr &, MLIRContext *);

/// Imports `text` (named `filename` in diagnostics) with `importer`.
Schedule import(const std::string &text, const std::string &filename,
                Importer importer, StringRef format) {
  MLIRContext &context = getContext();
  DiagnosticCapture capture(context);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, filename), llvm::SMLoc());
  return adoptSchedule(
      importer(sourceMgr, &context), capture,
      ("cannot read " + format + " schedule " + filename).str());
}

OwningOpRef<ModuleOp> parseMLIR(llvm::SourceMgr &sourceMgr,
                                MLIRContext *context) {
  return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
}

using Exporter = LogicalResult (*)(ScheduleOp, raw_ostream &);

std::string exportSchedule(const Schedule &schedule, Exporter exporter,
                           StringRef format) {
  DiagnosticCapture capture(getContext());
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(exporter(schedule.get(), os)))
    capture.raise(("cannot write the schedule as " + format).str());
  return text;
}

LogicalResult printMLIR(ScheduleOp schedule, raw_ostream &os) {
  schedule->getParentOp()->print(os);
  return success();
}

/// The transfer semantics Python names `text`; a pp.Error for anything
/// else, as the pass options reject it.
TransferSemantics getSemantics(const std::string &text) {
  if (std::optional<TransferSemantics> semantics =
          symbolizeTransferSemantics(text))
    return *semantics;
  throwErrors("unknown semantics '" + text + "'; expected async or rendezvous",
              ErrorKind::Error, {});
}

/// Sets a pass's `semantics` to what Python names `text`; "" leaves it
/// unset: the schedule's recorded semantics apply.
template <typename OptionT>
void setSemantics(OptionT &option, const std::string &text) {
  if (!text.empty())
    option = getSemantics(text);
}

/// `zero`: one ZeRO level for every stage, or one per stage.
void insertTransfers(Schedule &schedule, int64_t numReplicas,
                     const std::string &semantics,
                     const std::vector<int64_t> &zero) {
  DiagnosticCapture capture(getContext());
  PassManager pm(&getContext());
  PPInsertTransfersOptions options;
  options.numReplicas = numReplicas;
  options.zero.assign(zero.begin(), zero.end());
  setSemantics(options.semantics, semantics);
  pm.addPass(createPPInsertTransfers(options));
  runPasses(pm, schedule.getModule(), capture, "cannot insert transfers");
}

void verify(const Schedule &schedule, const std::string &semantics) {
  DiagnosticCapture capture(getContext());
  PassManager pm(&getContext());
  PPVerifyScheduleOptions options;
  setSemantics(options.semantics, semantics);
  pm.addPass(createPPVerifySchedule(options));
  runPasses(pm, schedule.getModule(), capture, "the schedule is invalid",
            ErrorKind::Verify);
}

/// Makespan, idle time per rank and peak memory per rank, as pp-simulate
/// records them (on a copy, so the schedule is left as it was).
std::tuple<double, std::vector<double>, std::vector<double>>
simulate(const Schedule &schedule, const std::string &semantics,
         const std::vector<double> &allReduceCost) {
  DiagnosticCapture capture(getContext());
  OwningOpRef<ModuleOp> copy = schedule.getModule().clone();
  PassManager pm(&getContext());
  PPSimulateOptions options;
  setSemantics(options.semantics, semantics);
  options.allReduceCost.assign(allReduceCost.begin(), allReduceCost.end());
  pm.addPass(createPPSimulate(options));
  runPasses(pm, *copy, capture, "cannot simulate the schedule");
  ScheduleOp simulated = *copy->getOps<ScheduleOp>().begin();
  auto read = [&](StringRef name) {
    ArrayRef<double> values =
        cast<DenseF64ArrayAttr>(simulated->getAttr(name)).asArrayRef();
    return std::vector<double>(values.begin(), values.end());
  };
  double makespan =
      cast<FloatAttr>(simulated->getAttr("pp.makespan")).getValueAsDouble();
  return {makespan, read("pp.idle"), read("pp.peak_memory")};
}

/// One action of a simulated timeline: rank, mnemonic (F, B, W, BW, SEND_F,
/// ...), stage, micro-batch (-1 for all-reduces and optimizer steps), start,
/// end, and the activation memory its rank holds after it.
using TimelineEntry =
    std::tuple<int64_t, std::string, int64_t, int64_t, double, double, double>;

std::pair<int64_t, int64_t> getStageAndMicrobatch(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::pair<int64_t, int64_t>>(op)
      .Case<ComputeOp, SendOp, RecvOp>([](auto action) {
        return std::make_pair<int64_t, int64_t>(action.getStage(),
                                                action.getMb());
      })
      .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, OptimizerStepOp>(
          [](auto action) {
            return std::make_pair<int64_t, int64_t>(action.getStage(), -1);
          })
      .Default([](Operation *) { return std::make_pair(-1, -1); });
}

/// Every action with the times ScheduleSimulator gives it under the
/// schedule's costs (all-reduces free), rank by rank.
std::vector<TimelineEntry> getTimeline(const Schedule &schedule,
                                       const std::string &semantics) {
  DiagnosticCapture capture(getContext());
  ScheduleOp op = schedule.get();
  ActionCosts costs = getActionCosts(op.getCostOrUnit());
  ScheduleSimulator simulator(op);
  std::optional<TransferSemantics> mode =
      semantics.empty() ? op.getSemanticsOr(TransferSemantics::async)
                        : symbolizeTransferSemantics(semantics);
  if (!mode)
    throw std::invalid_argument("unknown semantics '" + semantics +
                                "'; expected async or rendezvous");
  if (failed(simulator.run(costs, *mode))) {
    simulator.emitDeadlockError();
    capture.raise("the schedule deadlocks");
  }
  std::vector<TimelineEntry> timeline;
  for (int64_t rank = 0; rank < simulator.getNumRanks(); ++rank) {
    double held = 0.0;
    for (auto [action, timed, interval] :
         llvm::zip(simulator.getActions(rank), simulator.getTimedActions(rank),
                   simulator.getIntervals(rank))) {
      if (timed.kind == TimedAction::Kind::compute)
        held += costs.memoryDelta(timed.phase, timed.stage, timed.mb);
      auto [stage, mb] = getStageAndMicrobatch(action);
      timeline.emplace_back(rank, getActionName(action).str(), stage, mb,
                            interval.start, interval.end, held);
    }
  }
  return timeline;
}

std::vector<std::optional<double>> getMemoryCaps(const Schedule &schedule) {
  ScheduleOp op = schedule.get();
  std::vector<std::optional<double>> caps;
  for (int64_t rank = 0; rank < op.getNumRanks(); ++rank)
    caps.push_back(op.getRankMemoryCap(rank));
  return caps;
}

//===----------------------------------------------------------------------===//
// Compile
//===----------------------------------------------------------------------===//

/// An option value as Python passes it: pp.compile's wrapper converts
/// each to the kind compile_options gives.
using OptionValue =
    std::variant<bool, int64_t, std::string, std::vector<std::string>,
                 std::vector<double>, std::vector<int64_t>>;

/// Raises a pp.CompileError about the option pp-compile spells `flag`.
[[noreturn]] void rejectOption(StringRef flag, const Twine &message) {
  throwErrors("invalid compile options", ErrorKind::Compile,
              {LocatedDiagnostic{"error", flag.str(), message.str(), {}}});
}

/// How pp-compile spells the option in its errors: `--stages`, `-O`.
std::string spell(const CompileFlag &name) {
  return (name.prefix ? "-" : "--") + name.flag.str();
}

template <typename T>
const T &getValue(const CompileFlag &name, const OptionValue &value) {
  if (const T *typed = std::get_if<T>(&value))
    return *typed;
  rejectOption(spell(name), "option " + name.keyword + " has the wrong type");
}

template <typename T, typename ParserT> constexpr bool isEnumOption() {
  return std::is_base_of_v<llvm::cl::generic_parser_base, ParserT>;
}

/// The names an enum option takes, or the registered schedules.
template <typename T, typename ParserT>
std::vector<std::string> getChoices(const ParserT &parser) {
  std::vector<std::string> choices;
  if constexpr (std::is_same_v<T, ScheduleChoice>) {
    for (const ScheduleGenerator &generator : getScheduleGenerators())
      choices.push_back(generator.name.str());
  } else if constexpr (isEnumOption<T, ParserT>()) {
    for (unsigned index = 0, e = parser.getNumOptions(); index < e; ++index)
      choices.push_back(parser.getOption(index).str());
  }
  return choices;
}

/// The enum value `text` names, checked as pp-compile checks the flag.
template <typename T, typename ParserT>
T parseChoice(const CompileFlag &name, const ParserT &parser,
              const std::string &text) {
  for (unsigned index = 0, e = parser.getNumOptions(); index < e; ++index)
    if (parser.getOption(index) == text)
      return static_cast<const llvm::cl::OptionValue<T> &>(
                 parser.getOptionValue(index))
          .getValue();
  std::string flag = spell(name);
  rejectOption(flag, flag + " takes " +
                         llvm::join(getChoices<T>(parser), ", ") + "; got '" +
                         text + "'");
}

using PassOptions = mlir::detail::PassOptions;

/// Sets `option` to the Python value `value`.
template <typename T, typename ParserT>
void setOption(const CompileFlag &name, PassOptions::Option<T, ParserT> &option,
               const OptionValue &value) {
  if constexpr (std::is_same_v<T, ScheduleChoice>) {
    const std::string &text = getValue<std::string>(name, value);
    std::optional<ScheduleChoice> choice = ScheduleChoice::lookup(text);
    if (!choice)
      rejectOption(spell(name), getUnknownScheduleMessage(text));
    option = *choice;
  } else if constexpr (isEnumOption<T, ParserT>()) {
    option = parseChoice<T>(name, option.getParser(),
                            getValue<std::string>(name, value));
  } else if constexpr (std::is_same_v<T, unsigned>) {
    int64_t number = getValue<int64_t>(name, value);
    if (number < 0 || number > UINT32_MAX)
      rejectOption(spell(name), spell(name) + " must be between 0 and " +
                                    Twine(UINT32_MAX) + ", got " +
                                    Twine(number));
    option = static_cast<unsigned>(number);
  } else {
    option = getValue<T>(name, value);
  }
}

template <typename T, typename ParserT>
void setOption(const CompileFlag &name,
               PassOptions::ListOption<T, ParserT> &option,
               const OptionValue &value) {
  // An empty Python list converts as the first list alternative.
  auto *strings = std::get_if<std::vector<std::string>>(&value);
  if (strings && strings->empty())
    option = ArrayRef<T>();
  else
    option = ArrayRef<T>(getValue<std::vector<T>>(name, value));
}

/// What Python passes for one value: bool, int, float or str (a choice is
/// a str).
template <typename T> std::string getValueKind() {
  if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_integral_v<T>)
    return "int";
  else if constexpr (std::is_floating_point_v<T>)
    return "float";
  else
    return "str";
}

/// What Python passes for an option: a value's kind, or "str list",
/// "float list" or "int list".
template <typename T, typename ParserT>
std::string getKind(const PassOptions::Option<T, ParserT> &) {
  return getValueKind<T>();
}

template <typename T, typename ParserT>
std::string getKind(const PassOptions::ListOption<T, ParserT> &) {
  return getValueKind<T>() + " list";
}

/// One option pp.compile takes: its keyword, pp-compile's flag, its kind
/// (getKind), its help and the values it takes (empty: any).
using OptionEntry = std::tuple<std::string, std::string, std::string,
                               std::string, std::vector<std::string>>;

/// Every option pp.compile takes, from the one table pp-compile's flags
/// come from.
std::vector<OptionEntry> getCompileOptions() {
  std::vector<OptionEntry> entries;
  CompileOptions options;
  forEachCompileFlag(options, [&](const CompileFlag &name, auto &option) {
    if (name.keyword.empty())
      return;
    using ParserT = std::decay_t<decltype(option.getParser())>;
    using T = typename ParserT::parser_data_type;
    entries.emplace_back(name.keyword.str(), spell(name), getKind(option),
                         option.HelpStr.str(),
                         getChoices<T>(option.getParser()));
  });
  return entries;
}

/// Compile options from pp.compile's keywords; raises a pp.CompileError
/// for a value pp-compile would reject, `TypeError` for an unknown name.
void setCompileOptions(CompileOptions &options,
                       const std::map<std::string, OptionValue> &values) {
  size_t set = 0;
  forEachCompileFlag(options, [&](const CompileFlag &name, auto &option) {
    auto it =
        name.keyword.empty() ? values.end() : values.find(name.keyword.str());
    if (it == values.end())
      return;
    setOption(name, option, it->second);
    ++set;
  });
  if (set != values.size())
    throw nb::type_error("unknown compile option");
}

/// One `pp.param` argument: its position, type, shape and element type.
using ParamEntry =
    std::tuple<unsigned, std::string, std::vector<int64_t>, std::string>;

/// What pp.Program is made of: the output, the schedule, stages, ranks,
/// micro-batches, replicas, tensor-parallel size, the parameters, the
/// schedule's IR and the compile's remarks.
using ProgramEntry =
    std::tuple<std::string, std::string, int64_t, int64_t, int64_t, int64_t,
               int64_t, std::vector<ParamEntry>, std::string,
               std::vector<std::string>>;

/// Compiles `text` (named `filename` in diagnostics) into an executable,
/// without the GIL: a compile takes seconds.
ProgramEntry compile(const std::string &text, const std::string &filename,
                     const std::map<std::string, OptionValue> &values) {
  CompileOptions options;
  setCompileOptions(options, values);
  options.driver.emit = EmitKind::Executable;
  FailureOr<CompiledProgram> program;
  std::vector<LocatedDiagnostic> errors;
  std::vector<std::string> remarks;
  {
    nb::gil_scoped_release release;
    DialectRegistry registry;
    registerCompilerDialects(registry);
    MLIRContext context(registry);
    context.printOpOnDiagnostic(false);
    DiagnosticCapture capture(context);
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, filename), llvm::SMLoc());
    TimingScope timing;
    program = compileModel(sourceMgr, context, options, timing);
    if (failed(program))
      errors = capture.getErrors();
    remarks = capture.getRemarks();
  }
  // Raised with the GIL held again.
  if (failed(program))
    throwErrors("cannot compile " + filename, ErrorKind::Compile,
                std::move(errors));
  std::vector<ParamEntry> params;
  for (const CompiledParam &param : program->params)
    params.emplace_back(param.argument, param.type, param.shape,
                        param.elementType);
  return {program->output,          program->schedule,
          program->numStages,       program->numRanks,
          program->numMicrobatches, program->numReplicas,
          program->tensorParallel,  std::move(params),
          program->scheduleIR,      std::move(remarks)};
}

void bindCompile(nb::module_ &m) {
  m.def("compile", &compile, nb::arg("text"), nb::arg("filename"),
        nb::arg("options"),
        "Compiles a model into an executable with pp's compiler library. "
        "options: pp.compile's keyword arguments.");
  m.def("compile_options", &getCompileOptions,
        "pp.compile's options: (keyword, pp-compile flag, kind, help, "
        "choices) each, kind one of bool, int, str, str list, float list.");
  m.def(
      "compiler_dialects",
      [] {
        DialectRegistry registry;
        registerCompilerDialects(registry);
        auto names = registry.getDialectNames();
        return std::vector<std::string>(names.begin(), names.end());
      },
      "The dialects pp-compile reads.");
  m.def(
      "mpiexec", [] { return getMPIExec().str(); },
      "The MPI launcher the programs are built for.");
}

//===----------------------------------------------------------------------===//
// Bindings
//===----------------------------------------------------------------------===//

PyObject *errorType = nullptr;
PyObject *verifyErrorType = nullptr;
PyObject *compileErrorType = nullptr;

void bindErrors(nb::module_ &m) {
  errorType = PyErr_NewExceptionWithDoc(
      "pp.Error",
      "MLIR rejected an input; `diagnostics` holds its located messages.",
      PyExc_Exception, nullptr);
  verifyErrorType = PyErr_NewExceptionWithDoc(
      "pp.VerifyError",
      "pp-verify-schedule rejected the schedule; `diagnostics` holds its "
      "located messages.",
      errorType, nullptr);
  compileErrorType = PyErr_NewExceptionWithDoc(
      "pp.CompileError",
      "The compiler rejected the model or its options; `diagnostics` holds "
      "its located messages.",
      errorType, nullptr);
  m.attr("Error") = nb::handle(errorType);
  m.attr("VerifyError") = nb::handle(verifyErrorType);
  m.attr("CompileError") = nb::handle(compileErrorType);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const DiagnosticError &error) {
      PyObject *type = error.kind == ErrorKind::Verify    ? verifyErrorType
                       : error.kind == ErrorKind::Compile ? compileErrorType
                                                          : errorType;
      nb::object exception = nb::handle(type)(error.what());
      exception.attr("diagnostics") = nb::cast(error.diagnostics);
      PyErr_SetObject(type, exception.ptr());
    }
  });
}

void bindDiagnostic(nb::module_ &m) {
  nb::class_<LocatedDiagnostic>(m, "Diagnostic", "One located MLIR diagnostic.")
      .def(
          "__init__",
          [](LocatedDiagnostic *self, std::string severity,
             std::string location, std::string message,
             std::vector<LocatedDiagnostic> notes) {
            new (self)
                LocatedDiagnostic{std::move(severity), std::move(location),
                                  std::move(message), std::move(notes)};
          },
          nb::arg("severity"), nb::arg("location"), nb::arg("message"),
          nb::arg("notes") = std::vector<LocatedDiagnostic>())
      .def_ro("severity", &LocatedDiagnostic::severity,
              "error, warning, note or remark")
      .def_ro("location", &LocatedDiagnostic::location,
              "file:line:col, or empty where unknown")
      .def_ro("message", &LocatedDiagnostic::message)
      .def_ro("notes", &LocatedDiagnostic::notes)
      .def("__str__", &LocatedDiagnostic::str)
      .def("__repr__", [](const LocatedDiagnostic &diag) {
        return "<pp.Diagnostic " + diag.str() + ">";
      });
}

void bindGenerate(nb::module_ &m) {
  m.def(
      "generate",
      [](const std::string &name, int64_t numStages, int64_t numMicrobatches,
         int64_t numRanks, bool splitBackward,
         const std::vector<std::vector<double>> &costLists,
         std::optional<double> comm, const std::vector<double> &memoryCap,
         const std::string &costFile, int64_t numReplicas, bool insertTransfers,
         int64_t slices, const std::string &semantics) {
        auto list = [&](size_t i) {
          return SmallVector<double>(costLists[i].begin(), costLists[i].end());
        };
        std::optional<ScheduleChoice> schedule = ScheduleChoice::lookup(name);
        if (!schedule)
          throwErrors("cannot generate schedule '" + name + "'",
                      ErrorKind::Error,
                      {LocatedDiagnostic{
                          "error", "", getUnknownScheduleMessage(name), {}}});
        GenerateRequest request;
        PPScheduleOptions &options = request.schedule;
        options.schedule = *schedule;
        options.numStages = numStages;
        options.numMicrobatches = numMicrobatches;
        options.numRanks = numRanks;
        options.splitBackward = splitBackward;
        options.forwardCost = list(0);
        options.backwardInputCost = list(1);
        options.backwardWeightCost = list(2);
        // Schedules from Python carry their costs, unit ones by default;
        // unset (NaN), the comm cost is the cost file's.
        options.commCost = comm.value_or(
            costFile.empty() ? 0.0 : std::numeric_limits<double>::quiet_NaN());
        options.activationMemory = list(3);
        options.stashMemory = list(4);
        options.memoryCap.assign(memoryCap.begin(), memoryCap.end());
        options.costFile = costFile;
        options.numSlices = slices;
        options.semantics = getSemantics(semantics);
        request.numReplicas = numReplicas;
        request.insertTransfers = insertTransfers;
        return generate(request);
      },
      nb::arg("name"), nb::arg("num_stages"), nb::arg("num_microbatches"),
      nb::arg("num_ranks"), nb::arg("split_backward"), nb::arg("cost_lists"),
      nb::arg("comm"), nb::arg("memory_cap"), nb::arg("cost_file"),
      nb::arg("num_replicas"), nb::arg("insert_transfers"),
      nb::arg("slices") = 1, nb::arg("semantics") = "async",
      "Runs pp-schedule (and pp-insert-transfers) for transfers of "
      "`semantics`. cost_lists: forward, backward_input, backward_weight, "
      "activation and stash, each empty for the default.");
}

std::vector<std::string> getGeneratorNames() {
  std::vector<std::string> names;
  for (const ScheduleGenerator &generator : getScheduleGenerators())
    names.push_back(generator.name.str());
  return names;
}

/// One row of the action vocabulary: JSON and PyTorch names, whether it
/// names a micro-batch, the phase of a computation, its description and
/// timeline colour.
using VocabularyRow =
    std::tuple<std::string, std::string, bool, std::optional<std::string>,
               std::string, std::string>;

std::vector<VocabularyRow> getVocabularyRows() {
  std::vector<VocabularyRow> rows;
  for (const ActionSpelling &spelling : getActionVocabulary()) {
    std::optional<std::string> phase;
    if (std::optional<Phase> computed = getComputePhase(spelling.kind))
      phase = stringifyPhase(*computed).str();
    rows.emplace_back(spelling.json.str(), spelling.pytorch.str(),
                      spelling.hasMicrobatch, phase, spelling.description.str(),
                      spelling.colour.str());
  }
  return rows;
}

void bindSchedule(nb::module_ &m) {
  nb::class_<Schedule>(m, "NativeSchedule", "A module holding one pp.schedule.")
      .def_prop_ro("name",
                   [](const Schedule &s) { return s.get().getName().str(); })
      .def_prop_ro("num_stages",
                   [](const Schedule &s) { return s.get().getNumStages(); })
      .def_prop_ro("num_ranks",
                   [](const Schedule &s) { return s.get().getNumRanks(); })
      .def_prop_ro(
          "num_microbatches",
          [](const Schedule &s) { return s.get().getNumMicrobatches(); })
      .def_prop_ro("stage_rank",
                   [](const Schedule &s) {
                     ArrayRef<int64_t> ranks = s.get().getStageRank();
                     return std::vector<int64_t>(ranks.begin(), ranks.end());
                   })
      .def_prop_ro("memory_caps", &getMemoryCaps)
      .def_ro("remarks", &Schedule::remarks)
      .def("to_mlir",
           [](const Schedule &s) {
             return exportSchedule(s, printMLIR, "MLIR");
           })
      .def("to_json",
           [](const Schedule &s) {
             return exportSchedule(s, exportScheduleToJSON, "JSON");
           })
      .def("to_csv",
           [](const Schedule &s) {
             return exportSchedule(s, exportScheduleToPyTorchCSV, "CSV");
           })
      .def("to_ascii",
           [](const Schedule &s) {
             return exportSchedule(s, exportScheduleToASCII, "ASCII");
           })
      .def("to_chrome_trace",
           [](const Schedule &s) {
             return exportSchedule(s, exportScheduleToChromeTrace,
                                   "a Chrome trace");
           })
      .def("to_svg",
           [](const Schedule &s) {
             return exportSchedule(s, exportScheduleToSVG, "SVG");
           })
      .def("insert_transfers", &insertTransfers, nb::arg("num_replicas"),
           nb::arg("semantics"), nb::arg("zero"))
      .def("verify", &verify, nb::arg("semantics"))
      .def("simulate", &simulate, nb::arg("semantics"),
           nb::arg("all_reduce_cost"))
      .def("timeline", &getTimeline, nb::arg("semantics"));
}

void bindImport(nb::module_ &m) {
  auto bind = [&](const char *name, Importer importer, const char *format) {
    m.def(
        name,
        [importer, format](const std::string &text,
                           const std::string &filename) {
          return import(text, filename, importer, format);
        },
        nb::arg("text"), nb::arg("filename"));
  };
  bind("from_json", importScheduleFromJSON, "JSON");
  bind("from_csv", importScheduleFromPyTorchCSV, "CSV");
  bind("from_mlir", parseMLIR, "MLIR");
}

} // namespace

NB_MODULE(_pp, m) {
  m.doc() = "pp's C++ libraries in process; use the pp package instead.";
  bindErrors(m);
  bindDiagnostic(m);
  bindSchedule(m);
  bindGenerate(m);
  m.def("generator_names", &getGeneratorNames,
        "The schedules pp-schedule's registry holds, in its order.");
  m.def("action_vocabulary", &getVocabularyRows,
        "The schedule actions (ActionVocabulary.h) as tuples (json, pytorch, "
        "has_microbatch, phase or None, description, colour); an empty name "
        "has no spelling in that format.");
  bindImport(m);
  bindCompile(m);
}
