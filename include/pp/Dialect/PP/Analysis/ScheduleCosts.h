//===- ScheduleCosts.h - a #pp.cost as the scheduling library's -*- C++ -*-===//
//
// Reads the costs a schedule carries in IR into the plain costs of the
// scheduling library (pp/Scheduling), for the passes that adapt IR to it.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_SCHEDULECOSTS_H
#define PP_DIALECT_PP_ANALYSIS_SCHEDULECOSTS_H

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Scheduling/ScheduleTiming.h"

namespace mlir::pp {

/// The fields of `cost` as plain data.
sched::StageCosts getStageCosts(CostAttr cost);

/// A #pp.cost holding `costs`, per-micro-batch tables included.
CostAttr getCostAttr(MLIRContext *context, const sched::StageCosts &costs);

/// The durations and memory changes of `cost`'s actions.
inline sched::ActionCosts getActionCosts(CostAttr cost) {
  return sched::ActionCosts(getStageCosts(cost));
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_SCHEDULECOSTS_H
