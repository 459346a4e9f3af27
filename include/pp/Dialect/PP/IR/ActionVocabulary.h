//===- ActionVocabulary.h - the names of schedule actions -------*- C++ -*-===//
//
// One table of the actions a schedule holds and how each is spelled: its
// `op` in pp-schedule-v1 JSON (also pp's timelines and Python), its
// computation type in PyTorch pipelining's schedule CSV, and how timelines
// show it. Every importer, exporter and the Python package read it here.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_ACTIONVOCABULARY_H
#define PP_DIALECT_PP_IR_ACTIONVOCABULARY_H

#include "pp/Dialect/PP/IR/PPEnums.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::pp {

/// An action of a schedule: those pp has an op for, then those of PyTorch's
/// CSV that pp reads without one.
enum class ActionKind {
  Forward,        // pp.compute forward
  BackwardInput,  // pp.compute backward_input
  BackwardWeight, // pp.compute backward_weight
  Backward,       // pp.compute backward (fused)
  SendActivation, // pp.send activation
  RecvActivation, // pp.recv activation
  SendGradient,   // pp.send gradient
  RecvGradient,   // pp.recv gradient
  AllReduce,      // pp.all_reduce
  OptimizerStep,  // pp.optimizer_step
  ReduceScatter,  // pp.reduce_scatter
  AllGather,      // pp.all_gather
  WaitSendActivation,
  WaitSendGradient,
  WaitAllReduce,
  Reshard,
};

/// How one action is spelled and shown.
struct ActionSpelling {
  ActionKind kind;
  /// Its `op` in pp-schedule-v1 JSON and in pp's timelines; empty where pp
  /// has no such action.
  llvm::StringLiteral json;
  /// Its computation type in PyTorch's schedule CSV; empty where PyTorch
  /// has none (its runtime runs optimizer steps outside the schedule).
  llvm::StringLiteral pytorch;
  /// Whether the action names a micro-batch besides its stage.
  bool hasMicrobatch;
  /// What it does, for legends.
  llvm::StringLiteral description;
  /// The fill of a computation's boxes in timelines; empty for the others.
  llvm::StringLiteral colour;
};

/// PyTorch's CSV writes a forward and a backward that run concurrently as
/// `(F;B)OVERLAP_F_B`.
inline constexpr llvm::StringLiteral kPyTorchOverlap = "OVERLAP_F_B";

/// Every action, in ActionKind order.
ArrayRef<ActionSpelling> getActionVocabulary();
const ActionSpelling &getActionSpelling(ActionKind kind);

/// The action a JSON `op` or a PyTorch computation type names, if any.
std::optional<ActionKind> lookupJSONAction(StringRef name);
std::optional<ActionKind> lookupPyTorchAction(StringRef name);

/// The kind of a schedule action op (pp.compute, pp.send, pp.recv,
/// pp.all_reduce, pp.optimizer_step, pp.reduce_scatter, pp.all_gather), if
/// `op` is one.
std::optional<ActionKind> getActionKind(Operation *op);
/// pp's name of an action op ("F", "SEND_B", "OPT"); other ops go by their
/// op name.
StringRef getActionName(Operation *op);

/// The action that computes `phase`, and the phase an action computes.
ActionKind getComputeAction(Phase phase);
std::optional<Phase> getComputePhase(ActionKind kind);

/// A point-to-point transfer: whether it sends, and what it carries.
struct TransferAction {
  bool isSend;
  TransferKind kind;
};
ActionKind getTransferAction(TransferAction transfer);
std::optional<TransferAction> getTransfer(ActionKind kind);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_ACTIONVOCABULARY_H
