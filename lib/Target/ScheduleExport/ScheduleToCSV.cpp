//===- ScheduleToCSV.cpp - pp.schedule to a PyTorch pipelining CSV --------===//
//
// Writes the schedule CSV that torch.distributed.pipelining loads with
// `_load_csv`: row r holds the actions of rank r, comma-separated, each
// written `{stage}{op}{micro-batch}`. PyTorch has no action for an
// all-reduce or an optimizer step (its runtime runs them outside the
// schedule), so they are left out.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pp;

/// PyTorch's name of a compute phase: I is the input-gradient backward that
/// pp calls backward_input, B the fused backward.
static StringRef getPyTorchComputation(Phase phase) {
  switch (phase) {
  case Phase::forward:
    return "F";
  case Phase::backward_input:
    return "I";
  case Phase::backward_weight:
    return "W";
  case Phase::backward:
    return "B";
  }
  llvm_unreachable("unknown phase");
}

LogicalResult mlir::pp::exportScheduleToPyTorchCSV(ScheduleOp schedule,
                                                   raw_ostream &os) {
  for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
    llvm::ListSeparator separator(",");
    for (Operation &op : rank.getBody().front()) {
      llvm::TypeSwitch<Operation *>(&op)
          .Case([&](ComputeOp compute) {
            os << separator << compute.getStage()
               << getPyTorchComputation(compute.getPhase()) << compute.getMb();
          })
          .Case<SendOp, RecvOp>([&](auto transfer) {
            bool isSend = isa<SendOp>(transfer.getOperation());
            bool isActivation = transfer.getKind() == TransferKind::activation;
            os << separator << transfer.getStage()
               << (isSend ? "SEND_" : "RECV_") << (isActivation ? "F" : "B")
               << transfer.getMb();
          });
    }
    os << "\n";
  }
  return success();
}
