//===- ScheduleGenerators.h - the built-in pipeline schedules ---*- C++ -*-===//
//
// One small interface behind which every built-in schedule lives: a new
// schedule is a new generator file and one registration line.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULEGENERATORS_H
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULEGENERATORS_H

#include "pp/Dialect/PP/IR/PPDialect.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::pp {

/// What a schedule is built for: stage s runs on rank s.
struct ScheduleProblem {
  int64_t numStages;
  int64_t numMicrobatches;
  /// Run each backward as B (input gradient) then W (weight gradient)
  /// instead of the fused backward.
  bool splitBackward = false;
};

/// One compute action of a rank.
struct ScheduledAction {
  Phase phase;
  int64_t stage;
  int64_t mb;
};

/// Appends the backward of (stage, mb): fused, or B immediately followed by W.
inline void appendBackward(llvm::SmallVectorImpl<ScheduledAction> &actions,
                           const ScheduleProblem &problem, int64_t stage,
                           int64_t mb) {
  if (!problem.splitBackward) {
    actions.push_back({Phase::backward, stage, mb});
    return;
  }
  actions.push_back({Phase::backward_input, stage, mb});
  actions.push_back({Phase::backward_weight, stage, mb});
}

/// A named generator of per-rank compute orders.
struct ScheduleGenerator {
  llvm::StringLiteral name;
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> (*generate)(
      const ScheduleProblem &problem);
};

/// The generator called `name`, or null.
const ScheduleGenerator *lookupScheduleGenerator(llvm::StringRef name);

/// The names of all generators, comma separated.
std::string listScheduleGenerators();

/// The built-in generators, one file each.
llvm::SmallVector<llvm::SmallVector<ScheduledAction>>
generateGPipe(const ScheduleProblem &problem);
llvm::SmallVector<llvm::SmallVector<ScheduledAction>>
generateOneFOneB(const ScheduleProblem &problem);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULEGENERATORS_H
