//===- ScheduleOption.h - a schedule as an option value ---------*- C++ -*-===//
//
// The type of every option that names a schedule (pp-schedule's,
// pp-partition-stages', pp-schedule-pipeline's and pp-compile's): parsing
// the option looks the name up in the schedule registry, so a name no
// generator has is an option error that lists the registered ones, before
// any pass runs, and the passes receive the generator itself.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULEOPTION_H
#define PP_SCHEDULING_SCHEDULEOPTION_H

#include "pp/Scheduling/ScheduleGenerators.h"

#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace mlir::pp::sched {

/// A registered schedule generator, as an option holds it: its name and
/// generate function, copied, so that registering more generators cannot
/// invalidate it. A default-constructed one names no schedule, which
/// options use for "unset".
class ScheduleChoice {
public:
  using GenerateFn =
      llvm::Expected<GeneratedSchedule> (*)(const ScheduleProblem &);

  ScheduleChoice() = default;
  explicit ScheduleChoice(const ScheduleGenerator &generator)
      : name(generator.name), generateFn(generator.generate) {}

  /// The generator registered as `name`, which must exist.
  static ScheduleChoice get(llvm::StringRef name);
  /// The generator registered as `name`, or nothing.
  static std::optional<ScheduleChoice> lookup(llvm::StringRef name);

  /// Whether it names a schedule.
  explicit operator bool() const { return generateFn != nullptr; }
  llvm::StringRef getName() const { return name; }

  /// Runs the generator; see ScheduleGenerator.
  llvm::Expected<GeneratedSchedule>
  generate(const ScheduleProblem &problem) const {
    return generateFn(problem);
  }

  bool operator==(const ScheduleChoice &other) const {
    return name == other.name;
  }
  bool operator!=(const ScheduleChoice &other) const {
    return !(*this == other);
  }

private:
  llvm::StringRef name;
  GenerateFn generateFn = nullptr;
};

/// Prints the schedule's name, as pass pipelines print their options.
llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                              const ScheduleChoice &choice);

/// Why `name` names no schedule: "unknown schedule '<name>'; expected one
/// of: gpipe, 1f1b, ..." with every registered schedule.
std::string getUnknownScheduleMessage(llvm::StringRef name);

/// "Schedule: gpipe, 1f1b, ...", the help of an option naming a schedule;
/// the text lives as long as the program.
llvm::StringRef getScheduleOptionHelp();

} // namespace mlir::pp::sched

namespace llvm::cl {

/// Parses a schedule option against the schedule registry as it is when
/// the option is parsed (after pass plugins registered theirs).
template <>
class parser<mlir::pp::sched::ScheduleChoice>
    : public basic_parser<mlir::pp::sched::ScheduleChoice> {
public:
  parser(Option &option) : basic_parser(option) {}

  /// Returns true, after reporting the registered schedules, on a name no
  /// generator has.
  bool parse(Option &option, StringRef argName, StringRef arg,
             mlir::pp::sched::ScheduleChoice &value);

  StringRef getValueName() const override { return "string"; }

  void printOptionDiff(const Option &option,
                       const mlir::pp::sched::ScheduleChoice &value,
                       const OptVal &defaultValue, size_t globalWidth) const;

  void anchor() override;
};

} // namespace llvm::cl

#endif // PP_SCHEDULING_SCHEDULEOPTION_H
