//===- ScheduleEvaluator.cpp - timing of generated schedules --------------===//
//
// Runs a generated schedule through ScheduleTiming and summarises the run.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/ScheduleEvaluator.h"

using namespace mlir;
using namespace mlir::pp;

bool Evaluation::fits(const ScheduleProblem &problem) const {
  for (auto [rank, held] : llvm::enumerate(rankPeak))
    if (held > problem.getMemoryCap(rank) + 1e-9)
      return false;
  return true;
}

bool Evaluation::betterThan(const Evaluation &other) const {
  if (makespan < other.makespan - 1e-9)
    return true;
  return makespan <= other.makespan + 1e-9 && totalEnd < other.totalEnd - 1e-9;
}

FailureOr<Evaluation>
ScheduleEvaluator::evaluate(const GeneratedSchedule &schedule,
                            SmallVectorImpl<SmallVector<double>> *starts) {
  if (failed(timing.runComputeOnly(schedule.ranks, stageRank, costs,
                                   /*recordIntervals=*/starts != nullptr)))
    return failure();
  int64_t numRanks = timing.getNumRanks();
  Evaluation result;
  result.makespan = 0.0;
  result.totalEnd = 0.0;
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    result.makespan = std::max(result.makespan, timing.getRankEnd(rank));
    result.totalEnd += timing.getRankEnd(rank);
    result.rankPeak.push_back(timing.getPeakMemory(rank));
  }
  if (starts) {
    starts->assign(numRanks, {});
    for (int64_t rank = 0; rank < numRanks; ++rank)
      for (const ScheduleTiming::Interval &interval : timing.getIntervals(rank))
        (*starts)[rank].push_back(interval.start);
  }
  return result;
}
