//===- ScheduleProblem.h - pipeline schedules on plain data -----*- C++ -*-===//
//
// What a pipeline schedule is built for (stages, micro-batches, ranks,
// costs, memory caps) and what it is (where each stage runs, what each rank
// does, in order), as plain data that generators, searches, the timing
// model and `verify` share without IR.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULEPROBLEM_H
#define PP_SCHEDULING_SCHEDULEPROBLEM_H

#include "pp/Scheduling/ScheduleTiming.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <optional>
#include <string>

namespace mlir::pp::sched {

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
  /// What the stages cost (unit costs when none), and how much activation
  /// memory each rank may hold: one cap per rank, none when empty; `auto`
  /// searches with them.
  std::optional<StageCosts> cost;
  llvm::SmallVector<double> memoryCap;
  /// The semantics of the transfers the schedule will run with:
  /// pp-insert-transfers{semantics} orders them, and `auto`, `greedy` and
  /// the local search time candidates as that program (TransferOrder.h).
  TransferSemantics semantics = TransferSemantics::async;
  /// Sequence slices per micro-batch (Seq1F1B): with k > 1 the schedule's
  /// micro-batch index u is slice u mod k of micro-batch u / k, and
  /// numMicrobatches counts slices. A stage runs the forwards of a
  /// micro-batch's slices in order and their backwards in reverse.
  int64_t numSlices = 1;
  /// The units of the costs' times and memory amounts ("s", "B"), which
  /// the generators' notes print; none for unit costs.
  std::string timeUnit, memoryUnit;

  /// The stages' costs, unit costs when none are given.
  StageCosts getCostOrUnit() const {
    return cost ? *cost : StageCosts::getUnit(numStages);
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

/// A schedule: where each stage runs and what each rank does.
struct GeneratedSchedule {
  llvm::SmallVector<int64_t> stageRank;
  llvm::SmallVector<llvm::SmallVector<ScheduledAction>> ranks;
  /// What the generator wants the user to know (reported as a remark).
  std::string note;
  /// Weight versions each stage keeps (the schedule's `weight_versions`):
  /// 2 for PipeDream-2BW's delayed update.
  int64_t weightVersions = 1;
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

/// Why a problem cannot be scheduled or a schedule is wrong: a message built
/// with `<<`, as a diagnostic is, that becomes the llvm::Error (or the
/// failed llvm::Expected) a generator or check returns.
class ScheduleError {
public:
  template <typename T> ScheduleError &operator<<(const T &value) {
    llvm::raw_string_ostream(message) << value;
    return *this;
  }
  operator llvm::Error() const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }
  template <typename T> operator llvm::Expected<T>() const {
    return llvm::Error(*this);
  }

private:
  std::string message;
};

/// Checks `schedule` against `problem` without IR, as the compute-only
/// program it is (`verify(Program)`, Program.h): the placement (every stage
/// on a rank, every rank with its stages' actions only), that each forward
/// and backward (fused, or B and W) of every stage and micro-batch runs
/// exactly once, that the ranks run to the end when each action waits for
/// its inputs (dependencies, deadlock freedom), that sequence slices run in
/// order, and that no rank holds more activation memory than its cap. The
/// error names the first problem.
llvm::Error verify(const ScheduleProblem &problem,
                   const GeneratedSchedule &schedule);

/// Checks only that the sequence slices of `problem` run in order on every
/// stage: forwards in slice order, backwards in reverse.
llvm::Error verifySliceOrder(const ScheduleProblem &problem,
                             const GeneratedSchedule &schedule);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_SCHEDULEPROBLEM_H
