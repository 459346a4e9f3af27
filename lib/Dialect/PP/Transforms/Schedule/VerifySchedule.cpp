//===- VerifySchedule.cpp - check a materialised pipeline schedule --------===//
//
// pp-verify-schedule: rejects a `pp.schedule` that is incomplete, places an
// action on the wrong rank, orders an action before one it depends on, has
// transfers without a partner, or deadlocks, with one diagnostic per problem
// at the action that causes it.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/NoFlushSteps.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/Analysis/StaticMemory.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Scheduling/ActionTable.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPVERIFYSCHEDULE
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

ActionKey getKey(Phase phase, int64_t stage, int64_t mb) {
  return {static_cast<int32_t>(phase), stage, mb};
}

/// The stage an action belongs to, or -1 for an op that is not an action.
int64_t getActionStage(Operation *op) {
  return llvm::TypeSwitch<Operation *, int64_t>(op)
      .Case<ComputeOp, SendOp, RecvOp, AllReduceOp, ReduceScatterOp,
            AllGatherOp, OptimizerStepOp>(
          [](auto action) { return action.getStage(); })
      .Default([](Operation *) { return -1; });
}

std::string describe(Phase phase, int64_t stage, int64_t mb) {
  return llvm::formatv("{0} of stage {1} micro-batch {2}",
                       stringifyPhase(phase), stage, mb);
}

std::string describe(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([](ComputeOp compute) {
        return describe(compute.getPhase(), compute.getStage(),
                        compute.getMb());
      })
      .Case<SendOp, RecvOp>([](auto transfer) {
        return llvm::formatv("{0} {1} of stage {2} micro-batch {3}",
                             stringifyTransferKind(transfer.getKind()),
                             isa<SendOp>(transfer.getOperation()) ? "send"
                                                                  : "recv",
                             transfer.getStage(), transfer.getMb())
            .str();
      })
      .Case<AllReduceOp, ReduceScatterOp, AllGatherOp, OptimizerStepOp>(
          [](auto action) {
            return llvm::formatv("{0} of stage {1}",
                                 action->getName().stripDialect(),
                                 action.getStage())
                .str();
          })
      .Default(
          [](Operation *op) { return op->getName().getStringRef().str(); });
}

/// Checks one `pp.schedule`. Each `check*` function looks for one class of
/// error and reports every instance it finds; `check` runs them in an order
/// that keeps one mistake from being reported again as a consequence.
class ScheduleChecker {
public:
  /// `staticMemory`: what each rank holds besides activations, counted
  /// against the memory cap (empty: nothing).
  ScheduleChecker(ScheduleOp schedule, bool rendezvous,
                  ArrayRef<StaticMemory> staticMemory = {});

  LogicalResult check();

private:
  void checkPlacement();
  void checkTransferEndpoints();
  void checkCompleteness();
  void checkComputeDependencies();
  void checkSliceOrder();
  void checkSendsFollowProducers();
  void checkOptimizerSteps();
  void checkAllReduces();
  void checkAllGathers();
  /// Checks that `op` runs after every weight-gradient action (W or fused
  /// backward) of `stage`, whose gradient it `uses` ("applies", ...).
  void checkFollowsWeightGradients(Operation *op, int64_t stage,
                                   StringRef uses);
  void checkTransferMatching();
  void checkDeadlockFreedom();
  void checkRendezvousDeadlockFreedom();
  void checkMemoryCap();

  /// Checks that the same-rank dependency `dep` of `op` runs before it.
  void checkRunsAfter(ComputeOp op, ComputeOp dep);
  /// Checks that `op` gets what `producerStage`, on another rank, made for
  /// its micro-batch through a `pp.recv` of `kind` that precedes it.
  void checkReceivedBefore(ComputeOp op, TransferKind kind,
                           int64_t producerStage);

