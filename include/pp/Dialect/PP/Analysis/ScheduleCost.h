//===- ScheduleCost.h - time and memory of schedule actions -----*- C++ -*-===//
//
// Reads a schedule's #pp.cost: how long each action takes and how much
// activation memory each compute action makes its rank hold or release.
// Shared by pp-simulate (timelines, peak memory) and pp-verify-schedule
// (memory caps).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_SCHEDULECOST_H
#define PP_DIALECT_PP_ANALYSIS_SCHEDULECOST_H

#include "pp/Dialect/PP/IR/PPOps.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::pp {

/// A time or memory amount for a diagnostic, as short as `%g` writes it.
inline std::string formatQuantity(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// Costs of the actions of one schedule.
class ScheduleCosts {
public:
  explicit ScheduleCosts(CostAttr cost) : cost(cost) {}
  explicit ScheduleCosts(ScheduleOp schedule)
      : cost(schedule.getCostOrUnit()) {}

  /// How long a compute action keeps its rank busy; a fused backward takes
  /// B + W.
  double duration(Phase phase, int64_t stage) const {
    switch (phase) {
    case Phase::forward:
      return cost.getForward()[stage];
    case Phase::backward_input:
      return cost.getBackwardInput()[stage];
    case Phase::backward_weight:
      return cost.getBackwardWeight()[stage];
    case Phase::backward:
      return cost.getBackwardInput()[stage] + cost.getBackwardWeight()[stage];
    }
    return 0.0;
  }

  /// How the activation memory its rank holds changes after a compute
  /// action: a forward holds its stage's activation, B releases all but the
  /// stash W needs, W the stash, and a fused backward everything.
  double memoryDelta(Phase phase, int64_t stage) const {
    double held = cost.getActivation()[stage], stash = cost.getStash()[stage];
    switch (phase) {
    case Phase::forward:
      return held;
    case Phase::backward_input:
      return stash - held;
    case Phase::backward_weight:
      return -stash;
    case Phase::backward:
      return -held;
    }
    return 0.0;
  }

  /// The same for any action; transfers and collectives take no compute
  /// time and hold no activations.
  double duration(Operation *op) const {
    auto compute = dyn_cast<ComputeOp>(op);
    return compute ? duration(compute.getPhase(), compute.getStage()) : 0.0;
  }
  double memoryDelta(Operation *op) const {
    auto compute = dyn_cast<ComputeOp>(op);
    return compute ? memoryDelta(compute.getPhase(), compute.getStage()) : 0.0;
  }

  /// The time one activation or gradient takes to arrive.
  double transferTime() const { return cost.getComm().getValueAsDouble(); }

  CostAttr getAttr() const { return cost; }

private:
  CostAttr cost;
};

/// The most activation memory one rank holds, and the action after which it
/// first does.
struct MemoryPeak {
  double peak = 0.0;
  Operation *at = nullptr;
};

/// Walks `actions` (one rank's, in order) and returns its memory peak; with
/// a `cap`, stops at the first action after which the rank holds more.
inline MemoryPeak findMemoryPeak(const ScheduleCosts &costs,
                                 ArrayRef<Operation *> actions,
                                 std::optional<double> cap = std::nullopt) {
  MemoryPeak result;
  double held = 0.0;
  for (Operation *op : actions) {
    held += costs.memoryDelta(op);
    if (held > result.peak + 1e-12) {
      result = {held, op};
      if (cap && held > *cap + 1e-9)
        break;
    }
  }
  return result;
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_SCHEDULECOST_H
