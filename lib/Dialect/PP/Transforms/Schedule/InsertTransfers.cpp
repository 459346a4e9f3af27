//===- InsertTransfers.cpp - explicit send/recv for cross-rank edges ------===//
//
// Makes every dependency between stages on different ranks an explicit
// pp.send / pp.recv pair (the schedule read as a sched::Program, the
// transfers each compute action needs from sched::getTransfers), places each
// stage's data-parallel gradient all-reduce (ZeRO-1 and -3: reduce-scatter)
// and appends each stage's optimizer step (ZeRO-1: and its all-gather;
// ZeRO-3 gathers each stage's weights before its first compute). An
// overlapped pair stays together: its receives come before it and its sends
// after it.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/RendezvousOrder.h"
#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Scheduling/TransferOrder.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPINSERTTRANSFERS
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// Inserts the transfers around compute action `compute`, `action` in the
/// schedule's program (sched::getTransfers says which).
static void insertTransfersAround(ComputeOp compute,
                                  const sched::ProgramAction &action,
                                  ArrayRef<int64_t> stageRank) {
  // Receives go before the whole overlapped pair, sends after it.
  Operation *first = compute, *second = compute;
  if (ComputeOp partner = compute.getOverlapPartner())
    first = partner;
  if (auto next = dyn_cast_or_null<ComputeOp>(compute->getNextNode());
      next && next.getOverlapPartner())
    second = next;
  SmallVector<sched::TimedAction, 1> recvs, sends;
  sched::getTransfers(action, stageRank, recvs, sends);
  OpBuilder builder(first);
  Location loc = compute.getLoc();
  // A transfer runs in the steps its compute action runs in.
  bool firstStep = action.part == StepPart::firstOnly,
       nextStep = action.part == StepPart::next;
  for (const sched::TimedAction &recv : recvs)
    RecvOp::create(builder, loc, recv.transfer, recv.stage, recv.mb, recv.peer,
                   /*grouped=*/false, firstStep, nextStep);
  builder.setInsertionPointAfter(second);
  for (const sched::TimedAction &send : sends)
    SendOp::create(builder, loc, send.transfer, send.stage, send.mb, send.peer,
                   /*grouped=*/false, firstStep, nextStep);
}

/// Inserts the all-reduce of each stage in `stages` (owned by the rank of
/// `body`) right after the stage's last weight-gradient action and the
/// transfers right after it (its gradient send among them): the reduction
/// then overlaps with the rank's remaining backward, and the previous rank
/// never waits for it. A stage
/// without a weight-gradient action gets it at the end (the verifier reports
/// the missing actions). A stage that has one (imported) keeps it.
static void insertAllReduces(ScheduleOp schedule, Block &body,
                             ArrayRef<int64_t> stages, Location rankLoc) {
  DenseSet<int64_t> reduced;
  for (Operation &op : body)
    if (auto reduce = dyn_cast<AllReduceOp>(op))
      reduced.insert(reduce.getStage());
    else if (auto scatter = dyn_cast<ReduceScatterOp>(op))
      reduced.insert(scatter.getStage());
  DenseMap<int64_t, ComputeOp> lastWeightGradient;
  for (ComputeOp compute : body.getOps<ComputeOp>())
    if (compute.getPhase() == Phase::backward ||
        compute.getPhase() == Phase::backward_weight)
      lastWeightGradient[compute.getStage()] = compute;
  for (int64_t stage : stages) {
    if (reduced.contains(stage))
      continue;
    OpBuilder builder = OpBuilder::atBlockEnd(&body);
    Location loc = rankLoc;
    if (ComputeOp last = lastWeightGradient.lookup(stage)) {
      Operation *after = last;
      while (isa_and_nonnull<SendOp, RecvOp>(after->getNextNode()))
        after = after->getNextNode();
      builder.setInsertionPointAfter(after);
      loc = last.getLoc();
    }
    // ZeRO-1 and -3 shard what the gradients update.
    if (schedule.getZeroStage(stage) != 0)
      ReduceScatterOp::create(builder, loc, stage);
    else
      AllReduceOp::create(builder, loc, stage);
  }
}

