//===- NoFlushSteps.cpp - a no-flush schedule's steps back to back --------===//
//
// Checks the `first_step`/`next_step` form and writes several calls of it
// out as one schedule (see NoFlushSteps.h).
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/NoFlushSteps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pp;

bool mlir::pp::runsWithoutFlush(ScheduleOp schedule) {
  return schedule
      .walk([](Operation *op) {
        return getStepPart(op) != StepPart::every ? WalkResult::interrupt()
                                                  : WalkResult::advance();
      })
      .wasInterrupted();
}

/// What a compute or transfer does, without its steps: two ops are the same
/// action when their names and fields other than the step part agree.
static std::tuple<StringRef, int64_t, int64_t, int64_t, int64_t>
getActionKey(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::tuple<StringRef, int64_t, int64_t,
                                                  int64_t, int64_t>>(op)
      .Case([](ComputeOp c) {
        return std::make_tuple(c->getName().getStringRef(),
                               static_cast<int64_t>(c.getPhase()),
                               static_cast<int64_t>(c.getStage()),
                               static_cast<int64_t>(c.getMb()), int64_t{-1});
      })
      .Case<SendOp, RecvOp>([](auto t) {
        return std::make_tuple(
            t->getName().getStringRef(), static_cast<int64_t>(t.getKind()),
            static_cast<int64_t>(t.getStage()), static_cast<int64_t>(t.getMb()),
            static_cast<int64_t>(t.getPeer()));
      })
      .Default([](Operation *op) {
        return std::make_tuple(op->getName().getStringRef(), int64_t{-1},
                               int64_t{-1}, int64_t{-1}, int64_t{-1});
      });
}

/// The stage and micro-batch of a compute or transfer.
static std::optional<std::pair<int64_t, int64_t>> getSlot(Operation *op) {
  return llvm::TypeSwitch<Operation *,
                          std::optional<std::pair<int64_t, int64_t>>>(op)
      .Case<ComputeOp, SendOp, RecvOp>([](auto action) {
        return std::make_pair(static_cast<int64_t>(action.getStage()),
                              static_cast<int64_t>(action.getMb()));
      })
      .Default(std::nullopt);
}

/// Checks that each `next_step` action of (stage, mb) on `rank` comes after
/// the step's own actions of (stage, mb), whose buffers it overwrites.
static LogicalResult verifySlotsFree(RankOp rank) {
  DenseMap<std::pair<int64_t, int64_t>, Operation *> last;
  for (Operation &op : rank.getBody().front())
    if (auto slot = getSlot(&op); slot && getStepPart(&op) != StepPart::next)
      last[*slot] = &op;
  for (Operation &op : rank.getBody().front()) {
    auto slot = getSlot(&op);
    if (getStepPart(&op) != StepPart::next || !slot)
      continue;
    Operation *own = last.lookup(*slot);
    if (!own || own->isBeforeInBlock(&op))
      continue;
    InFlightDiagnostic diag =
        op.emitOpError("is 'next_step' on stage ")
        << slot->first << " micro-batch " << slot->second
        << " but runs before this step's action of that micro-batch, whose "
           "buffers the next step's reuse";
    diag.attachNote(own->getLoc()) << "this step's action";
    return diag;
  }
  return success();
}

LogicalResult mlir::pp::verifyNextStepActions(ScheduleOp schedule) {
  for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
    SmallVector<Operation *> first, next;
    for (Operation &op : rank.getBody().front()) {
      if (getStepPart(&op) == StepPart::firstOnly)
        first.push_back(&op);
      else if (getStepPart(&op) == StepPart::next)
        next.push_back(&op);
    }
    for (size_t i = 0; i < next.size(); ++i) {
      if (i < first.size() && getActionKey(first[i]) == getActionKey(next[i]))
        continue;
      InFlightDiagnostic diag =
          next[i]->emitOpError("is 'next_step' action #")
          << i << " of rank " << rank.getRank()
          << ", but the rank's 'first_step' action #" << i
          << " is not the same action: the next step's call skips its "
             "'first_step' actions, so these must repeat them in order";
      if (i < first.size())
        diag.attachNote(first[i]->getLoc()) << "the 'first_step' action";
      return diag;
    }
    if (first.size() > next.size())
      return first[next.size()]->emitOpError("is 'first_step' action #")
             << next.size() << " of rank " << rank.getRank()
             << ", which no 'next_step' action repeats: the later steps "
                "would never run it";
    if (failed(verifySlotsFree(rank)))
      return failure();
  }
  return success();
}