  /// The first compute of (phase, stage, mb), or null.
  ComputeOp lookupCompute(Phase phase, int64_t stage, int64_t mb) const;
  /// The first of B and BW of (stage, mb), or null.
  ComputeOp lookupBackward(int64_t stage, int64_t mb) const;
  /// Whether `first` runs before `second` on the same rank. The block
  /// numbers its ops once, so this takes constant time.
  static bool precedes(Operation *first, Operation *second) {
    return first->getBlock() == second->getBlock() &&
           first->isBeforeInBlock(second);
  }
  /// Whether `a` comes before `b` in (rank, position) order.
  static bool isReportedFirst(Operation *a, Operation *b) {
    if (a->getBlock() == b->getBlock())
      return a->isBeforeInBlock(b);
    return a->getParentOp()->isBeforeInBlock(b->getParentOp());
  }
  InFlightDiagnostic fail(Operation *op) {
    failed = true;
    return op->emitOpError();
  }
  /// Reports an error at `op` with a note at `related`, the other action
  /// involved.
  void fail(Operation *op, const Twine &message, Operation *related,
            const Twine &note) {
    InFlightDiagnostic diag = fail(op) << message;
    diag.attachNote(related->getLoc()) << note;
  }
  void reportDuplicate(Operation *duplicate, Operation *first) {
    fail(duplicate, "duplicate " + describe(duplicate), first,
         "first occurrence here");
  }
  /// Reports each stage that `has` no `action` though the schedule runs as
  /// `replicas` data-parallel replicas (`why` adds what else asks for it),
  /// at the stage's rank: emitOpError would print the whole rank.
  void reportMissingPerStage(function_ref<bool(int64_t)> has, StringRef action,
                             uint64_t replicas, StringRef why = "") {
    for (int64_t stage = 0; stage < numStages; ++stage) {
      if (has(stage))
        continue;
      failed = true;
      mlir::emitError(ranks[stageRank[stage]].getLoc())
          << "missing " << action << " of stage " << stage
          << ": the schedule runs as " << replicas << " data-parallel replicas"
          << why;
    }
  }

  ScheduleOp schedule;
  bool rendezvous; // also check deadlock freedom with rendezvous transfers
  ArrayRef<StaticMemory> staticMemory;
  ArrayRef<int64_t> stageRank;
  int64_t numStages;
  int64_t numMicrobatches;
  size_t numActions;
  SmallVector<RankOp> ranks;
  /// The first of the actions of each (phase/kind, stage, mb) in
  /// rank-major order. Transfers are indexed by TransferKey, so a matching
  /// send and recv share a key.
  ActionTable<ComputeOp> computes;
  ActionTable<SendOp> sends;
  ActionTable<RecvOp> recvs;
  llvm::DenseMap<int64_t, SmallVector<OptimizerStepOp, 1>> optimizerSteps;
  /// Each stage's gradient collectives: pp.all_reduce or, under ZeRO-1,
  /// pp.reduce_scatter.
  llvm::DenseMap<int64_t, SmallVector<Operation *, 1>> allReduces;
  llvm::DenseMap<int64_t, SmallVector<AllGatherOp, 1>> allGathers;
  bool failed = false;
};

/// How many ops the ranks of `schedule` hold.
size_t countActions(ScheduleOp schedule) {
  size_t count = 0;
  for (RankOp rank : schedule.getBody().front().getOps<RankOp>())
    count += rank.getBody().front().getOperations().size();
  return count;
}

} // namespace

ScheduleChecker::ScheduleChecker(ScheduleOp schedule, bool rendezvous,
                                 ArrayRef<StaticMemory> staticMemory)
    : schedule(schedule), rendezvous(rendezvous), staticMemory(staticMemory),
      stageRank(schedule.getStageRank()), numStages(schedule.getNumStages()),
      numMicrobatches(schedule.getNumMicrobatches()),
      numActions(countActions(schedule)),
      computes(getMaxEnumValForPhase() + 1, numStages, numMicrobatches,
               numActions),
      sends(getMaxEnumValForTransferKind() + 1, numStages, numMicrobatches,
            numActions),
      recvs(getMaxEnumValForTransferKind() + 1, numStages, numMicrobatches,
            numActions) {
  for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
    for (Operation &op : rank.getBody().front()) {
      llvm::TypeSwitch<Operation *>(&op)
          .Case([&](ComputeOp compute) {
            computes.insertFirst(
                getKey(compute.getPhase(), compute.getStage(), compute.getMb()),
                compute);
          })
          .Case([&](SendOp send) {
            sends.insertFirst(TransferKey::get(send).asTuple(), send);
          })
          .Case([&](RecvOp recv) {
            recvs.insertFirst(TransferKey::get(recv).asTuple(), recv);
          })
          .Case([&](OptimizerStepOp step) {
            optimizerSteps[step.getStage()].push_back(step);
          })
          .Case<AllReduceOp, ReduceScatterOp>([&](auto reduce) {
            allReduces[reduce.getStage()].push_back(reduce);
          })
          .Case([&](AllGatherOp gather) {
            allGathers[gather.getStage()].push_back(gather);
          });
    }
    ranks.push_back(rank);
  }
}

