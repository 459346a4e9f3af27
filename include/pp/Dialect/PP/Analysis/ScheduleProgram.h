//===- ScheduleProgram.h - a pp.schedule as a plain program -----*- C++ -*-===//
//
// The one adapter between a `pp.schedule` and the scheduling library's
// `sched::Program`: reads the schedule's ranks, placement, costs and caps
// into the plain program, and reports the program's violations as
// diagnostics at the ops they are about.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_SCHEDULEPROGRAM_H
#define PP_DIALECT_PP_ANALYSIS_SCHEDULEPROGRAM_H

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Scheduling/Program.h"

#include "mlir/IR/Diagnostics.h"

namespace mlir::pp {

/// `op` as an action of a program: its kind, phase or transfer, stage,
/// micro-batch, peer and step part; kind `other` for an op that is not an
/// action.
sched::ProgramAction readProgramAction(Operation &op);

/// `schedule` as the program it runs with `semantics`; `staticMemory` is
/// what each rank holds besides activations (nothing when empty).
sched::Program readProgram(ScheduleOp schedule, TransferSemantics semantics,
                           ArrayRef<double> staticMemory = {});

/// Reports `violation` of the program read from `schedule` at its op, for
/// the caller to add notes to.
InFlightDiagnostic emitViolation(ScheduleOp schedule,
                                 const sched::Violation &violation);

/// Reports each of `violations` of the program read from `schedule` at its
/// op: an action, a rank or the schedule itself.
void emitViolations(ScheduleOp schedule, ArrayRef<sched::Violation> violations);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_SCHEDULEPROGRAM_H
