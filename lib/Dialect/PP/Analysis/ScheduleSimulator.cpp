//===- ScheduleSimulator.cpp - run a pp.schedule in lock step -------------===//
//
// Reads a schedule's program (ScheduleProgram.h) into the timing model and
// reports its deadlocks at the ops.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

ScheduleSimulator::ScheduleSimulator(ScheduleOp schedule)
    : schedule(schedule),
      timing(schedule.getNumStages(), schedule.getNumMicrobatches()),
      unitCosts(sched::StageCosts::getUnit(schedule.getNumStages())) {
  Program program = readProgram(schedule, TransferSemantics::async);
  std::vector<TimedAction> actions;
  SmallVector<int64_t> rankBegin = {0};
  for (auto [rank, rankOp] :
       llvm::enumerate(schedule.getBody().front().getOps<RankOp>())) {
    for (auto [index, op] : llvm::enumerate(rankOp.getBody().front())) {
      // One step as a run of one step runs it: the next step's actions
      // are skipped (pp-verify-schedule checks them back to back).
      const ProgramAction &action = program.ranks[rank][index];
      if (action.part == StepPart::next)
        continue;
      ops.push_back(&op);
      sites.push_back(
          {static_cast<int64_t>(rank), static_cast<int64_t>(index)});
      actions.push_back(action);
      // Gathered per param, the computes gather (their costs say how
      // long); the stage's all-gather moves nothing.
      if (action.kind == TimedAction::Kind::allGather &&
          program.gathersPerParam(action.stage))
        actions.back().kind = TimedAction::Kind::other;
    }
    rankBegin.push_back(actions.size());
  }
  timing.setActions(std::move(actions), std::move(rankBegin));
}

LogicalResult ScheduleSimulator::runForTimeline(Operation *schedule) {
  if (succeeded(run()))
    return success();
  emitDeadlockError().attachNote(schedule->getLoc())
      << "while simulating this schedule for its timeline";
  return failure();
}

InFlightDiagnostic ScheduleSimulator::emitDeadlockError() const {
  return emitViolation(schedule, getDeadlock(timing, sites));
}