LogicalResult ScheduleChecker::check() {
  checkPlacement();
  checkTransferEndpoints();
  bool wellPlaced = !failed;
  checkCompleteness();
  // Order and matching are only meaningful once every action sits on the
  // rank of its stage and every transfer names the right neighbour.
  if (!wellPlaced)
    return failure();
  checkComputeDependencies();
  checkSliceOrder();
  checkSendsFollowProducers();
  checkOptimizerSteps();
  checkAllReduces();
  checkAllGathers();
  bool failedBeforeMatching = failed;
  checkTransferMatching();
  bool matched = failed == failedBeforeMatching;
  // An unmatched receive blocks forever; that is not news.
  if (matched)
    checkDeadlockFreedom();
  if (matched && !failed && rendezvous)
    checkRendezvousDeadlockFreedom();
  checkMemoryCap();
  return failure(failed);
}

ComputeOp ScheduleChecker::lookupCompute(Phase phase, int64_t stage,
                                         int64_t mb) const {
  return computes.lookup(getKey(phase, stage, mb));
}

ComputeOp ScheduleChecker::lookupBackward(int64_t stage, int64_t mb) const {
  if (ComputeOp fused = lookupCompute(Phase::backward, stage, mb))
    return fused;
  return lookupCompute(Phase::backward_input, stage, mb);
}

//===----------------------------------------------------------------------===//
// a. Placement
//===----------------------------------------------------------------------===//

void ScheduleChecker::checkPlacement() {
  for (auto [rank, rankOp] : llvm::enumerate(ranks)) {
    for (Operation &op : rankOp.getBody().front()) {
      int64_t stage = getActionStage(&op);
      if (stage < 0) {
        fail(&op) << "is not a schedule action";
        continue;
      }
      if (stageRank[stage] != static_cast<int64_t>(rank))
        fail(&op) << describe(&op) << " is on rank " << rank << ", but stage "
                  << stage << " is placed on rank " << stageRank[stage];
    }
  }
}

//===----------------------------------------------------------------------===//
// c/d. Transfer endpoints: neighbour exists, is on another rank, is the peer
//===----------------------------------------------------------------------===//

void ScheduleChecker::checkTransferEndpoints() {
  auto checkEndpoint = [&](Operation *op, TransferKind kind, bool isSend,
                           int64_t stage, int64_t peer) {
    int64_t neighbour = getNeighbourStage(kind, isSend, stage);
    StringRef role = isSend ? "consumer" : "producer";
    if (neighbour < 0 || neighbour >= numStages) {
      fail(op) << describe(op) << " has no " << role << ": stage " << stage
               << " is the " << (neighbour < 0 ? "first" : "last") << " stage";
      return;
    }
    if (stageRank[neighbour] == stageRank[stage]) {
      fail(op) << describe(op) << " connects stages " << stage << " and "
               << neighbour << ", which are both on rank " << stageRank[stage]
               << "; dependencies within a rank must not use transfers";
      return;
    }
    if (peer != stageRank[neighbour])
      fail(op) << describe(op) << (isSend ? " goes to" : " comes from")
               << " rank " << peer << ", but its " << role << " stage "
               << neighbour << " is on rank " << stageRank[neighbour];
  };
  for (RankOp rankOp : ranks) {
    for (Operation &op : rankOp.getBody().front()) {
      if (auto send = dyn_cast<SendOp>(op))
        checkEndpoint(send, send.getKind(), /*isSend=*/true, send.getStage(),
                      send.getPeer());
      else if (auto recv = dyn_cast<RecvOp>(op))
        checkEndpoint(recv, recv.getKind(), /*isSend=*/false, recv.getStage(),
                      recv.getPeer());
    }
  }
}

