//===- Verify.cpp - check a plain schedule against its problem ------------===//
//
// `verify(problem, schedule)`: a generated schedule checked as the
// compute-only program it is, by `verify(Program)`.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/Program.h"
#include "pp/Scheduling/ScheduleProblem.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// `schedule` as the compute-only program it runs for `problem`.
static Program getProgram(const ScheduleProblem &problem,
                          const GeneratedSchedule &schedule) {
  Program program;
  program.numStages = problem.numStages;
  program.numMicrobatches = problem.numMicrobatches;
  program.stageRank = schedule.stageRank;
  for (const auto &actions : schedule.ranks) {
    program.ranks.emplace_back();
    for (const ScheduledAction &scheduled : actions) {
      ProgramAction action;
      action.phase = scheduled.phase;
      action.stage = scheduled.stage;
      action.mb = scheduled.mb;
      action.part = scheduled.part;
      program.ranks.back().push_back(action);
    }
  }
  program.semantics = problem.semantics;
  program.cost = problem.cost;
  program.memoryCap = problem.memoryCap;
  program.numSlices = problem.numSlices;
  program.explicitTransfers = false;
  return program;
}

llvm::Error mlir::pp::sched::verify(const ScheduleProblem &problem,
                                    const GeneratedSchedule &schedule) {
  if (static_cast<int64_t>(schedule.ranks.size()) != problem.numRanks)
    return ScheduleError() << "the schedule has " << schedule.ranks.size()
                           << " ranks, expected " << problem.numRanks;
  std::vector<Violation> violations = verify(getProgram(problem, schedule));
  if (violations.empty())
    return llvm::Error::success();
  return ScheduleError() << violations.front().message;
}

llvm::Error
mlir::pp::sched::verifySliceOrder(const ScheduleProblem &problem,
                                  const GeneratedSchedule &schedule) {
  // What verify finds with the slices and not without them is their order.
  Program program = getProgram(problem, schedule);
  std::vector<Violation> sliced = verify(program);
  program.numSlices = 1;
  std::vector<Violation> whole = verify(program);
  for (const Violation &violation : sliced)
    if (llvm::none_of(whole, [&](const Violation &other) {
          return other.message == violation.message;
        }))
      return ScheduleError() << violation.message;
  return llvm::Error::success();
}
