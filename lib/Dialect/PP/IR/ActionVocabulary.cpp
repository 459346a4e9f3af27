//===- ActionVocabulary.cpp - the names of schedule actions ---------------===//
//
// The table of schedule actions with their JSON and PyTorch CSV spellings,
// and the mapping between actions and the ops that hold them.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pp;

// The computations' colours are those of the Tableau 10 palette that
// pp-translate's SVG and Python's Schedule.plot share.
static constexpr ActionSpelling kVocabulary[] = {
    {ActionKind::Forward, "F", "F", true, "forward", "#4e79a7"},
    {ActionKind::BackwardInput, "B", "I", true, "backward input", "#59a14f"},
    {ActionKind::BackwardWeight, "W", "W", true, "backward weight", "#f28e2b"},
    {ActionKind::Backward, "BW", "B", true, "fused backward", "#b07aa1"},
    {ActionKind::SendActivation, "SEND_F", "SEND_F", true, "send an activation",
     ""},
    {ActionKind::RecvActivation, "RECV_F", "RECV_F", true,
     "receive an activation", ""},
    {ActionKind::SendGradient, "SEND_B", "SEND_B", true, "send a gradient", ""},
    {ActionKind::RecvGradient, "RECV_B", "RECV_B", true, "receive a gradient",
     ""},
    {ActionKind::AllReduce, "ALLREDUCE", "REDUCE_GRAD", false,
     "sum the weight gradients over replicas", ""},
    {ActionKind::OptimizerStep, "OPT", "", false, "update the weights", ""},
    // PyTorch writes REDUCE_GRAD for both gradient collectives; the CSV
    // importer reads it as the all-reduce unless the schedule is ZeRO's.
    {ActionKind::ReduceScatter, "REDUCESCATTER", "REDUCE_GRAD", false,
     "sum each replica's block of the weight gradients (ZeRO-1)", ""},
    {ActionKind::AllGather, "ALLGATHER", "UNSHARD", false,
     "gather the replicas' updated weight blocks (ZeRO-1)", ""},
    {ActionKind::WaitSendActivation, "", "WAIT_SEND_F", true,
     "wait for an activation's send", ""},
    {ActionKind::WaitSendGradient, "", "WAIT_SEND_B", true,
     "wait for a gradient's send", ""},
    {ActionKind::WaitAllReduce, "", "WAIT_REDUCE_GRAD", false,
     "wait for the gradient sum", ""},
    {ActionKind::Reshard, "", "RESHARD", false, "free gathered weights", ""},
};

ArrayRef<ActionSpelling> mlir::pp::getActionVocabulary() { return kVocabulary; }

const ActionSpelling &mlir::pp::getActionSpelling(ActionKind kind) {
  const ActionSpelling &spelling = kVocabulary[static_cast<size_t>(kind)];
  assert(spelling.kind == kind && "the vocabulary is in ActionKind order");
  return spelling;
}

/// The action whose `field` spells `name`; no action has an empty name.
static std::optional<ActionKind>
lookupAction(StringRef name, StringLiteral ActionSpelling::*field) {
  if (name.empty())
    return std::nullopt;
  for (const ActionSpelling &spelling : kVocabulary)
    if (spelling.*field == name)
      return spelling.kind;
  return std::nullopt;
}

std::optional<ActionKind> mlir::pp::lookupJSONAction(StringRef name) {
  return lookupAction(name, &ActionSpelling::json);
}

std::optional<ActionKind> mlir::pp::lookupPyTorchAction(StringRef name) {
  return lookupAction(name, &ActionSpelling::pytorch);
}

std::optional<ActionKind> mlir::pp::getActionKind(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ActionKind>>(op)
      .Case([](ComputeOp compute) {
        return getComputeAction(compute.getPhase());
      })
      .Case([](SendOp send) {
        return getTransferAction({/*isSend=*/true, send.getKind()});
      })
      .Case([](RecvOp recv) {
        return getTransferAction({/*isSend=*/false, recv.getKind()});
      })
      .Case([](AllReduceOp) { return ActionKind::AllReduce; })
      .Case([](OptimizerStepOp) { return ActionKind::OptimizerStep; })
      .Case([](ReduceScatterOp) { return ActionKind::ReduceScatter; })
      .Case([](AllGatherOp) { return ActionKind::AllGather; })
      .Default([](Operation *) { return std::nullopt; });
}

StringRef mlir::pp::getActionName(Operation *op) {
  if (std::optional<ActionKind> kind = getActionKind(op))
    return getActionSpelling(*kind).json;
  return op->getName().getStringRef();
}

ActionKind mlir::pp::getComputeAction(Phase phase) {
  switch (phase) {
  case Phase::forward:
    return ActionKind::Forward;
  case Phase::backward_input:
    return ActionKind::BackwardInput;
  case Phase::backward_weight:
    return ActionKind::BackwardWeight;
  case Phase::backward:
    return ActionKind::Backward;
  }
  llvm_unreachable("unknown phase");
}

std::optional<Phase> mlir::pp::getComputePhase(ActionKind kind) {
  for (Phase phase : {Phase::forward, Phase::backward_input,
                      Phase::backward_weight, Phase::backward})
    if (getComputeAction(phase) == kind)
      return phase;
  return std::nullopt;
}

ActionKind mlir::pp::getTransferAction(TransferAction transfer) {
  bool activation = transfer.kind == TransferKind::activation;
  if (transfer.isSend)
    return activation ? ActionKind::SendActivation : ActionKind::SendGradient;
  return activation ? ActionKind::RecvActivation : ActionKind::RecvGradient;
}

std::optional<TransferAction> mlir::pp::getTransfer(ActionKind kind) {
  for (bool isSend : {true, false})
    for (TransferKind carried :
         {TransferKind::activation, TransferKind::gradient})
      if (getTransferAction({isSend, carried}) == kind)
        return TransferAction{isSend, carried};
  return std::nullopt;
}