//===----------------------------------------------------------------------===//
// b. Completeness: one F and one BW or one B and one W per (stage, mb)
//===----------------------------------------------------------------------===//

void ScheduleChecker::checkCompleteness() {
  // Duplicates, in program order.
  for (RankOp rankOp : ranks) {
    for (ComputeOp compute : rankOp.getBody().front().getOps<ComputeOp>()) {
      ComputeOp first = lookupCompute(compute.getPhase(), compute.getStage(),
                                      compute.getMb());
      if (first == compute)
        continue;
      reportDuplicate(compute, first);
    }
  }

  // Missing actions. Stop after a few: a schedule that lacks a whole phase
  // would otherwise report stages times micro-batches errors (and this loop
  // would run for as long as the micro-batch count is large).
  constexpr int kMaxMissingReports = 16;
  int numMissing = 0;
  auto reportMissing = [&](StringRef what, int64_t stage, int64_t mb) {
    if (++numMissing > kMaxMissingReports)
      return;
    // Not emitOpError: that would print the whole rank with the error.
    failed = true;
    InFlightDiagnostic diag = mlir::emitError(ranks[stageRank[stage]].getLoc());
    diag << "missing " << what << " of stage " << stage << " micro-batch "
         << mb;
    if (numMissing == kMaxMissingReports)
      diag.attachNote() << "further missing actions are not reported";
  };
  for (int64_t stage = 0; stage < numStages; ++stage) {
    for (int64_t mb = 0; mb < numMicrobatches; ++mb) {
      if (numMissing >= kMaxMissingReports)
        return;
      ComputeOp forward = lookupCompute(Phase::forward, stage, mb);
      ComputeOp fused = lookupCompute(Phase::backward, stage, mb);
      ComputeOp input = lookupCompute(Phase::backward_input, stage, mb);
      ComputeOp weight = lookupCompute(Phase::backward_weight, stage, mb);
      if (!forward)
        reportMissing("forward", stage, mb);
      if (fused && (input || weight)) {
        ComputeOp split = input ? input : weight;
        if (weight && isReportedFirst(weight, split))
          split = weight;
        auto [later, earlier] = isReportedFirst(fused, split)
                                    ? std::make_pair(split, fused)
                                    : std::make_pair(fused, split);
        fail(later,
             describe(later) + " mixes the fused and the split backward of "
                               "the same micro-batch",
             earlier, describe(earlier) + " here");
        continue;
      }
      if (fused)
        continue;
      if (!input && !weight)
        reportMissing("backward", stage, mb);
      else if (!input)
        reportMissing("backward_input", stage, mb);
      else if (!weight)
        reportMissing("backward_weight", stage, mb);
    }
  }
}

//===----------------------------------------------------------------------===//
// c. Dependencies of computations
//===----------------------------------------------------------------------===//

void ScheduleChecker::checkRunsAfter(ComputeOp op, ComputeOp dep) {
  if (!dep || precedes(dep, op))
    return; // A missing dependency is reported as missing.
  fail(op,
       describe(op) + " runs before the " + describe(dep) + " it depends on",
       dep, describe(dep) + " here");
}

void ScheduleChecker::checkReceivedBefore(ComputeOp op, TransferKind kind,
                                          int64_t producerStage) {
  ActionKey key =
      TransferKey{kind, producerStage, static_cast<int64_t>(op.getMb())}
          .asTuple();
  RecvOp recv = recvs.lookup(key);
  if (recv && precedes(recv, op))
    return;
  // A send whose receive is missing is reported at the send.
  if (!recv && sends.contains(key))
    return;
  InFlightDiagnostic diag =
      fail(op) << describe(op) << " needs its "
               << (kind == TransferKind::activation ? "input"
                                                    : "output gradient")
               << " from rank " << stageRank[producerStage]
               << ", but no 'pp.recv " << stringifyTransferKind(kind)
               << "' precedes it";
  if (recv)
    diag.attachNote(recv.getLoc()) << "the receive comes only here";
}