/// Moves `op` (a clone) to micro-batch `mb` and clears its step part.
static void setRunMicrobatch(Operation *op, int64_t mb) {
  llvm::TypeSwitch<Operation *>(op).Case<ComputeOp, SendOp, RecvOp>(
      [&](auto action) {
        action.setMb(mb);
        action.setFirstStep(false);
        action.setNextStep(false);
      });
}

/// Appends call `step` of `steps` of `original`'s actions to `body`.
static void appendCall(OpBuilder &builder, RankOp original, int64_t step,
                       int64_t steps, int64_t m) {
  for (Operation &op : original.getBody().front()) {
    StepPart part = getStepPart(&op);
    bool last = step + 1 == steps;
    if ((part == StepPart::firstOnly && step > 0) ||
        (part == StepPart::next && last) ||
        (isa<AllReduceOp, ReduceScatterOp, OptimizerStepOp, AllGatherOp>(op) &&
         !last))
      continue;
    Operation *copy = builder.clone(op);
    int64_t ofStep = step + (part == StepPart::next ? 1 : 0);
    if (auto compute = dyn_cast<ComputeOp>(op))
      setRunMicrobatch(copy, ofStep * m + compute.getMb());
    else if (auto send = dyn_cast<SendOp>(op))
      setRunMicrobatch(copy, ofStep * m + send.getMb());
    else if (auto recv = dyn_cast<RecvOp>(op))
      setRunMicrobatch(copy, ofStep * m + recv.getMb());
  }
}

/// `cost` for `steps` steps run as one: each per-micro-batch table's rows
/// repeated once per step.
static CostAttr repeatMicrobatchCosts(CostAttr cost, int64_t steps) {
  if (!cost || cost.getNumMicrobatches() == 0)
    return cost;
  int64_t m = cost.getNumMicrobatches();
  auto repeat = [&](DenseF64ArrayAttr table) -> DenseF64ArrayAttr {
    if (!table)
      return table;
    SmallVector<double> values;
    for (int64_t s = 0; s < cost.getNumStages(); ++s)
      for (int64_t step = 0; step < steps; ++step)
        llvm::append_range(values, table.asArrayRef().slice(s * m, m));
    return DenseF64ArrayAttr::get(cost.getContext(), values);
  };
  return CostAttr::get(
      cost.getContext(), cost.getForward(), cost.getBackwardInput(),
      cost.getBackwardWeight(), cost.getComm(), cost.getActivation(),
      cost.getStash(), repeat(cost.getMicrobatchForward()),
      repeat(cost.getMicrobatchBackwardInput()),
      repeat(cost.getMicrobatchBackwardWeight()),
      repeat(cost.getMicrobatchActivation()), repeat(cost.getMicrobatchStash()),
      cost.getOptimizer(), cost.getStepOverhead());
}

ScheduleOp mlir::pp::buildBackToBack(ScheduleOp schedule, int64_t steps) {
  OpBuilder builder(schedule);
  builder.setInsertionPointAfter(schedule);
  auto run = cast<ScheduleOp>(builder.clone(*schedule.getOperation()));
  int64_t m = schedule.getNumMicrobatches();
  run.setNumMicrobatchesAttr(builder.getI64IntegerAttr(steps * m));
  if (CostAttr cost = schedule.getCostAttr())
    run.setCostAttr(repeatMicrobatchCosts(cost, steps));
  for (auto [original, copy] :
       llvm::zip(schedule.getBody().front().getOps<RankOp>(),
                 run.getBody().front().getOps<RankOp>())) {
    Block &body = copy.getBody().front();
    while (!body.empty())
      body.back().erase();
    builder.setInsertionPointToEnd(&body);
    for (int64_t step = 0; step < steps; ++step)
      appendCall(builder, original, step, steps, m);
    // A group keeps the members the calls run.
    for (Operation &op : body)
      if (isGroupedWithPrevious(&op) &&
          !isa_and_nonnull<SendOp, RecvOp>(op.getPrevNode()))
        llvm::TypeSwitch<Operation *>(&op).Case<SendOp, RecvOp>(
            [](auto transfer) { transfer.setGrouped(false); });
  }
  return run;
}
