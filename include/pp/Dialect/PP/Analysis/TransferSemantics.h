//===- TransferSemantics.h - how sends and receives synchronise -*- C++ -*-===//
//
// The `semantics` of pp-insert-transfers, pp-verify-schedule and
// pp-simulate, kept apart from the timing model (ScheduleTiming.h) so that
// the pass declarations need only this.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_TRANSFERSEMANTICS_H
#define PP_DIALECT_PP_ANALYSIS_TRANSFERSEMANTICS_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::pp {

/// How point-to-point transfers synchronise.
enum class TransferSemantics {
  /// A send never blocks; a receive waits for its send (the
  /// `pp-schedule-v1` contract, MPI's buffered sends).
  async,
  /// A send also waits until its receive is reached (NCCL send/recv).
  rendezvous,
};

/// `async` or `rendezvous`, or none.
std::optional<TransferSemantics>
symbolizeTransferSemantics(llvm::StringRef text);
llvm::StringRef stringifyTransferSemantics(TransferSemantics semantics);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_TRANSFERSEMANTICS_H