void ScheduleChecker::checkComputeDependencies() {
  for (RankOp rankOp : ranks) {
    for (ComputeOp op : rankOp.getBody().front().getOps<ComputeOp>()) {
      int64_t stage = op.getStage(), mb = op.getMb();
      if (lookupCompute(op.getPhase(), stage, mb) != op)
        continue; // Duplicates are reported as such.
      switch (op.getPhase()) {
      case Phase::forward: {
        if (stage == 0)
          break;
        if (stageRank[stage - 1] == stageRank[stage])
          checkRunsAfter(op, lookupCompute(Phase::forward, stage - 1, mb));
        else
          checkReceivedBefore(op, TransferKind::activation, stage - 1);
        break;
      }
      case Phase::backward_input:
      case Phase::backward: {
        checkRunsAfter(op, lookupCompute(Phase::forward, stage, mb));
        if (stage + 1 == numStages)
          break;
        if (stageRank[stage + 1] == stageRank[stage])
          checkRunsAfter(op, lookupBackward(stage + 1, mb));
        else
          checkReceivedBefore(op, TransferKind::gradient, stage + 1);
        break;
      }
      case Phase::backward_weight:
        checkRunsAfter(op, lookupCompute(Phase::backward_input, stage, mb));
        break;
      }
    }
  }
}

/// Sequence slices (`slices` = k): the forward of slice j reads the keys
/// and values of slice j - 1's forward, and the backward of slice j - 1
/// needs their gradients from slice j's; both on the stage's rank.
void ScheduleChecker::checkSliceOrder() {
  int64_t k = schedule.getNumSlices();
  if (k < 2)
    return;
  auto name = [&](ComputeOp op) {
    return llvm::formatv("{0} of stage {1} mb {2} (micro-batch {3} slice {4})",
                         stringifyPhase(op.getPhase()), op.getStage(),
                         op.getMb(), op.getMb() / k, op.getMb() % k)
        .str();
  };
  for (RankOp rankOp : ranks) {
    for (ComputeOp op : rankOp.getBody().front().getOps<ComputeOp>()) {
      int64_t stage = op.getStage(), mb = op.getMb();
      if (lookupCompute(op.getPhase(), stage, mb) != op)
        continue; // Duplicates are reported as such.
      ComputeOp dep;
      StringRef why;
      if (op.getPhase() == Phase::forward && mb % k != 0) {
        dep = lookupCompute(Phase::forward, stage, mb - 1);
        why = "whose keys and values its attention reads";
      } else if ((op.getPhase() == Phase::backward ||
                  op.getPhase() == Phase::backward_input) &&
                 mb % k != k - 1) {
        dep = lookupBackward(stage, mb + 1);
        why = "which yields its keys' and values' gradients";
      }
      if (!dep || precedes(dep, op))
        continue; // A missing action is reported as missing.
      fail(op, name(op) + " runs before the " + name(dep) + ", " + why, dep,
           name(dep) + " here");
    }
  }
}

void ScheduleChecker::checkSendsFollowProducers() {
  for (RankOp rankOp : ranks) {
    for (SendOp send : rankOp.getBody().front().getOps<SendOp>()) {
      ComputeOp producer =
          send.getKind() == TransferKind::activation
              ? lookupCompute(Phase::forward, send.getStage(), send.getMb())
              : lookupBackward(send.getStage(), send.getMb());
      if (!producer || precedes(producer, send))
        continue;
      fail(send,
           describe(send) + " is posted before the " + describe(producer) +
               " that produces it",
           producer, describe(producer) + " here");
    }
  }
}

/// An optimizer step applies the weight gradients of every micro-batch, so
/// it comes after all of them, and at most once per stage.
void ScheduleChecker::checkOptimizerSteps() {
  for (RankOp rankOp : ranks) {
    for (OptimizerStepOp step :
         rankOp.getBody().front().getOps<OptimizerStepOp>()) {
      int64_t stage = step.getStage();
      OptimizerStepOp first = optimizerSteps.lookup(stage).front();
      if (first != step) {
        reportDuplicate(step, first);
        continue;
      }
      // Gradients are reduced across replicas before they are applied.
      for (Operation *reduce : allReduces.lookup(stage))
        if (precedes(step, reduce))
          fail(reduce,
               describe(reduce) + " comes after the " + describe(step) +
                   " that applies the gradients it reduces",
               step, describe(step) + " here");
      checkFollowsWeightGradients(step, stage, "applies");
    }
  }
}

