//===- pp-compile.cpp - ahead-of-time compiler for pipelined training -----===//
//
// Compiles a training-step function into a native program that trains it
// across pipeline stages. The compiler is a library (pp/Compiler/Compile.h);
// the tool's flags are generated from the options of the registered
// pipelines and the driver (CompileOptions), and it prints the diagnostics.
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/Compile.h"
#include "pp/Compiler/CompileProgress.h"
#include "pp/Compiler/FatalErrors.h"
#include "pp/InitAll.h"
#include "pp/Scheduling/ScheduleGenerators.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <deque>

using namespace mlir;
namespace cl = llvm::cl;

/// pp-compile's own options, listed apart in --help.
static cl::OptionCategory compileCategory("pp-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::Required, cl::cat(compileCategory));

static cl::opt<double> progressAfter(
    "progress-after",
    cl::desc("Name on stderr each phase of the compile that runs longer "
             "than SECONDS, and when it ends (default 2; 0: every phase; "
             "negative: none)"),
    cl::value_desc("SECONDS"), cl::init(2.0), cl::cat(compileCategory));

namespace {
/// pp-compile's flags: each a command-line twin of a pipeline or driver
/// option (pp::forEachCompileFlag) with its type, values and help, that
/// sets the option when it is given.
class CompileFlags {
public:
  explicit CompileFlags(pp::CompileOptions &options) {
    pp::forEachCompileFlag(options, [&](const pp::CompileFlag &name,
                                        auto &option) { add(name, option); });
  }

  using PassOptions = mlir::detail::PassOptions;

  /// Whether `option` is one of pp-compile's own.
  bool owns(const cl::Option &option) const {
    return llvm::any_of(option.Categories, [&](cl::OptionCategory *category) {
      return category == &compileCategory ||
             llvm::any_of(groups, [&](const cl::OptionCategory &group) {
               return &group == category;
             });
    });
  }

private:
  /// The --help heading of `name`'s group.
  cl::OptionCategory &getGroup(llvm::StringRef name) {
    for (cl::OptionCategory &group : groups)
      if (group.getName() == name)
        return group;
    return groups.emplace_back(name);
  }

  /// The help, value name, group and formatting the option declares.
  template <typename FlagT>
  void describe(FlagT &flag, const pp::CompileFlag &name,
                const cl::Option &option) {
    flag.setDescription(option.HelpStr);
    flag.setValueStr(option.ValueStr);
    flag.addCategory(getGroup(name.group));
    if (name.prefix)
      flag.setFormattingFlag(cl::Prefix);
  }

  /// The named values of an enum option, which its parser holds.
  template <typename T, typename ParserT>
  static void copyValues(const ParserT &from, ParserT &to) {
    if constexpr (std::is_base_of_v<cl::generic_parser_base, ParserT>)
      for (unsigned index = 0, e = from.getNumOptions(); index < e; ++index)
        to.addLiteralOption(
            from.getOption(index),
            static_cast<const cl::OptionValue<T> &>(from.getOptionValue(index))
                .getValue(),
            from.getDescription(index));
  }

  template <typename T, typename ParserT>
  void add(const pp::CompileFlag &name,
           PassOptions::Option<T, ParserT> &option) {
    auto flag = std::make_unique<cl::opt<T, false, ParserT>>(name.flag);
    describe(*flag, name, option);
    copyValues<T>(option.getParser(), flag->getParser());
    flag->setCallback([&option](const T &value) { option = value; });
    flags.push_back(std::move(flag));
  }

  template <typename T, typename ParserT>
  void add(const pp::CompileFlag &name,
           PassOptions::ListOption<T, ParserT> &option) {
    auto flag = std::make_unique<cl::list<T, bool, ParserT>>(name.flag);
    describe(*flag, name, option);
    if (!name.wholeElements)
      flag->setMiscFlag(cl::CommaSeparated);
    // Each element appends to what earlier occurrences gave.
    flag->setCallback([&option](const T &value) {
      std::vector<T> values;
      if (option.hasValue())
        values.assign((*option).begin(), (*option).end());
      values.push_back(value);
      option = ArrayRef<T>(values);
    });
    flags.push_back(std::move(flag));
  }

  std::vector<std::unique_ptr<cl::Option>> flags;
  /// One category per group, in table order; a deque keeps them in place.
  std::deque<cl::OptionCategory> groups;
};
} // namespace

/// Prints the compiler's own errors, warnings and remarks, those about an
/// option or a file (at a NameLoc), as `pp-compile: [warning: |remark:
/// ]<message>`; the model's go through the source manager's handler, with
/// their source lines.
static LogicalResult printToolError(Diagnostic &diag) {
  auto name = dyn_cast<NameLoc>(diag.getLocation());
  if (!name || !isa<UnknownLoc>(name.getChildLoc()))
    return failure();
  StringRef kind = "";
  if (diag.getSeverity() == DiagnosticSeverity::Warning)
    kind = "warning: ";
  else if (diag.getSeverity() == DiagnosticSeverity::Remark)
    kind = "remark: ";
  llvm::errs() << "pp-compile: " << kind << diag << "\n";
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  pp::installFatalErrorHandlers("pp-compile");
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  pp::CompileOptions options;
  CompileFlags flags(options);
  // --help lists pp-compile's own options; LLVM's and MLIR's stay behind
  // --help-hidden, as clang's do.
  for (auto &entry : cl::getRegisteredOptions())
    if (!flags.owns(*entry.second) &&
        entry.second->getOptionHiddenFlag() == cl::NotHidden)
      entry.second->setHiddenFlag(cl::Hidden);
  // Option errors (a schedule the registry lacks, a value that does not
  // parse) are one line each, and exit with 2 before anything is read.
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "pp-compile: compile a training step into a pipelined MPI "
          "program\n\n"
          "  pp-compile model.mlir --stages 4 --microbatches 8 --schedule 1f1b "
          "-o train\n  mpirun -np 4 ./train --steps 20\n\n"
          "With --data-parallel D, run on ranks x D processes (mpirun -np 8 "
          "for 4 ranks and D = 2).\n",
          &llvm::errs()))
    return 2;
  options.configurePassManager = [](PassManager &pm) {
    return applyPassManagerCLOptions(pm);
  };
  DialectRegistry registry;
  pp::registerCompilerDialects(registry);
  pp::registerAllPasses();
  MLIRContext context(registry);
  // A diagnostic is its message and source line; the IR it was found in
  // only when asked (--mlir-print-op-on-diagnostic).
  if (!cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]
           ->getNumOccurrences())
    context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler sourceHandler(sourceMgr, &context);
  ScopedDiagnosticHandler toolHandler(&context, printToolError);
  // Option errors exit with 2 before anything is compiled.
  if (failed(pp::checkCompileOptions(context, options, inputFile)))
    return 2;
  pp::ProgressTimingManager timingManager(progressAfter, llvm::errs());
  applyDefaultTimingManagerCLOptions(timingManager);
  timingManager.startTiming();
  TimingScope timing = timingManager.getRootScope();
  FailureOr<pp::CompiledProgram> compiled =
      pp::compileModelFile(inputFile, sourceMgr, context, options, timing);
  timing.stop();
  return failed(compiled) ? 1 : 0;
}
