//===- Registry.cpp - the table of built-in schedules ---------------------===//
//
// Maps schedule names to their generators.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir::pp;

static const ScheduleGenerator kGenerators[] = {
    {"gpipe", generateGPipe},
    {"1f1b", generateOneFOneB},
};

const ScheduleGenerator *
mlir::pp::lookupScheduleGenerator(llvm::StringRef name) {
  for (const ScheduleGenerator &generator : kGenerators)
    if (generator.name == name)
      return &generator;
  return nullptr;
}

std::string mlir::pp::listScheduleGenerators() {
  return llvm::join(
      llvm::map_range(kGenerators,
                      [](const ScheduleGenerator &g) { return g.name.str(); }),
      ", ");
}
