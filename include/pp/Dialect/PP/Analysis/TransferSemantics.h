//===- TransferSemantics.h - how sends and receives synchronise -*- C++ -*-===//
//
// The `semantics` of pp-insert-transfers, pp-verify-schedule and
// pp-simulate, kept apart from the timing model (ScheduleTiming.h) so that
// the pass declarations need only this.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_TRANSFERSEMANTICS_H
#define PP_DIALECT_PP_ANALYSIS_TRANSFERSEMANTICS_H

// TransferSemantics (async or rendezvous) and its stringify/symbolize
// functions are generated from PPEnums.td.
#include "pp/Dialect/PP/IR/PPEnums.h"

#endif // PP_DIALECT_PP_ANALYSIS_TRANSFERSEMANTICS_H
