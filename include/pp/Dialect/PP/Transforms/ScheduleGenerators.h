//===- ScheduleGenerators.h - the built-in pipeline schedules ---*- C++ -*-===//
//
// One small interface behind which every built-in schedule lives: a new
// schedule is a new generator file and one registration line.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULEGENERATORS_H
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULEGENERATORS_H

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/PPOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <limits>

namespace mlir::pp {

/// What a schedule is built for.
struct ScheduleProblem {
  int64_t numStages;
  int64_t numMicrobatches;
  /// Ranks the stages are placed on; a divisor of numStages (several stages
  /// per rank for interleaved and V-shaped schedules).
  int64_t numRanks;
  /// Run each backward as B (input gradient) then W (weight gradient)
  /// instead of the fused backward.
  bool splitBackward = false;
  /// What the stages cost (unit costs when null), and how much activation
  /// memory each rank may hold: one cap per rank, none when empty; `auto`
  /// searches with them.
  CostAttr cost = nullptr;
  llvm::SmallVector<double> memoryCap;
  MLIRContext *context = nullptr;

  /// The stages' costs, unit costs when none are given.
  CostAttr getCostOrUnit() const {
    return cost ? cost : CostAttr::getUnit(context, numStages);
  }
  /// The cap of `rank`, infinity without one.
  double getMemoryCap(int64_t rank) const {
    return memoryCap.empty() ? std::numeric_limits<double>::infinity()
                             : memoryCap[rank];
  }
  /// One cap per rank, infinity without one.
  llvm::SmallVector<double> getMemoryCaps() const {
    if (memoryCap.empty())
      return llvm::SmallVector<double>(numRanks,
                                       std::numeric_limits<double>::infinity());
    return memoryCap;
  }
};

/// One compute action of a rank.
struct ScheduledAction {
  Phase phase;
  int64_t stage;
  int64_t mb;
  /// The steps of a run it runs in (no-flush schedules only).
  StepPart part = StepPart::every;
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

/// One stage's 1F1B order: `warmup` forwards (at most all of them), then
/// one forward and one backward at a time, then the remaining backwards.
void appendOneFOneBSteps(llvm::SmallVectorImpl<ScheduledAction> &actions,
                         const ScheduleProblem &problem, int64_t stage,
                         int64_t warmup);

/// The zero-bubble pattern for one stage: step x runs F x, then B of
/// x - backwardLag, then W of x - weightLag, each if that micro-batch
/// exists. The lags set how many micro-batches are in flight and how many
/// weight gradients are deferred to fill the cool-down.
void appendLaggedSteps(llvm::SmallVectorImpl<ScheduledAction> &actions,
                       int64_t stage, int64_t numMicrobatches,
                       int64_t backwardLag, int64_t weightLag);

/// The same pattern over a rank's k-th forward, B and W, k < numSteps, of
/// any stages: `stepAction(phase, k)` names the k-th action of `phase`.
void appendLaggedSteps(
    llvm::SmallVectorImpl<ScheduledAction> &actions, int64_t numSteps,
    int64_t backwardLag, int64_t weightLag,
    llvm::function_ref<ScheduledAction(Phase, int64_t)> stepAction);

/// A generated schedule: where each stage runs and what each rank does.
struct GeneratedSchedule {
  llvm::SmallVector<int64_t> stageRank;
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> ranks;
  /// What the generator wants the user to know (reported as a remark).
  std::string note;
  /// Weight versions each stage keeps (the schedule's `weight_versions`):
  /// 2 for PipeDream-2BW's delayed update.
  int64_t weightVersions = 1;
};

/// Reports why a problem cannot be scheduled.
using ScheduleErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// A named generator of schedules. It fails, after reporting why through
/// `emitError`, on problems it cannot schedule.
struct ScheduleGenerator {
  llvm::StringLiteral name;
  FailureOr<GeneratedSchedule> (*generate)(const ScheduleProblem &problem,
                                           ScheduleErrorFn emitError);
};

/// Stage s on rank s, the placement of one stage per rank.
llvm::SmallVector<int64_t> identityPlacement(const ScheduleProblem &problem);

/// Stage s on rank s mod p: v = numStages / numRanks stages per rank in
/// loops over the ranks (interleaved and breadth-first schedules).
llvm::SmallVector<int64_t> loopedPlacement(const ScheduleProblem &problem);

/// Hanayo's waves: stage s of chunk c = s / p on rank s mod p for even c and
/// p - 1 - s mod p for odd c, so a micro-batch goes down the ranks and back
/// up, numStages / (2p) times.
llvm::SmallVector<int64_t> wavePlacement(const ScheduleProblem &problem);

/// Stages r and 2p - 1 - r on rank r, the V placement of two stages per
/// rank (one wave): a micro-batch goes down the ranks through its first p
/// stages and back up through the last p, so that rank 0 holds both ends.
inline llvm::SmallVector<int64_t>
vShapePlacement(const ScheduleProblem &problem) {
  return wavePlacement(problem);
}

/// The placements `auto`, `exact` and `greedy` search: one stage per rank,
/// or looped and (for 2W stages per rank) Hanayo's W waves, the V for W = 1.
llvm::SmallVector<llvm::SmallVector<int64_t>>
standardPlacements(const ScheduleProblem &problem);

/// Fails unless every rank runs exactly one stage.
LogicalResult requireOneStagePerRank(const ScheduleProblem &problem,
                                     llvm::StringRef schedule,
                                     ScheduleErrorFn emitError);

/// Every registered generator.
llvm::ArrayRef<ScheduleGenerator> getScheduleGenerators();

/// The generator called `name`, or null.
const ScheduleGenerator *lookupScheduleGenerator(llvm::StringRef name);

/// The names of all generators, comma separated.
std::string listScheduleGenerators();

/// Adds a generator that pp-schedule (and `auto`) can then use, such as one
/// a pass plugin brings (docs/Tutorials/NewSchedule.md). Fails if the name
/// is taken.
LogicalResult registerScheduleGenerator(ScheduleGenerator generator);

/// The built-in generators, one file each.
FailureOr<GeneratedSchedule> generateAuto(const ScheduleProblem &problem,
                                          ScheduleErrorFn emitError);
/// `auto`'s exact search alone, from no incumbent (Auto.cpp): for testing.
FailureOr<GeneratedSchedule> generateExact(const ScheduleProblem &problem,
                                           ScheduleErrorFn emitError);
/// The greedy list schedule (GreedySchedule.cpp): split backwards, weight
/// gradients in idle time, within the memory caps.
FailureOr<GeneratedSchedule> generateGreedy(const ScheduleProblem &problem,
                                            ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateGPipe(const ScheduleProblem &problem,
                                           ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateOneFOneB(const ScheduleProblem &problem,
                                              ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule>
generateInterleavedOneFOneB(const ScheduleProblem &problem,
                            ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateLoopedBFS(const ScheduleProblem &problem,
                                               ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule>
generateZeroBubbleH1(const ScheduleProblem &problem, ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule>
generateZeroBubbleH2(const ScheduleProblem &problem, ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateZeroBubbleV(const ScheduleProblem &problem,
                                                 ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateVHalf(const ScheduleProblem &problem,
                                           ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateVMin(const ScheduleProblem &problem,
                                          ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateDualPipeV(const ScheduleProblem &problem,
                                               ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule> generateHanayo(const ScheduleProblem &problem,
                                            ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule>
generateInterleavedZeroBubble(const ScheduleProblem &problem,
                              ScheduleErrorFn emitError);
FailureOr<GeneratedSchedule>
generatePipeDream2BW(const ScheduleProblem &problem, ScheduleErrorFn emitError);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULEGENERATORS_H
