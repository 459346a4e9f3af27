//===- ScheduleToCSV.cpp - pp.schedule to a PyTorch pipelining CSV --------===//
//
// Writes the schedule CSV that torch.distributed.pipelining loads with
// `_load_csv`, from the program the schedule adapter reads: row r holds the
// actions of rank r, comma-separated, each written `{stage}{op}{micro-batch}`.
// An overlapped pair is written
// `(F;B)OVERLAP_F_B` and an all-reduce `{stage}REDUCE_GRAD` followed by its
// `{stage}WAIT_REDUCE_GRAD`, as PyTorch's schedules do. Optimizer steps have
// no PyTorch action (its runtime runs them outside the schedule), so they
// are left out; nor do exchange groups (`grouped`): their transfers keep
// their order, one cell each (docs/PyTorchCSV.md). Sequence-sliced
// schedules have no form there and are refused.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"
#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pp;

using Kind = sched::TimedAction::Kind;

/// PyTorch's computation type of an action (ActionVocabulary.h): I is the
/// input-gradient backward that pp calls backward_input, B the fused
/// backward.
static StringRef getPyTorchName(ActionKind kind) {
  return getActionSpelling(kind).pytorch;
}

/// The cells of a rank running `actions`.
static SmallVector<std::string>
getCells(ArrayRef<sched::ProgramAction> actions) {
  SmallVector<std::string> cells;
  for (const sched::ProgramAction &action : actions) {
    std::optional<ActionKind> kind = getActionKind(action);
    switch (action.kind) {
    case Kind::compute:
    case Kind::send:
    case Kind::recv: {
      std::string cell = llvm::formatv("{0}{1}{2}", action.stage,
                                       getPyTorchName(*kind), action.mb);
      // The verifier keeps the partner forward right before it.
      if (action.overlapped)
        cells.back() =
            llvm::formatv("({0};{1}){2}", cells.back(), cell, kPyTorchOverlap);
      else
        cells.push_back(std::move(cell));
      break;
    }
    case Kind::allReduce:
    case Kind::reduceScatter:
      // pp's optimizer step waits for the sum; PyTorch's schedules wait
      // right away unless told to defer. Both are REDUCE_GRAD; an UNSHARD
      // in the CSV says which.
      cells.push_back(
          llvm::formatv("{0}{1}", action.stage, getPyTorchName(*kind)));
      cells.push_back(llvm::formatv("{0}{1}", action.stage,
                                    getPyTorchName(ActionKind::WaitAllReduce)));
      break;
    case Kind::allGather:
      cells.push_back(
          llvm::formatv("{0}{1}", action.stage, getPyTorchName(*kind)));
      break;
    case Kind::optimizerStep:
    case Kind::other:
      break;
    }
  }
  return cells;
}

LogicalResult mlir::pp::exportScheduleToPyTorchCSV(ScheduleOp schedule,
                                                   raw_ostream &os) {
  // PyTorch's pipelining has no delayed update: the schedule would train
  // synchronously there.
  if (schedule.getNumWeightVersions() != 1)
    return schedule.emitOpError("keeps ")
           << schedule.getNumWeightVersions()
           << " weight versions (pipedream-2bw), which PyTorch's schedule "
              "CSV cannot express";
  // PyTorch's actions name a micro-batch and no sequence slice: its runtime
  // would run the slices as independent micro-batches.
  if (schedule.getNumSlices() != 1)
    return schedule.emitOpError("runs ")
           << schedule.getNumSlices()
           << " sequence slices per micro-batch (seq1f1b), which PyTorch's "
              "schedule CSV cannot express; export it as pp-schedule-v1 JSON";
  // An UNSHARD before its stage's REDUCE_GRAD reads back as FSDP's, which
  // the import drops.
  if (schedule.hasZeroStage(3))
    return schedule.emitOpError(
        "has zero = 3 (ZeRO-3), whose gathers before use PyTorch's schedule "
        "CSV cannot tell from FSDP's; export it as pp-schedule-v1 JSON");
  sched::Program program =
      readProgram(schedule, schedule.getSemanticsOr(TransferSemantics::async));
  for (ArrayRef<sched::ProgramAction> actions : program.ranks)
    os << llvm::join(getCells(actions), ",") << "\n";
  return success();
}
