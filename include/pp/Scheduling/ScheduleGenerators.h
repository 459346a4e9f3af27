//===- ScheduleGenerators.h - the built-in pipeline schedules ---*- C++ -*-===//
//
// One small interface behind which every built-in schedule lives: a new
// schedule is a new generator file and one registration line.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULEGENERATORS_H
#define PP_SCHEDULING_SCHEDULEGENERATORS_H

#include "pp/Scheduling/ScheduleProblem.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/LogicalResult.h"

namespace mlir::pp::sched {

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

/// A named generator of schedules. It fails, with a message that says why,
/// on problems it cannot schedule.
struct ScheduleGenerator {
  llvm::StringLiteral name;
  llvm::Expected<GeneratedSchedule> (*generate)(const ScheduleProblem &problem);
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
llvm::Error requireOneStagePerRank(const ScheduleProblem &problem,
                                   llvm::StringRef schedule);

/// Every registered generator.
llvm::ArrayRef<ScheduleGenerator> getScheduleGenerators();

/// The generator called `name`, or null.
const ScheduleGenerator *lookupScheduleGenerator(llvm::StringRef name);

/// What the micro-batch counts `generator` schedules on `numRanks` ranks
/// must be a multiple of: the rank count for interleaved-1f1b, which runs
/// the micro-batches in groups of the ranks; 1 for the others.
int64_t getMicrobatchMultiple(const ScheduleGenerator &generator,
                              int64_t numRanks);

/// The names of all generators, comma separated.
std::string listScheduleGenerators();

/// Adds a generator that pp-schedule (and `auto`) can then use, such as one
/// a pass plugin brings (docs/Tutorials/NewSchedule.md). Fails if the name
/// is taken.
llvm::LogicalResult registerScheduleGenerator(ScheduleGenerator generator);

/// The built-in generators, one file each.
llvm::Expected<GeneratedSchedule> generateAuto(const ScheduleProblem &problem);
/// `auto`'s exact search alone, from no incumbent (Auto.cpp): for testing.
llvm::Expected<GeneratedSchedule> generateExact(const ScheduleProblem &problem);
/// The greedy list schedule (GreedySchedule.cpp): split backwards, weight
/// gradients in idle time, within the memory caps.
llvm::Expected<GeneratedSchedule>
generateGreedy(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule> generateGPipe(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateOneFOneB(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateInterleavedOneFOneB(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateLoopedBFS(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateZeroBubbleH1(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateZeroBubbleH2(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateZeroBubbleV(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule> generateVHalf(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule> generateVMin(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateDualPipeV(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateHanayo(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateInterleavedZeroBubble(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generatePipeDream2BW(const ScheduleProblem &problem);
llvm::Expected<GeneratedSchedule>
generateSeq1F1B(const ScheduleProblem &problem);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_SCHEDULEGENERATORS_H