void ScheduleChecker::checkFollowsWeightGradients(Operation *op, int64_t stage,
                                                  StringRef uses) {
  for (int64_t mb = 0; mb < numMicrobatches; ++mb) {
    ComputeOp weight = lookupCompute(Phase::backward, stage, mb);
    if (!weight)
      weight = lookupCompute(Phase::backward_weight, stage, mb);
    if (!weight || precedes(weight, op))
      continue;
    fail(op,
         describe(op) + " runs before the " + describe(weight) +
             " whose gradient it " + uses,
         weight, describe(weight) + " here");
    return;
  }
}

/// A gradient collective (an all-reduce, or ZeRO-1's reduce-scatter) sums
/// the weight gradients of every micro-batch over the replicas, so it comes
/// after all of them, once per stage; with several replicas every stage
/// needs one, of the kind the schedule's `zero` names.
void ScheduleChecker::checkAllReduces() {
  bool zero = schedule.getZeroStage() == 1;
  StringRef expected = zero ? "reduce_scatter" : "all_reduce";
  for (RankOp rankOp : ranks) {
    for (Operation &reduce : rankOp.getBody().front()) {
      if (!isa<AllReduceOp, ReduceScatterOp>(reduce))
        continue;
      int64_t stage = getActionStage(&reduce);
      if (isa<ReduceScatterOp>(reduce) != zero) {
        fail(&reduce) << describe(&reduce) << " in a schedule with zero = "
                      << schedule.getZeroStage() << ", which sums gradients "
                      << "with pp." << expected;
        continue;
      }
      Operation *first = allReduces.lookup(stage).front();
      if (first != &reduce) {
        reportDuplicate(&reduce, first);
        continue;
      }
      checkFollowsWeightGradients(&reduce, stage, "reduces");
    }
  }
  std::optional<uint64_t> replicas = schedule.getNumReplicas();
  if (!replicas || *replicas < 2)
    return;
  reportMissingPerStage([&](int64_t stage) { return allReduces.count(stage); },
                        expected, *replicas);
}

/// ZeRO-1's all-gather spreads the weight blocks the replicas updated, so
/// it comes after its stage's optimizer step (or, without one, its
/// reduce-scatter), once per stage, and only in a schedule with `zero = 1`;
/// with several replicas every stage needs one.
void ScheduleChecker::checkAllGathers() {
  bool zero = schedule.getZeroStage() == 1;
  for (RankOp rankOp : ranks) {
    for (AllGatherOp gather : rankOp.getBody().front().getOps<AllGatherOp>()) {
      int64_t stage = gather.getStage();
      if (!zero) {
        fail(gather) << describe(gather)
                     << " in a schedule without zero = 1: only ZeRO-1 shards "
                        "the weight updates";
        continue;
      }
      AllGatherOp first = allGathers.lookup(stage).front();
      if (first != gather) {
        reportDuplicate(gather, first);
        continue;
      }
      // An imported schedule (PyTorch's CSV) has no optimizer steps; its
      // gather then follows the reduction.
      Operation *update = nullptr;
      if (auto steps = optimizerSteps.lookup(stage); !steps.empty())
        update = steps.front();
      else if (auto reduces = allReduces.lookup(stage); !reduces.empty())
        update = reduces.front();
      if (update && !precedes(update, gather))
        fail(gather) << describe(gather) << " must follow the "
                     << describe(update)
                     << " on its rank: it gathers the updated blocks";
    }
  }
  std::optional<uint64_t> replicas = schedule.getNumReplicas();
  if (!zero || !replicas || *replicas < 2)
    return;
  reportMissingPerStage([&](int64_t stage) { return allGathers.count(stage); },
                        "all_gather", *replicas, " with zero = 1");
}

