//===- ScheduleOption.cpp - a registered schedule as an option value ------===//
//
// Looks schedule options up in the registry when they are parsed.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleOption.h"

#include "llvm/Support/StringSaver.h"

#include <cassert>

using namespace mlir;
using namespace mlir::pp::sched;

std::optional<ScheduleChoice> ScheduleChoice::lookup(llvm::StringRef name) {
  if (const ScheduleGenerator *generator = lookupScheduleGenerator(name))
    return ScheduleChoice(*generator);
  return std::nullopt;
}

ScheduleChoice ScheduleChoice::get(llvm::StringRef name) {
  std::optional<ScheduleChoice> choice = lookup(name);
  assert(choice && "no schedule of that name is registered");
  return *choice;
}

llvm::raw_ostream &mlir::pp::sched::operator<<(llvm::raw_ostream &os,
                                               const ScheduleChoice &choice) {
  return os << choice.getName();
}

std::string mlir::pp::sched::getUnknownScheduleMessage(llvm::StringRef name) {
  return ("unknown schedule '" + name +
          "'; expected one of: " + listScheduleGenerators())
      .str();
}

llvm::StringRef mlir::pp::sched::getScheduleOptionHelp() {
  // Saved each time: pass plugins may have registered schedules since.
  static llvm::BumpPtrAllocator allocator;
  static llvm::StringSaver saver(allocator);
  return saver.save("Schedule: " + listScheduleGenerators());
}

bool llvm::cl::parser<ScheduleChoice>::parse(Option &option, StringRef,
                                             StringRef arg,
                                             ScheduleChoice &value) {
  std::optional<ScheduleChoice> choice = ScheduleChoice::lookup(arg);
  if (!choice)
    return option.error(getUnknownScheduleMessage(arg));
  value = *choice;
  return false;
}

void llvm::cl::parser<ScheduleChoice>::printOptionDiff(
    const Option &option, const ScheduleChoice &value,
    const OptVal &defaultValue, size_t globalWidth) const {
  printOptionName(option, globalWidth);
  outs() << "= " << value.getName() << " (default: ";
  if (defaultValue.hasValue())
    outs() << defaultValue.getValue().getName();
  else
    outs() << "*no default*";
  outs() << ")\n";
}

void llvm::cl::parser<ScheduleChoice>::anchor() {}
