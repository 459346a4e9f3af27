//===- Passes.h - pp schedule passes ----------------------------*- C++ -*-===//
//
// Declares the passes that cut a training step into stages and materialise,
// check and simulate its pipeline schedule, and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_TRANSFORMS_SCHEDULE_PASSES_H
#define PP_DIALECT_PP_TRANSFORMS_SCHEDULE_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/PPEnums.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Scheduling/PartitionPlanner.h"
#include "pp/Scheduling/ScheduleOption.h"

namespace mlir {
namespace pp {

#define GEN_PASS_DECL
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"

/// The transfer semantics a pass works under on `schedule`: its `semantics`
/// option when given, else what the schedule records (async when nothing).
template <typename OptionT>
TransferSemantics getPassSemantics(const OptionT &option, ScheduleOp schedule) {
  return option.hasValue() ? option.getValue()
                           : schedule.getSemanticsOr(TransferSemantics::async);
}

} // namespace pp
} // namespace mlir

#endif // PP_DIALECT_PP_TRANSFORMS_SCHEDULE_PASSES_H