//===----------------------------------------------------------------------===//
// d. Matching transfers
//===----------------------------------------------------------------------===//

void ScheduleChecker::checkTransferMatching() {
  for (RankOp rankOp : ranks) {
    for (Operation &op : rankOp.getBody().front()) {
      if (auto send = dyn_cast<SendOp>(op)) {
        ActionKey key = TransferKey::get(send).asTuple();
        SendOp first = sends.lookup(key);
        if (first != send) {
          reportDuplicate(send, first);
          continue;
        }
        if (recvs.contains(key))
          continue;
        int64_t consumer =
            getNeighbourStage(send.getKind(), /*isSend=*/true, send.getStage());
        fail(send) << describe(send) << " has no matching 'pp.recv "
                   << stringifyTransferKind(send.getKind()) << " stage "
                   << consumer << " mb " << send.getMb() << " from "
                   << stageRank[send.getStage()] << "' on rank "
                   << send.getPeer();
      } else if (auto recv = dyn_cast<RecvOp>(op)) {
        ActionKey key = TransferKey::get(recv).asTuple();
        RecvOp first = recvs.lookup(key);
        if (first != recv) {
          reportDuplicate(recv, first);
          continue;
        }
        if (sends.contains(key))
          continue;
        int64_t producer = getNeighbourStage(recv.getKind(), /*isSend=*/false,
                                             recv.getStage());
        fail(recv) << describe(recv) << " has no matching 'pp.send "
                   << stringifyTransferKind(recv.getKind()) << " stage "
                   << producer << " mb " << recv.getMb() << " to "
                   << stageRank[recv.getStage()] << "' on rank "
                   << recv.getPeer();
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// e. Deadlock freedom
//===----------------------------------------------------------------------===//

void ScheduleChecker::checkDeadlockFreedom() {
  ScheduleSimulator simulator(schedule);
  if (succeeded(simulator.run()))
    return;
  failed = true;
  simulator.emitDeadlockError();
}

/// Under rendezvous semantics a send waits for its receive too, so a
/// schedule that only works with buffered sends deadlocks there.
void ScheduleChecker::checkRendezvousDeadlockFreedom() {
  ScheduleSimulator simulator(schedule);
  if (succeeded(simulator.run(TransferSemantics::rendezvous)))
    return;
  failed = true;
  simulator.emitDeadlockError().attachNote(schedule.getLoc())
      << "the ranks wait for each other only with rendezvous transfers, "
         "where a send waits for its receive";
}

//===----------------------------------------------------------------------===//
// f. Memory
//===----------------------------------------------------------------------===//

/// No rank may ever hold more activation memory than its cap in the
/// schedule's memory_cap.
void ScheduleChecker::checkMemoryCap() {
  if (!schedule.getMemoryCapAttr())
    return;
  ActionCosts costs = getActionCosts(schedule.getCostOrUnit());
  for (auto [rank, rankOp] : llvm::enumerate(ranks)) {
    double cap = *schedule.getRankMemoryCap(rank);
    // Weights, gradients and optimizer state are held throughout.
    double held = staticMemory.empty() ? 0.0 : staticMemory[rank].total();
    auto delta = [&](Operation &op) {
      auto compute = dyn_cast<ComputeOp>(op);
      return compute ? costs.memoryDelta(compute.getPhase(), compute.getStage(),
                                         compute.getMb())
                     : 0.0;
    };
    Block &body = rankOp.getBody().front();
    MemoryPeak peak = findMemoryPeak(body, delta, cap - held);
    if (held + peak.peak <= cap + 1e-9)
      continue;
    failed = true;
    if (!peak.at) {
      rankOp.emitOpError("holds ")
          << formatQuantity(held) << " bytes of weights, gradients and "
          << "optimizer state on rank " << rank
          << ", above the schedule's memory_cap of " << formatQuantity(cap);
      continue;
    }
    InFlightDiagnostic diag =
        std::next(body.begin(), *peak.at)->emitOpError("leaves rank ")
        << rank << " holding " << formatQuantity(peak.peak)
        << " units of activation memory";
    if (held > 0)
      diag << " beside " << formatQuantity(held)
           << " of weights, gradients and optimizer state";
    diag << ", above the schedule's memory_cap of " << formatQuantity(cap);
  }
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Checks `steps` calls of a no-flush schedule run back to back.
static LogicalResult checkBackToBack(ScheduleOp schedule, int64_t steps,
                                     bool rendezvous) {
  ScheduleOp run = buildBackToBack(schedule, steps);
  LogicalResult result = ScheduleChecker(run, rendezvous).check();
  run.erase();
  return result;
}

/// A no-flush schedule: its step form, then one step as a run of one step
/// runs it, then three steps back to back (first, middle and last call),
/// where micro-batch j of step s is s * m + j.
static LogicalResult checkNoFlush(ScheduleOp schedule, bool rendezvous) {
  if (failed(verifyNextStepActions(schedule)) ||
      failed(checkBackToBack(schedule, 1, rendezvous)))
    return failure();
  if (succeeded(checkBackToBack(schedule, 3, rendezvous)))
    return success();
  return schedule.emitError("fails when 3 steps run back to back without a "
                            "flush (above, micro-batch j of step s is ")
         << schedule.getNumMicrobatches() << " * s + j)";
}

/// A schedule of tensor-parallel groups of T processes needs its stage
/// functions partitioned over a grid of T (pp-shard-stages), and stage
/// functions partitioned so need such a schedule.
static LogicalResult checkTensorParallel(ScheduleOp schedule) {
  int64_t parts = getTensorParallelism(schedule);
  auto module = schedule->getParentOfType<ModuleOp>();
  auto grid =
      module ? module.lookupSymbol<shard::GridOp>("pp_tp") : shard::GridOp();
  int64_t gridParts = grid && grid.getShape().size() == 1 ? grid.getShape()[0]
                                                          : (grid ? -1 : 1);
  if (parts == gridParts)
    return success();
  if (gridParts == 1)
    return schedule.emitError("runs as pp.tensor_parallel = ")
           << parts << ", but its stage functions are not partitioned over "
           << "shard.grid @pp_tp(shape = " << parts
           << ") (pp-shard-stages does that)";
  InFlightDiagnostic diag = schedule.emitError("runs as pp.tensor_parallel = ")
                            << parts << ", but its stage functions are "
                            << "partitioned over grid @pp_tp";
  diag.attachNote(grid.getLoc()) << "the grid";
  return diag;
}

namespace {
struct VerifySchedulePass
    : mlir::pp::impl::PPVerifyScheduleBase<VerifySchedulePass> {
  using Base::Base;
  /// Each rank's weights, gradients and optimizer state when the memory cap
  /// counts them (static-memory) and the schedule has its model.
  SmallVector<StaticMemory> getHeldStaticMemory(ScheduleOp schedule) {
    if (staticMemory.empty())
      return {};
    std::optional<SmallVector<SmallVector<WeightBuffer>>> weights =
        getStageWeights(schedule);
    if (!weights)
      return {};
    return getRankStaticMemory(schedule, *weights,
                               staticMemory == "adam" ? OptimizerKind::adam
                                                      : OptimizerKind::sgd);
  }
  void runOnOperation() override {
    StringRef optimizer = staticMemory;
    if (!optimizer.empty() && optimizer != "sgd" && optimizer != "adam") {
      getOperation().emitError("static-memory must be sgd or adam, got '")
          << staticMemory << "'";
      return signalPassFailure();
    }
    bool failed = false;
    SmallVector<ScheduleOp> schedules;
    getOperation().walk([&](ScheduleOp op) { schedules.push_back(op); });
    for (ScheduleOp schedule : schedules)
      failed |= mlir::failed(checkTensorParallel(schedule));
    for (ScheduleOp schedule : schedules) {
      SmallVector<StaticMemory> held = getHeldStaticMemory(schedule);
      bool rendezvous = getPassSemantics(semantics, schedule) ==
                        TransferSemantics::rendezvous;
      failed |= (runsWithoutFlush(schedule)
                     ? checkNoFlush(schedule, rendezvous)
                     : ScheduleChecker(schedule, rendezvous, held).check())
                    .failed();
    }
    if (failed)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
