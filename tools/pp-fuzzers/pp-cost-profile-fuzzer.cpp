//===- pp-cost-profile-fuzzer.cpp - fuzz the pp-profile-v1 reader ---------===//
//
// Reads the input as a cost file; a profile that reads must hold finite,
// non-negative amounts.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "pp/Dialect/PP/Analysis/CostProfile.h"

#include <cmath>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp::fuzz::QuietContext quiet;
  StringRef text(reinterpret_cast<const char *>(data), size);
  FailureOr<pp::CostProfile> profile =
      pp::parseCostProfile(text, "fuzz.json", [&] {
        return mlir::emitError(UnknownLoc::get(&quiet.context));
      });
  if (failed(profile))
    return 0;
  auto valid = [](double amount) {
    return std::isfinite(amount) && amount >= 0;
  };
  if (!valid(profile->transfer))
    pp::fuzz::finding("a profile with an invalid transfer time was read");
  for (const pp::StageProfile &stage : profile->stages)
    if (!valid(stage.forward) || !valid(stage.backwardInput) ||
        !valid(stage.backwardWeight) || !valid(stage.activationMemory) ||
        !valid(stage.stashMemory))
      pp::fuzz::finding("a profile with an invalid stage amount was read");
  return 0;
}
