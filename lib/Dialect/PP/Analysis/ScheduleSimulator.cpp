//===- ScheduleSimulator.cpp - run a pp.schedule in lock step -------------===//
//
// Reads schedule ops into the timing model and reports its deadlocks at
// the ops.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

ScheduleSimulator::ScheduleSimulator(ScheduleOp schedule)
    : timing(schedule.getNumStages(), schedule.getNumMicrobatches()),
      unitCosts(sched::StageCosts::getUnit(schedule.getNumStages())) {
  std::vector<TimedAction> actions;
  SmallVector<int64_t> rankBegin = {0};
  for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
    for (Operation &op : rank.getBody().front()) {
      // One step as a run of one step runs it: the next step's actions
      // are skipped (pp-verify-schedule checks them back to back).
      ProgramAction action = readProgramAction(op);
      if (action.part == StepPart::next)
        continue;
      ops.push_back(&op);
      actions.push_back(action);
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
  // The rank on the other end of the transfer `rank` is blocked at.
  auto getPeer = [&](int64_t rank) {
    return timing
        .getActions(
            rank)[*timing.getBlockedAction(rank) - timing.getFirstAction(rank)]
        .peer;
  };
  SmallVector<int64_t> chain = getWaitChain();
  ArrayRef<int64_t> waiting = chain;
  if (chain.size() > 1 && llvm::is_contained(waiting.drop_back(), chain.back()))
    waiting = waiting.drop_back();
  Operation *first = getBlockedAction(waiting.front());
  InFlightDiagnostic diag = first->emitError("deadlock: rank ")
                            << waiting.front() << " waits at this '"
                            << first->getName() << "'";
  for (auto [i, rank] : llvm::enumerate(waiting)) {
    Operation *blocked = getBlockedAction(rank);
    bool neverSent = timing.waitsForever(rank);
    if (i == 0) {
      if (neverSent)
        diag << ", which has no matching 'pp.send'";
      else
        diag << " for rank " << getPeer(rank);
      continue;
    }
    if (neverSent) {
      diag << ", which waits at a 'pp.recv' that has no matching 'pp.send'";
      diag.attachNote(blocked->getLoc())
          << "rank " << rank << " waits here for a 'pp.send' that never comes";
      continue;
    }
    diag << ", which waits for rank " << getPeer(rank);
    diag.attachNote(blocked->getLoc())
        << "rank " << rank << " waits here for rank " << getPeer(rank);
  }
  return diag;
}
