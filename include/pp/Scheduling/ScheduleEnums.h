//===- ScheduleEnums.h - enumerations of pp schedules -----------*- C++ -*-===//
//
// The enum classes of ScheduleEnums.td (phases, transfer kinds, transfer
// semantics) and ScheduleOptionEnums.td (recompute policies), with their
// generated stringify/symbolize functions (defined in PPScheduling), and the
// step parts of no-flush schedules. The pp dialect's attributes carry the
// same enums.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULEENUMS_H
#define PP_SCHEDULING_SCHEDULEENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "pp/Scheduling/ScheduleEnums.h.inc"
#include "pp/Scheduling/ScheduleOptionEnums.h.inc"

namespace mlir::pp {
/// Which steps of a run an action of a no-flush schedule runs in
/// (docs/PipeDream2BW.md): every step, only the first (`first_step`: the
/// warm-up, done by the previous step's `next_step` actions otherwise), or
/// every step but the last, on the next step's micro-batch (`next_step`).
enum class StepPart { every, firstOnly, next };
} // namespace mlir::pp

#endif // PP_SCHEDULING_SCHEDULEENUMS_H