/// ZeRO-3 gathers a stage's weights once per step and releases them after
/// its optimizer step, so it needs the flushed schedule of one weight
/// version: a no-flush schedule runs the next step's forwards on weights
/// already updated and released.
static LogicalResult checkGathersOncePerStep(ScheduleOp schedule) {
  if (schedule.getNumWeightVersions() == 2)
    return schedule.emitError("zero = 3 needs one weight version per step; "
                              "this schedule keeps 2 (pipedream-2bw)");
  WalkResult noFlush = schedule.walk([](ComputeOp compute) {
    return compute.getFirstStep() || compute.getNextStep()
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (noFlush.wasInterrupted())
    return schedule.emitError("zero = 3 needs a schedule that flushes each "
                              "step; this one runs forwards of the next step");
  return success();
}

/// ZeRO-3: puts a `pp.all_gather` of each stage in `stages` before the
/// stage's first compute action on the rank of `body` (and the receives
/// that feed it), so the step's computes read the whole weights; a stage
/// without computes gets it at the end.
static void insertGathersBeforeUse(Block &body, ArrayRef<int64_t> stages,
                                   Location rankLoc) {
  DenseMap<int64_t, ComputeOp> firstUse;
  for (ComputeOp compute : body.getOps<ComputeOp>())
    firstUse.try_emplace(compute.getStage(), compute);
  for (int64_t stage : stages) {
    OpBuilder builder = OpBuilder::atBlockEnd(&body);
    Location loc = rankLoc;
    if (ComputeOp first = firstUse.lookup(stage)) {
      Operation *before = first;
      if (ComputeOp partner = first.getOverlapPartner())
        before = partner;
      // Back over the receives, and over the start of any exchange group
      // they belong to: a group stays whole.
      while (Operation *previous = before->getPrevNode()) {
        bool grouped = TypeSwitch<Operation *, bool>(before)
                           .Case<SendOp, RecvOp>([](auto transfer) {
                             return transfer.getGrouped();
                           })
                           .Default(false);
        if (!isa<RecvOp>(previous) && !grouped)
          break;
        before = previous;
      }
      builder.setInsertionPoint(before);
      loc = first.getLoc();
    }
    AllGatherOp::create(builder, loc, stage);
  }
}

namespace {
struct InsertTransfersPass
    : pp::impl::PPInsertTransfersBase<InsertTransfersPass> {
  using Base::Base;
  /// Records the `zero` and `zero-gather` options on `schedule`: `zero`
  /// (where given and not all 0) as one level or one per stage, and
  /// `zero-gather=param` for its ZeRO-3 stages.
  LogicalResult recordZero(ScheduleOp schedule) {
    int64_t numStages = schedule.getNumStages();
    if (zero.size() > 1 && static_cast<int64_t>(zero.size()) != numStages)
      return schedule.emitOpError("has ")
             << numStages << " stages, but zero gives " << zero.size()
             << " levels; give one for every stage or one per stage";
    OpBuilder builder(schedule);
    if (llvm::any_of(zero, [](int64_t level) { return level != 0; }))
      schedule.setZeroAttr(
          zero.size() == 1 ? Attribute(builder.getI64IntegerAttr(zero.front()))
                           : Attribute(builder.getDenseI64ArrayAttr(zero)));
    if (zeroGather != ZeroGather::Param)
      return success();
    if (!schedule.hasZeroStage(3))
      return schedule.emitOpError("has no stage with zero = 3; "
                                  "zero-gather=param gathers the weights "
                                  "ZeRO-3 shards, so it needs zero = 3");
    auto unit = [&](int64_t stage) -> Attribute {
      return ZeroGatherAttr::get(schedule.getContext(),
                                 schedule.getZeroStage(stage) == 3
                                     ? ZeroGather::Param
                                     : ZeroGather::Stage);
    };
    SmallVector<Attribute> units =
        llvm::map_to_vector(llvm::seq<int64_t>(0, numStages), unit);
    if (llvm::all_equal(units))
      schedule.setZeroGatherAttr(units.front());
    else
      schedule.setZeroGatherAttr(builder.getArrayAttr(units));
    return success();
  }

  void runOnOperation() override {
    if (numReplicas < 1 || numReplicas > kMaxRanks) {
      getOperation().emitError("num-replicas must be between 1 and ")
          << kMaxRanks << ", got " << numReplicas.getValue();
      return signalPassFailure();
    }
    for (int64_t level : zero)
      if (level != 0 && level != 1 && level != 3) {
        getOperation().emitError("zero must be 0, 1 or 3, got ") << level;
        return signalPassFailure();
      }
    WalkResult result = getOperation().walk([&](ScheduleOp schedule) {
      WalkResult existing = schedule.walk([](Operation *op) {
        if (!isa<SendOp, RecvOp, OptimizerStepOp>(op))
          return WalkResult::advance();
        op->emitOpError("is already in the schedule: pp-insert-transfers "
                        "expects compute actions and all-reduces only");
        return WalkResult::interrupt();
      });
      if (existing.wasInterrupted() || failed(recordZero(schedule)) ||
          (schedule.hasZeroStage(3) &&
           failed(checkGathersOncePerStep(schedule))))
        return WalkResult::interrupt();
      ArrayRef<int64_t> stageRank = schedule.getStageRank();
      // The program runs with the semantics its transfers are ordered for.
      TransferSemantics chosen = getPassSemantics(semantics, schedule);
      sched::Program program = readProgram(schedule, chosen);
      schedule.setSemanticsOrDefault(chosen);
      bool rendezvous = chosen == TransferSemantics::rendezvous;
      if (numReplicas > 1)
        schedule.setNumReplicasAttr(
            OpBuilder(schedule).getI64IntegerAttr(numReplicas));
      for (auto [rank, actions] :
           llvm::zip(schedule.getBody().getOps<RankOp>(), program.ranks)) {
        SmallVector<Operation *> ops = llvm::map_to_vector(
            rank.getBody().front(), [](Operation &op) { return &op; });
        for (auto [op, action] : llvm::zip(ops, actions))
          if (auto compute = dyn_cast<ComputeOp>(op))
            insertTransfersAround(compute, action, stageRank);
      }
      // A deadlock is pp-verify-schedule's to report, at the actions.
      if (rendezvous && failed(orderForRendezvous(schedule)))
        schedule.emitWarning("transfers left unordered for rendezvous "
                             "semantics: the ranks deadlock even with sends "
                             "that never block");
      // Each rank's stages, in one pass over the placement (a scan per
      // rank was quadratic in stages).
      SmallVector<SmallVector<int64_t, 2>> owned(schedule.getNumRanks());
      for (auto [stage, owner] : llvm::enumerate(stageRank))
        if (owner >= 0 && owner < static_cast<int64_t>(owned.size()))
          owned[owner].push_back(stage);
      for (RankOp rank : schedule.getBody().getOps<RankOp>()) {
        Block &body = rank.getBody().front();
        ArrayRef<int64_t> stages = owned[rank.getRank()];
        if (numReplicas > 1)
          insertAllReduces(schedule, body, stages, rank.getLoc());
        // An imported all-gather (PyTorch's UNSHARD) moves after the
        // optimizer step it follows.
        for (AllGatherOp gather :
             llvm::make_early_inc_range(body.getOps<AllGatherOp>()))
          gather.erase();
        insertGathersBeforeUse(
            body,
            llvm::filter_to_vector(stages,
                                   [&](int64_t stage) {
                                     return schedule.getZeroStage(stage) == 3;
                                   }),
            rank.getLoc());
        OpBuilder builder = OpBuilder::atBlockEnd(&body);
        for (int64_t stage : stages) {
          OptimizerStepOp::create(builder, rank.getLoc(), stage);
          if (schedule.getZeroStage(stage) == 1)
            AllGatherOp::create(builder, rank.getLoc(), stage);
        }
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
