//===- PPEnums.h - pp enumerations ------------------------------*- C++ -*-===//
//
// The enum classes of PPEnums.td (slot kinds) and PPOptionEnums.td (the
// values of pass options), with their generated stringify/symbolize
// functions (defined in MLIRPP), and those of schedules the dialect's
// attributes carry (phases, transfer kinds and semantics: ScheduleEnums.h).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_PPENUMS_H
#define PP_DIALECT_PP_IR_PPENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "pp/Scheduling/ScheduleEnums.h"

#include "pp/Dialect/PP/IR/PPEnums.h.inc"
#include "pp/Dialect/PP/IR/PPOptionEnums.h.inc"

#endif // PP_DIALECT_PP_IR_PPENUMS_H
