//===- InsertTransfers.cpp - explicit send/recv for cross-rank edges ------===//
//
// Makes every dependency between stages on different ranks an explicit
// pp.send / pp.recv pair and appends each stage's optimizer step.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPINSERTTRANSFERS
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// Inserts the transfers around one compute action of `rank`.
static void insertTransfersAround(ComputeOp compute, int64_t rank,
                                  ArrayRef<int64_t> stageRank) {
  int64_t stage = compute.getStage(), mb = compute.getMb();
  int64_t last = stageRank.size() - 1;
  OpBuilder builder(compute);
  Location loc = compute.getLoc();
  auto remote = [&](int64_t s) { return stageRank[s] != rank; };
  Phase phase = compute.getPhase();
  if (phase == Phase::forward) {
    if (stage > 0 && remote(stage - 1))
      RecvOp::create(builder, loc, TransferKind::activation, stage, mb,
                     stageRank[stage - 1]);
    builder.setInsertionPointAfter(compute);
    if (stage < last && remote(stage + 1))
      SendOp::create(builder, loc, TransferKind::activation, stage, mb,
                     stageRank[stage + 1]);
    return;
  }
  if (phase == Phase::backward_weight)
    return;
  if (stage < last && remote(stage + 1))
    RecvOp::create(builder, loc, TransferKind::gradient, stage, mb,
                   stageRank[stage + 1]);
  builder.setInsertionPointAfter(compute);
  if (stage > 0 && remote(stage - 1))
    SendOp::create(builder, loc, TransferKind::gradient, stage, mb,
                   stageRank[stage - 1]);
}

namespace {
struct InsertTransfersPass
    : pp::impl::PPInsertTransfersBase<InsertTransfersPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](ScheduleOp schedule) {
      WalkResult existing = schedule.walk([](Operation *op) {
        if (!isa<SendOp, RecvOp, OptimizerStepOp>(op))
          return WalkResult::advance();
        op->emitOpError("is already in the schedule: pp-insert-transfers "
                        "expects compute actions only");
        return WalkResult::interrupt();
      });
      if (existing.wasInterrupted())
        return WalkResult::interrupt();
      ArrayRef<int64_t> stageRank = schedule.getStageRank();
      for (RankOp rank : schedule.getBody().getOps<RankOp>()) {
        Block &body = rank.getBody().front();
        for (ComputeOp compute :
             llvm::make_early_inc_range(body.getOps<ComputeOp>()))
          insertTransfersAround(compute, rank.getRank(), stageRank);
        OpBuilder builder = OpBuilder::atBlockEnd(&body);
        for (auto [stage, owner] : llvm::enumerate(stageRank))
          if (owner == rank.getRank())
            OptimizerStepOp::create(builder, rank.getLoc(), stage);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
