//===- ScheduleExport.h - pp.schedule to external formats -------*- C++ -*-===//
//
// Writes a materialised `pp.schedule` in the formats tools outside the
// compiler read: the `pp-schedule-v1` JSON contract
// (docs/ScheduleJSON.md), PyTorch pipelining's action CSV, Chrome
// trace events (Perfetto), an ASCII timeline for terminals and an SVG one
// for documents.
//
//===----------------------------------------------------------------------===//

#ifndef PP_TARGET_SCHEDULEEXPORT_H
#define PP_TARGET_SCHEDULEEXPORT_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class Operation;
namespace pp {
class ScheduleOp;

/// Writes `schedule` as a `pp-schedule-v1` JSON document.
LogicalResult exportScheduleToJSON(ScheduleOp schedule, raw_ostream &os);

/// Writes `schedule` as torch.distributed.pipelining's schedule CSV
/// (`_load_csv`): one row per rank of `{stage}{op}{micro-batch}` actions,
/// op F, I (backward_input), W, B (fused backward), SEND_F, RECV_F, SEND_B
/// or RECV_B. All-reduces and optimizer steps have no PyTorch action and are
/// left out.
LogicalResult exportScheduleToPyTorchCSV(ScheduleOp schedule, raw_ostream &os);

/// Writes the unit-cost timeline of `schedule` (see ScheduleSimulator) as
/// Chrome trace event JSON, one track per rank. Fails with a diagnostic if
/// the schedule deadlocks.
LogicalResult exportScheduleToChromeTrace(ScheduleOp schedule, raw_ostream &os);

/// Draws the unit-cost timeline of `schedule` (see ScheduleSimulator) as
/// text: one row per rank, one fixed-width cell per time unit, then the
/// makespan and each rank's bubble fraction. Fails with a diagnostic if the
/// schedule deadlocks.
LogicalResult exportScheduleToASCII(ScheduleOp schedule, raw_ostream &os);

/// Draws the unit-cost timeline of `schedule` (see ScheduleSimulator) as an
/// SVG image: a time axis, one row of boxes per rank coloured by phase and
/// labelled with the micro-batch, and a legend. Fails with a diagnostic if
/// the schedule deadlocks.
LogicalResult exportScheduleToSVG(ScheduleOp schedule, raw_ostream &os);

/// The one `pp.schedule` nested in `root`; emits an error if there is none
/// or more than one, or if its ranks hold an op that is not an action.
FailureOr<ScheduleOp> findExportedSchedule(Operation *root);

/// Registers `--pp-schedule-to-json`, `--pp-schedule-to-csv`,
/// `--pp-schedule-to-chrome-trace`, `--pp-schedule-to-ascii` and
/// `--pp-schedule-to-svg`.
void registerScheduleExportTranslations();

} // namespace pp
} // namespace mlir

#endif // PP_TARGET_SCHEDULEEXPORT_H
