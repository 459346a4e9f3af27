//===- ScheduleEvaluator.cpp - timing of generated schedules --------------===//
//
// Runs a generated schedule through ScheduleTiming and summarises the run.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleEvaluator.h"
#include "pp/Scheduling/TransferOrder.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

bool Evaluation::fits(const ScheduleProblem &problem) const {
  for (auto [rank, held] : llvm::enumerate(rankPeak))
    if (held > problem.getMemoryCap(rank) + 1e-9)
      return false;
  return true;
}

double Evaluation::bubble() const {
  double idle = 0.0;
  for (double busy : rankBusy)
    idle += makespan - busy;
  return makespan > 0 ? idle / (makespan * rankBusy.size()) : 0.0;
}

bool Evaluation::betterThan(const Evaluation &other) const {
  if (makespan < other.makespan - 1e-9)
    return true;
  return makespan <= other.makespan + 1e-9 && totalEnd < other.totalEnd - 1e-9;
}

FailureOr<Evaluation>
ScheduleEvaluator::evaluate(const GeneratedSchedule &schedule,
                            SmallVectorImpl<SmallVector<double>> *starts) {
  bool async = semantics == TransferSemantics::async;
  // The compute-only run checks that every action's inputs come first (in
  // a program with transfers, actions wait only for their receives) and,
  // with async transfers, is the program's timing; otherwise the program
  // runs with its transfers.
  if (failed(timing.runComputeOnly(schedule.ranks, stageRank, costs,
                                   /*recordIntervals=*/async && starts)) ||
      (!async && failed(runProgram(schedule, costs, semantics, program))))
    return failure();
  const ScheduleTiming &timed = async ? timing : program;
  int64_t numRanks = schedule.ranks.size();
  Evaluation result;
  result.makespan = 0.0;
  result.totalEnd = 0.0;
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    // A rank without stages has no optimizer step.
    double optimizerSteps =
        rank < static_cast<int64_t>(optimizer.size()) ? optimizer[rank] : 0.0;
    double end = timed.getRankEnd(rank) + optimizerSteps;
    result.makespan = std::max(result.makespan, end);
    result.totalEnd += end;
    result.rankPeak.push_back(timing.getPeakMemory(rank));
    double busy = costs.stepOverhead() + optimizerSteps;
    for (const ScheduledAction &action : schedule.ranks[rank])
      busy += costs.duration(action.phase, action.stage, action.mb);
    result.rankBusy.push_back(busy);
  }
  if (starts) {
    starts->assign(numRanks, {});
    for (int64_t rank = 0; rank < numRanks; ++rank)
      for (auto [i, interval] : llvm::enumerate(timed.getIntervals(rank)))
        if (async ||
            timed.getActions(rank)[i].kind == TimedAction::Kind::compute)
          (*starts)[rank].push_back(interval.start);
  }
  return result;
}

llvm::Expected<Evaluation>
mlir::pp::sched::simulate(const ScheduleProblem &problem,
                          const GeneratedSchedule &schedule) {
  ActionCosts costs(problem.getCostOrUnit());
  ScheduleEvaluator evaluator(problem, costs, schedule.stageRank);
  FailureOr<Evaluation> eval = evaluator.evaluate(schedule);
  if (failed(eval))
    return ScheduleError() << "the ranks wait for each other forever";
  return std::move(*eval);
}

SmallVector<double>
mlir::pp::sched::countInFlight(const GeneratedSchedule &schedule) {
  int64_t numStages = schedule.stageRank.size();
  ActionCosts unit(StageCosts::getUnit(numStages));
  SmallVector<double> peak;
  for (int64_t stage = 0; stage < numStages; ++stage) {
    auto delta = [&](const ScheduledAction &action) {
      return action.stage == stage ? unit.memoryDelta(action.phase, stage, 0)
                                   : 0.0;
    };
    peak.push_back(
        findMemoryPeak(schedule.ranks[schedule.stageRank[stage]], delta).peak);
  }
  return peak;
}
