//===- ScheduleProgram.h - a pp.schedule as a plain program -----*- C++ -*-===//
//
// The one adapter between a `pp.schedule` and the scheduling library's
// `sched::Program`: reads the schedule's ranks, placement, costs and caps
// into the plain program, writes a program back as a schedule (the
// importers), and reports the program's violations as diagnostics at the
// ops they are about.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_SCHEDULEPROGRAM_H
#define PP_DIALECT_PP_ANALYSIS_SCHEDULEPROGRAM_H

#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Scheduling/Program.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <string>

namespace mlir::pp {

/// `op` as an action of a program: its kind, phase or transfer, stage,
/// micro-batch, peer and step part; kind `other` for an op that is not an
/// action.
sched::ProgramAction readProgramAction(Operation &op);

/// `schedule` as the program it runs with `semantics`; `staticMemory` is
/// what each rank holds besides activations (nothing when empty). A
/// schedule without costs gives a program without them (unit costs).
sched::Program readProgram(ScheduleOp schedule, TransferSemantics semantics,
                           ArrayRef<double> staticMemory = {});

/// What a `pp.schedule` spells out besides the program it runs: its names,
/// and the form of the attributes a program holds as plain values, so that
/// a schedule written from what was read is the same IR.
struct ScheduleSpelling {
  /// The symbol, the generator or imported name, and the model function.
  std::string symbol, name, pipeline = "train_step";
  /// One `memory_cap` for every rank rather than one per rank.
  bool uniformMemoryCap = false;
  /// Whether `num_replicas` and `slices` are written (a program holds
  /// their defaults when they are not; `zero` is written where the program
  /// holds ZeRO stages).
  bool hasReplicas = false, hasSlices = false;
};

/// The spelling of `schedule`.
ScheduleSpelling readScheduleSpelling(ScheduleOp schedule);

/// Where each part of a written schedule comes from: the program (rank -1),
/// a rank (action -1) or an action.
using ProgramLocator = function_ref<Location(sched::ProgramSite)>;

/// Writes `program` as a `pp.schedule` spelled `spelling` at `builder`'s
/// insertion point, each op at `locate` of its site. Computes name no stage
/// function (an imported program has no model), and the schedule keeps one
/// weight version.
ScheduleOp writeProgram(OpBuilder &builder, const sched::Program &program,
                        const ScheduleSpelling &spelling,
                        ProgramLocator locate);

/// The vocabulary's name for `action`; none for kind `other`.
std::optional<ActionKind> getActionKind(const sched::ProgramAction &action);

/// Reports `violation` of the program read from `schedule` at its op, for
/// the caller to add notes to.
InFlightDiagnostic emitViolation(ScheduleOp schedule,
                                 const sched::Violation &violation);

/// Reports each of `violations` of the program read from `schedule` at its
/// op: an action, a rank or the schedule itself.
void emitViolations(ScheduleOp schedule, ArrayRef<sched::Violation> violations);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_SCHEDULEPROGRAM_H
