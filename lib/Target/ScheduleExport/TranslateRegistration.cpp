//===- TranslateRegistration.cpp - register the schedule exporters --------===//
//
// Makes the schedule exporters available to mlir-translate-style tools and
// finds the schedule to export in the input.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/InitAll.h"
#include "pp/Target/ScheduleExport.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;
using namespace mlir::pp;

/// Checks that every op in the ranks is an action the format can express.
static LogicalResult checkExportable(ScheduleOp schedule) {
  WalkResult result = schedule.walk([](Operation *op) {
    if (isa<ScheduleOp, RankOp, ComputeOp, SendOp, RecvOp, AllReduceOp,
            ReduceScatterOp, AllGatherOp, OptimizerStepOp>(op))
      return WalkResult::advance();
    op->emitOpError("cannot be exported: not a schedule action");
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

FailureOr<ScheduleOp> mlir::pp::findExportedSchedule(Operation *root) {
  SmallVector<ScheduleOp, 1> schedules;
  root->walk([&](ScheduleOp schedule) { schedules.push_back(schedule); });
  // Errors at locations, not ops: printing a whole module or schedule with
  // the error would bury it.
  if (schedules.empty())
    return mlir::emitError(root->getLoc(), "no 'pp.schedule' to export");
  if (schedules.size() > 1) {
    InFlightDiagnostic diag =
        mlir::emitError(schedules[1].getLoc(),
                        "expected exactly one 'pp.schedule' to export, found ")
        << schedules.size();
    diag.attachNote(schedules[0].getLoc()) << "the first one is here";
    return diag;
  }
  if (failed(checkExportable(schedules.front())))
    return failure();
  return schedules.front();
}

/// Adapts an exporter of one schedule to a translation of a whole input.
template <LogicalResult (*Export)(ScheduleOp, raw_ostream &)>
static LogicalResult translateSchedule(Operation *root, raw_ostream &os) {
  FailureOr<ScheduleOp> schedule = findExportedSchedule(root);
  if (failed(schedule))
    return failure();
  return Export(*schedule, os);
}

void mlir::pp::registerScheduleExportTranslations() {
  // The input may be a whole pipeline program, not just its schedule.
  auto registerDialects = [](DialectRegistry &registry) {
    mlir::pp::registerAllDialects(registry);
  };
  static TranslateFromMLIRRegistration toJSON(
      "pp-schedule-to-json", "Export the pp.schedule as pp-schedule-v1 JSON",
      translateSchedule<exportScheduleToJSON>, registerDialects);
  static TranslateFromMLIRRegistration toCSV(
      "pp-schedule-to-csv",
      "Export the pp.schedule as a PyTorch pipelining schedule CSV",
      translateSchedule<exportScheduleToPyTorchCSV>, registerDialects);
  static TranslateFromMLIRRegistration toChromeTrace(
      "pp-schedule-to-chrome-trace",
      "Export the unit-cost timeline of the pp.schedule as a Chrome trace",
      translateSchedule<exportScheduleToChromeTrace>, registerDialects);
  static TranslateFromMLIRRegistration toASCII(
      "pp-schedule-to-ascii",
      "Draw the unit-cost timeline of the pp.schedule as ASCII art",
      translateSchedule<exportScheduleToASCII>, registerDialects);
  static TranslateFromMLIRRegistration toSVG(
      "pp-schedule-to-svg",
      "Draw the unit-cost timeline of the pp.schedule as an SVG image",
      translateSchedule<exportScheduleToSVG>, registerDialects);
}
