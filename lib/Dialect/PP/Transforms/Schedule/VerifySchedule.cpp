//===- VerifySchedule.cpp - check a materialised pipeline schedule --------===//
//
// pp-verify-schedule: reads each `pp.schedule` into a sched::Program, runs
// the scheduling library's `verify` on it and reports every violation as a
// diagnostic at the action, rank or schedule it is about; the checks that
// need the module (tensor-parallel grids) and no-flush schedules run back to
// back are the pass's own.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/NoFlushSteps.h"
#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"
#include "pp/Dialect/PP/Analysis/StaticMemory.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPVERIFYSCHEDULE
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// Verifies `schedule` as the program it runs with `semantics`, reporting
/// each violation at its op.
static LogicalResult check(ScheduleOp schedule, TransferSemantics semantics,
                           ArrayRef<double> staticMemory = {}) {
  std::vector<sched::Violation> violations =
      sched::verify(readProgram(schedule, semantics, staticMemory));
  emitViolations(schedule, violations);
  return failure(!violations.empty());
}

/// Checks `steps` calls of a no-flush schedule run back to back.
static LogicalResult checkBackToBack(ScheduleOp schedule, int64_t steps,
                                     TransferSemantics semantics) {
  ScheduleOp run = buildBackToBack(schedule, steps);
  LogicalResult result = check(run, semantics);
  run.erase();
  return result;
}

/// A no-flush schedule: its step form, then one step as a run of one step
/// runs it, then three steps back to back (first, middle and last call),
/// where micro-batch j of step s is s * m + j.
static LogicalResult checkNoFlush(ScheduleOp schedule,
                                  TransferSemantics semantics) {
  if (failed(verifyNextStepActions(schedule)) ||
      failed(checkBackToBack(schedule, 1, semantics)))
    return failure();
  if (succeeded(checkBackToBack(schedule, 3, semantics)))
    return success();
  return schedule.emitError("fails when 3 steps run back to back without a "
                            "flush (above, micro-batch j of step s is ")
         << schedule.getNumMicrobatches() << " * s + j)";
}

/// A schedule of tensor-parallel groups of T processes needs its stage
/// functions partitioned over a grid of T (pp-shard-stages), and stage
/// functions partitioned so need such a schedule.
static LogicalResult checkTensorParallel(ScheduleOp schedule) {
  int64_t parts = getTensorParallelism(schedule);
  auto module = schedule->getParentOfType<ModuleOp>();
  auto grid =
      module ? module.lookupSymbol<shard::GridOp>("pp_tp") : shard::GridOp();
  int64_t gridParts = grid && grid.getShape().size() == 1 ? grid.getShape()[0]
                                                          : (grid ? -1 : 1);
  if (parts == gridParts)
    return success();
  if (gridParts == 1)
    return schedule.emitError("runs as pp.tensor_parallel = ")
           << parts << ", but its stage functions are not partitioned over "
           << "shard.grid @pp_tp(shape = " << parts
           << ") (pp-shard-stages does that)";
  InFlightDiagnostic diag = schedule.emitError("runs as pp.tensor_parallel = ")
                            << parts << ", but its stage functions are "
                            << "partitioned over grid @pp_tp";
  diag.attachNote(grid.getLoc()) << "the grid";
  return diag;
}

namespace {
struct VerifySchedulePass
    : mlir::pp::impl::PPVerifyScheduleBase<VerifySchedulePass> {
  using Base::Base;
  /// Each rank's weights, gradients and optimizer state when the memory cap
  /// counts them (static-memory) and the schedule has its model.
  SmallVector<double> getHeldStaticMemory(ScheduleOp schedule) {
    if (staticMemory.empty())
      return {};
    std::optional<SmallVector<SmallVector<WeightBuffer>>> weights =
        getStageWeights(schedule);
    if (!weights)
      return {};
    return llvm::map_to_vector(
        getRankStaticMemory(schedule, *weights,
                            staticMemory == "adam" ? OptimizerKind::adam
                                                   : OptimizerKind::sgd),
        [](const StaticMemory &held) -> double { return held.total(); });
  }
  void runOnOperation() override {
    StringRef optimizer = staticMemory;
    if (!optimizer.empty() && optimizer != "sgd" && optimizer != "adam") {
      getOperation().emitError("static-memory must be sgd or adam, got '")
          << staticMemory << "'";
      return signalPassFailure();
    }
    bool failed = false;
    SmallVector<ScheduleOp> schedules;
    getOperation().walk([&](ScheduleOp op) { schedules.push_back(op); });
    for (ScheduleOp schedule : schedules)
      failed |= mlir::failed(checkTensorParallel(schedule));
    for (ScheduleOp schedule : schedules) {
      TransferSemantics mode = getPassSemantics(semantics, schedule);
      failed |= (runsWithoutFlush(schedule)
                     ? checkNoFlush(schedule, mode)
                     : check(schedule, mode, getHeldStaticMemory(schedule)))
                    .failed();
    }
    if (failed)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
