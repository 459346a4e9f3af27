//===- VerifyProgram.cpp - every way a pipeline program is wrong ----------===//
//
// `verify(Program)`: placement, transfer endpoints, completeness,
// dependencies, sequence slices, data-parallel collectives, matching,
// deadlock freedom and memory caps, each violation at the action it is
// about.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ActionTable.h"
#include "pp/Scheduling/Program.h"
#include "pp/Scheduling/ScheduleProblem.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

using Kind = TimedAction::Kind;

/// How many missing actions are reported before the rest are left out.
static constexpr int kMaxMissingReports = 16;

namespace {

/// The tensor a send or receive moves: its kind, producer stage and
/// micro-batch. A send and a receive match if and only if their keys do.
ActionKey getTransferKey(const ProgramAction &action) {
  return {static_cast<int32_t>(action.transfer), action.getProducerStage(),
          action.mb};
}

StringRef getOpName(Kind kind) {
  switch (kind) {
  case Kind::compute:
    return "compute";
  case Kind::send:
    return "send";
  case Kind::recv:
    return "recv";
  case Kind::allReduce:
    return "all_reduce";
  case Kind::optimizerStep:
    return "optimizer_step";
  case Kind::reduceScatter:
    return "reduce_scatter";
  case Kind::allGather:
    return "all_gather";
  case Kind::other:
    break;
  }
  return "other";
}

std::string describe(Phase phase, int64_t stage, int64_t mb) {
  return llvm::formatv("{0} of stage {1} micro-batch {2}",
                       stringifyPhase(phase), stage, mb);
}

/// An action as messages name it: "forward of stage 1 micro-batch 2",
/// "activation send of stage 0 micro-batch 3", "all_reduce of stage 2".
std::string describe(const ProgramAction &action) {
  if (action.kind == Kind::compute)
    return describe(action.phase, action.stage, action.mb);
  if (action.isTransfer())
    return llvm::formatv("{0} {1} of stage {2} micro-batch {3}",
                         stringifyTransferKind(action.transfer),
                         getOpName(action.kind), action.stage, action.mb);
  return llvm::formatv("{0} of stage {1}", getOpName(action.kind),
                       action.stage);
}

/// Checks one program. Each `check*` function looks for one class of error
/// and reports every instance it finds; `run` calls them in an order that
/// keeps one mistake from being reported again as a consequence.
class ProgramChecker {
public:
  explicit ProgramChecker(const Program &program);
  std::vector<Violation> run();

private:
  /// An action by its index among all actions, rank by rank; -1 for none.
  using Id = int64_t;

  bool checkShape();
  void checkPlacement();
  void checkTransferEndpoints();
  void checkEndpoint(Id id);
  void checkCompleteness();
  void checkNextStep();
  void reportMissing(StringRef what, int64_t stage, int64_t mb);
  void checkComputeDependencies();
  void checkDependenciesOf(Id id);
  void checkRunsAfter(Id id, Id dep);
  void checkReceivedBefore(Id id, TransferKind kind, int64_t producerStage);
  void checkSliceOrder();
  void checkSendsFollowProducers();
  void checkOptimizerSteps();
  void checkFollowsWeightGradients(Id id, int64_t stage, StringRef uses);
  void checkAllReduces();
  void checkAllGathers();
  void checkGatherPrecedesComputes(Id id);
  void reportMissing(const llvm::DenseMap<int64_t, SmallVector<Id, 1>> &has,
                     int64_t stage, StringRef action, StringRef why = "");
  void checkTransferMatching();
  void checkDeadlockFreedom(TransferSemantics semantics);
  void checkComputeOnlyDeadlockFreedom();
  void checkMemoryCap();

  const ProgramAction &get(Id id) const { return actions[id]; }
  /// Whether action `id` belongs to the step the program checks: all do
  /// but a compute-only program's actions for the next step.
  bool inStep(Id id) const {
    return program.explicitTransfers || get(id).part != StepPart::next;
  }
  ProgramSite site(Id id) const { return {rankOf[id], id - begin[rankOf[id]]}; }
  /// Whether `first` runs before `second` on the same rank.
  bool precedes(Id first, Id second) const {
    return rankOf[first] == rankOf[second] && first < second;
  }
  Id lookupCompute(Phase phase, int64_t stage, int64_t mb) const {
    return computes.lookup({static_cast<int32_t>(phase), stage, mb});
  }
  /// The first of B and BW of (stage, mb), or -1.
  Id lookupBackward(int64_t stage, int64_t mb) const {
    Id fused = lookupCompute(Phase::backward, stage, mb);
    return fused >= 0 ? fused : lookupCompute(Phase::backward_input, stage, mb);
  }
  /// Reports `message` at action `id`.
  Violation &fail(Id id, std::string message) {
    return fail(site(id), std::move(message));
  }
  Violation &fail(ProgramSite at, std::string message, bool aboutOp = true) {
    violations.push_back({at, std::move(message), aboutOp, {}});
    return violations.back();
  }
  /// Reports `message` at `id` with a note at `related`, the other action
  /// involved.
  void fail(Id id, std::string message, Id related, std::string note) {
    fail(id, std::move(message)).notes.push_back({site(related), note});
  }
  void reportDuplicate(Id duplicate, Id first) {
    fail(duplicate, "duplicate " + describe(get(duplicate)), first,
         "first occurrence here");
  }

  const Program &program;
  int64_t numStages, numMicrobatches;
  /// All actions rank by rank; rank r's are [begin[r], begin[r + 1]).
  std::vector<ProgramAction> actions;
  SmallVector<int64_t> begin;
  std::vector<int64_t> rankOf;
  /// The first action of each (phase or transfer kind, stage, mb); transfers
  /// by their key, so a matching send and receive share one.
  ActionTable<Id> computes, sends, recvs;
  /// Each stage's optimizer steps, gradient collectives (all-reduce, or
  /// ZeRO-1's reduce-scatter) and all-gathers.
  llvm::DenseMap<int64_t, SmallVector<Id, 1>> optimizerSteps, allReduces,
      allGathers;
  /// Of a compute-only program, how often each (stage, mb) is forwarded for
  /// the next step and in the first step only.
  llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> nextStep, firstOnly;
  int numMissing = 0;
  std::vector<Violation> violations;
};

size_t countActions(const Program &program) {
  size_t count = 0;
  for (const auto &rank : program.ranks)
    count += rank.size();
  return count;
}

} // namespace

ProgramChecker::ProgramChecker(const Program &program)
    : program(program), numStages(program.numStages),
      numMicrobatches(program.numMicrobatches),
      computes(getMaxEnumValForPhase() + 1, numStages, numMicrobatches,
               countActions(program), -1),
      sends(getMaxEnumValForTransferKind() + 1, numStages, numMicrobatches,
            countActions(program), -1),
      recvs(getMaxEnumValForTransferKind() + 1, numStages, numMicrobatches,
            countActions(program), -1) {
  begin.push_back(0);
  for (auto [rank, list] : llvm::enumerate(program.ranks)) {
    for (const ProgramAction &action : list) {
      Id id = actions.size();
      actions.push_back(action);
      rankOf.push_back(rank);
      if (!program.explicitTransfers && action.part != StepPart::every) {
        auto &count = action.part == StepPart::next ? nextStep : firstOnly;
        ++count[{action.stage, action.mb}];
        if (action.part == StepPart::next)
          continue;
      }
      switch (action.kind) {
      case Kind::compute:
        computes.insertFirst(
            {static_cast<int32_t>(action.phase), action.stage, action.mb}, id);
        break;
      case Kind::send:
        sends.insertFirst(getTransferKey(action), id);
        break;
      case Kind::recv:
        recvs.insertFirst(getTransferKey(action), id);
        break;
      case Kind::optimizerStep:
        optimizerSteps[action.stage].push_back(id);
        break;
      case Kind::allReduce:
      case Kind::reduceScatter:
        allReduces[action.stage].push_back(id);
        break;
      case Kind::allGather:
        allGathers[action.stage].push_back(id);
        break;
      case Kind::other:
        break;
      }
    }
    begin.push_back(actions.size());
  }
}

std::vector<Violation> ProgramChecker::run() {
  // Nothing else can be looked up in a program of the wrong shape.
  if (!checkShape())
    return std::move(violations);
  checkPlacement();
  checkTransferEndpoints();
  bool wellPlaced = violations.empty();
  checkCompleteness();
  // Order and matching are only meaningful once every action sits on the
  // rank of its stage and every transfer names the right neighbour.
  if (!wellPlaced)
    return std::move(violations);
  checkComputeDependencies();
  checkSliceOrder();
  checkSendsFollowProducers();
  checkOptimizerSteps();
  checkAllReduces();
  checkAllGathers();
  size_t beforeMatching = violations.size();
  checkTransferMatching();
  bool matched = violations.size() == beforeMatching;
  if (!program.explicitTransfers)
    checkComputeOnlyDeadlockFreedom();
  // An unmatched receive blocks forever; that is not news.
  else if (matched)
    checkDeadlockFreedom(TransferSemantics::async);
  if (matched && violations.empty() &&
      program.semantics == TransferSemantics::rendezvous)
    checkDeadlockFreedom(TransferSemantics::rendezvous);
  checkMemoryCap();
  return std::move(violations);
}

//===----------------------------------------------------------------------===//
// Shape, placement and transfer endpoints
//===----------------------------------------------------------------------===//

/// Costs that describe the program, every stage on one of its ranks, every
/// action within its stages and micro-batches.
bool ProgramChecker::checkShape() {
  int64_t numRanks = program.getNumRanks();
  if (program.cost) {
    std::string wrong = program.cost->check(numStages, numMicrobatches);
    if (!wrong.empty())
      fail(ProgramSite{}, wrong, /*aboutOp=*/false);
  }
  if (static_cast<int64_t>(program.stageRank.size()) != numStages)
    fail(ProgramSite{},
         llvm::formatv("the placement has {0} stages, expected {1}",
                       program.stageRank.size(), numStages),
         /*aboutOp=*/false);
  for (auto [stage, rank] : llvm::enumerate(program.stageRank))
    if (rank < 0 || rank >= numRanks)
      fail(ProgramSite{},
           llvm::formatv("stage {0} is placed on rank {1}, but there are {2} "
                         "ranks",
                         stage, rank, numRanks),
           /*aboutOp=*/false);
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &action = get(id);
    if (action.kind != Kind::other &&
        (action.stage < 0 || action.stage >= numStages || action.mb < 0 ||
         action.mb >= numMicrobatches))
      fail(id, llvm::formatv("rank {0} runs {1}, but there are {2} stages and "
                             "{3} micro-batches",
                             rankOf[id], describe(action), numStages,
                             numMicrobatches));
  }
  return violations.empty();
}

void ProgramChecker::checkPlacement() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &action = get(id);
    if (action.kind == Kind::other) {
      fail(id, "is not a schedule action");
      continue;
    }
    if (program.stageRank[action.stage] != rankOf[id])
      fail(id, llvm::formatv("{0} is on rank {1}, but stage {2} is placed on "
                             "rank {3}",
                             describe(action), rankOf[id], action.stage,
                             program.stageRank[action.stage]));
  }
}

void ProgramChecker::checkEndpoint(Id id) {
  const ProgramAction &action = get(id);
  bool isSend = action.kind == Kind::send;
  int64_t stage = action.stage;
  int64_t neighbour = getNeighbourStage(action.transfer, isSend, stage);
  StringRef role = isSend ? "consumer" : "producer";
  ArrayRef<int64_t> stageRank = program.stageRank;
  if (neighbour < 0 || neighbour >= numStages) {
    fail(id, llvm::formatv("{0} has no {1}: stage {2} is the {3} stage",
                           describe(action), role, stage,
                           neighbour < 0 ? "first" : "last"));
    return;
  }
  if (stageRank[neighbour] == stageRank[stage]) {
    fail(id,
         llvm::formatv("{0} connects stages {1} and {2}, which are both "
                       "on rank {3}; dependencies within a rank must not "
                       "use transfers",
                       describe(action), stage, neighbour, stageRank[stage]));
    return;
  }
  if (action.peer != stageRank[neighbour])
    fail(id, llvm::formatv("{0} {1} rank {2}, but its {3} stage {4} is on "
                           "rank {5}",
                           describe(action), isSend ? "goes to" : "comes from",
                           action.peer, role, neighbour, stageRank[neighbour]));
}

void ProgramChecker::checkTransferEndpoints() {
  for (Id id = 0, e = actions.size(); id < e; ++id)
    if (get(id).isTransfer())
      checkEndpoint(id);
}

//===----------------------------------------------------------------------===//
// Completeness: one F and one BW or one B and one W per (stage, mb)
//===----------------------------------------------------------------------===//

/// Reports a missing action at its stage's rank. Stops after a few: a
/// program that lacks a whole phase would otherwise report stages times
/// micro-batches errors.
void ProgramChecker::reportMissing(StringRef what, int64_t stage, int64_t mb) {
  if (++numMissing > kMaxMissingReports)
    return;
  Violation &violation =
      fail(ProgramSite{program.stageRank[stage], -1},
           llvm::formatv("missing {0} of stage {1} micro-batch {2}", what,
                         stage, mb),
           /*aboutOp=*/false);
  if (numMissing == kMaxMissingReports)
    violation.notes.push_back(
        {std::nullopt, "further missing actions are not reported"});
}

void ProgramChecker::checkCompleteness() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &action = get(id);
    if (action.kind != Kind::compute || !inStep(id))
      continue;
    Id first = lookupCompute(action.phase, action.stage, action.mb);
    if (first != id)
      reportDuplicate(id, first);
  }
  for (int64_t stage = 0; stage < numStages; ++stage) {
    for (int64_t mb = 0; mb < numMicrobatches; ++mb) {
      if (numMissing >= kMaxMissingReports)
        return;
      Id forward = lookupCompute(Phase::forward, stage, mb);
      Id fused = lookupCompute(Phase::backward, stage, mb);
      Id input = lookupCompute(Phase::backward_input, stage, mb);
      Id weight = lookupCompute(Phase::backward_weight, stage, mb);
      if (forward < 0)
        reportMissing("forward", stage, mb);
      if (nextStep.lookup({stage, mb}) != firstOnly.lookup({stage, mb}))
        fail(ProgramSite{program.stageRank[stage], -1},
             describe(Phase::forward, stage, mb) +
                 " runs in the first step only but is not run for the next "
                 "step, or the other way",
             /*aboutOp=*/false);
      if (fused >= 0 && (input >= 0 || weight >= 0)) {
        Id split = input >= 0 ? input : weight;
        if (weight >= 0 && weight < split)
          split = weight;
        Id earlier = std::min(fused, split), later = std::max(fused, split);
        fail(later,
             describe(get(later)) + " mixes the fused and the split backward "
                                    "of the same micro-batch",
             earlier, describe(get(earlier)) + " here");
        continue;
      }
      if (fused >= 0)
        continue;
      if (input < 0 && weight < 0)
        reportMissing("backward", stage, mb);
      else if (input < 0)
        reportMissing("backward_input", stage, mb);
      else if (weight < 0)
        reportMissing("backward_weight", stage, mb);
    }
  }
}

//===----------------------------------------------------------------------===//
// Dependencies
//===----------------------------------------------------------------------===//

void ProgramChecker::checkRunsAfter(Id id, Id dep) {
  if (dep < 0 || precedes(dep, id))
    return; // A missing dependency is reported as missing.
  fail(id,
       describe(get(id)) + " runs before the " + describe(get(dep)) +
           " it depends on",
       dep, describe(get(dep)) + " here");
}

void ProgramChecker::checkReceivedBefore(Id id, TransferKind kind,
                                         int64_t producerStage) {
  ActionKey key{static_cast<int32_t>(kind), producerStage, get(id).mb};
  Id recv = recvs.lookup(key);
  if (recv >= 0 && precedes(recv, id))
    return;
  // A send whose receive is missing is reported at the send.
  if (recv < 0 && sends.contains(key))
    return;
  Violation &violation = fail(
      id, llvm::formatv(
              "{0} needs its {1} from rank {2}, but no 'pp.recv "
              "{3}' precedes it",
              describe(get(id)),
              kind == TransferKind::activation ? "input" : "output gradient",
              program.stageRank[producerStage], stringifyTransferKind(kind)));
  if (recv >= 0)
    violation.notes.push_back({site(recv), "the receive comes only here"});
}

void ProgramChecker::checkDependenciesOf(Id id) {
  const ProgramAction &op = get(id);
  int64_t stage = op.stage, mb = op.mb;
  ArrayRef<int64_t> stageRank = program.stageRank;
  switch (op.phase) {
  case Phase::forward:
    if (stage == 0)
      return;
    if (stageRank[stage - 1] == stageRank[stage])
      checkRunsAfter(id, lookupCompute(Phase::forward, stage - 1, mb));
    else if (program.explicitTransfers)
      checkReceivedBefore(id, TransferKind::activation, stage - 1);
    return;
  case Phase::backward_input:
  case Phase::backward:
    checkRunsAfter(id, lookupCompute(Phase::forward, stage, mb));
    if (stage + 1 == numStages)
      return;
    if (stageRank[stage + 1] == stageRank[stage])
      checkRunsAfter(id, lookupBackward(stage + 1, mb));
    else if (program.explicitTransfers)
      checkReceivedBefore(id, TransferKind::gradient, stage + 1);
    return;
  case Phase::backward_weight:
    checkRunsAfter(id, lookupCompute(Phase::backward_input, stage, mb));
    return;
  }
}

void ProgramChecker::checkComputeDependencies() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &op = get(id);
    // Duplicates are reported as such.
    if (op.kind == Kind::compute && inStep(id) &&
        lookupCompute(op.phase, op.stage, op.mb) == id)
      checkDependenciesOf(id);
  }
}

/// Sequence slices (`numSlices` = k): the forward of slice j reads the keys
/// and values of slice j - 1's forward, and the backward of slice j - 1
/// needs their gradients from slice j's; both on the stage's rank.
void ProgramChecker::checkSliceOrder() {
  int64_t k = program.numSlices;
  if (k < 2)
    return;
  if (numMicrobatches % k != 0) {
    fail(ProgramSite{},
         llvm::formatv("{0} units are not {1} slices of whole micro-batches",
                       numMicrobatches, k),
         /*aboutOp=*/false);
    return;
  }
  auto name = [&](Id id) {
    const ProgramAction &op = get(id);
    return llvm::formatv("{0} of stage {1} mb {2} (micro-batch {3} slice {4})",
                         stringifyPhase(op.phase), op.stage, op.mb, op.mb / k,
                         op.mb % k)
        .str();
  };
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &op = get(id);
    int64_t stage = op.stage, mb = op.mb;
    if (op.kind != Kind::compute || !inStep(id) ||
        lookupCompute(op.phase, stage, mb) != id)
      continue; // Duplicates are reported as such.
    Id dep = -1;
    StringRef why;
    if (op.phase == Phase::forward && mb % k != 0) {
      dep = lookupCompute(Phase::forward, stage, mb - 1);
      why = "whose keys and values its attention reads";
    } else if ((op.phase == Phase::backward ||
                op.phase == Phase::backward_input) &&
               mb % k != k - 1) {
      dep = lookupBackward(stage, mb + 1);
      why = "which yields its keys' and values' gradients";
    }
    if (dep < 0 || precedes(dep, id))
      continue; // A missing action is reported as missing.
    fail(id, name(id) + " runs before the " + name(dep) + ", " + why.str(), dep,
         name(dep) + " here");
  }
}

void ProgramChecker::checkSendsFollowProducers() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &send = get(id);
    if (send.kind != Kind::send)
      continue;
    Id producer = send.transfer == TransferKind::activation
                      ? lookupCompute(Phase::forward, send.stage, send.mb)
                      : lookupBackward(send.stage, send.mb);
    if (producer < 0 || precedes(producer, id))
      continue;
    fail(id,
         describe(send) + " is posted before the " + describe(get(producer)) +
             " that produces it",
         producer, describe(get(producer)) + " here");
  }
}

//===----------------------------------------------------------------------===//
// Optimizer steps and data-parallel collectives
//===----------------------------------------------------------------------===//

void ProgramChecker::checkFollowsWeightGradients(Id id, int64_t stage,
                                                 StringRef uses) {
  for (int64_t mb = 0; mb < numMicrobatches; ++mb) {
    Id weight = lookupCompute(Phase::backward, stage, mb);
    if (weight < 0)
      weight = lookupCompute(Phase::backward_weight, stage, mb);
    if (weight < 0 || precedes(weight, id))
      continue;
    fail(id,
         describe(get(id)) + " runs before the " + describe(get(weight)) +
             " whose gradient it " + uses.str(),
         weight, describe(get(weight)) + " here");
    return;
  }
}

/// An optimizer step applies the weight gradients of every micro-batch, so
/// it comes after all of them, and at most once per stage.
void ProgramChecker::checkOptimizerSteps() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &step = get(id);
    if (step.kind != Kind::optimizerStep)
      continue;
    Id first = optimizerSteps.lookup(step.stage).front();
    if (first != id) {
      reportDuplicate(id, first);
      continue;
    }
    // Gradients are reduced across replicas before they are applied.
    for (Id reduce : allReduces.lookup(step.stage))
      if (precedes(id, reduce))
        fail(reduce,
             describe(get(reduce)) + " comes after the " + describe(step) +
                 " that applies the gradients it reduces",
             id, describe(step) + " here");
    checkFollowsWeightGradients(id, step.stage, "applies");
  }
}

/// Reports `stage` if it has no entry in `has` though the program runs as
/// several replicas, at the stage's rank.
void ProgramChecker::reportMissing(
    const llvm::DenseMap<int64_t, SmallVector<Id, 1>> &has, int64_t stage,
    StringRef action, StringRef why) {
  if (program.numReplicas < 2 || has.count(stage))
    return;
  fail(ProgramSite{program.stageRank[stage], -1},
       llvm::formatv("missing {0} of stage {1}: the schedule runs as {2} "
                     "data-parallel replicas{3}",
                     action, stage, program.numReplicas, why),
       /*aboutOp=*/false);
}

/// Whether `level` shards what a stage's gradients update (ZeRO-1 and -3),
/// so that a reduce-scatter sums them.
static bool isSharded(int64_t level) { return level == 1 || level == 3; }

/// The gradient collective of a stage at ZeRO stage `level`.
static StringRef getGradientCollective(int64_t level) {
  return isSharded(level) ? "reduce_scatter" : "all_reduce";
}

/// A gradient collective (an all-reduce, or ZeRO-1's reduce-scatter) sums
/// the weight gradients of every micro-batch over the replicas, so it comes
/// after all of them, once per stage; with several replicas every stage
/// needs one, of the kind its ZeRO stage names.
void ProgramChecker::checkAllReduces() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &reduce = get(id);
    if (reduce.kind != Kind::allReduce && reduce.kind != Kind::reduceScatter)
      continue;
    int64_t zero = program.getZeroStage(reduce.stage);
    if ((reduce.kind == Kind::reduceScatter) != isSharded(zero)) {
      fail(id, llvm::formatv("{0} in a schedule with zero = {1} for stage "
                             "{2}, which sums gradients with pp.{3}",
                             describe(reduce), zero, reduce.stage,
                             getGradientCollective(zero)));
      continue;
    }
    Id first = allReduces.lookup(reduce.stage).front();
    if (first != id) {
      reportDuplicate(id, first);
      continue;
    }
    checkFollowsWeightGradients(id, reduce.stage, "reduces");
  }
  for (int64_t stage = 0; stage < numStages; ++stage)
    reportMissing(allReduces, stage,
                  getGradientCollective(program.getZeroStage(stage)));
}

/// ZeRO-1's all-gather spreads the weight blocks the replicas updated, so
/// it comes after its stage's optimizer step (or, without one, its
/// reduce-scatter); ZeRO-3's gathers the weights the step's computes read,
/// so it comes before all of them. Once per stage, and only with ZeRO-1 or
/// -3; with several replicas every stage needs one.
void ProgramChecker::checkAllGathers() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &gather = get(id);
    if (gather.kind != Kind::allGather)
      continue;
    int64_t zero = program.getZeroStage(gather.stage);
    if (!isSharded(zero)) {
      fail(id, describe(gather) + " in a schedule without zero = 1 or 3 for "
                                  "its stage: only ZeRO-1 and -3 shard the "
                                  "weights");
      continue;
    }
    Id first = allGathers.lookup(gather.stage).front();
    if (first != id) {
      reportDuplicate(id, first);
      continue;
    }
    if (zero == 3) {
      checkGatherPrecedesComputes(id);
      continue;
    }
    // An imported schedule (PyTorch's CSV) has no optimizer steps; its
    // gather then follows the reduction.
    Id update = -1;
    if (auto steps = optimizerSteps.lookup(gather.stage); !steps.empty())
      update = steps.front();
    else if (auto reduces = allReduces.lookup(gather.stage); !reduces.empty())
      update = reduces.front();
    if (update >= 0 && !precedes(update, id))
      fail(id, describe(gather) + " must follow the " + describe(get(update)) +
                   " on its rank: it gathers the updated blocks");
  }
  for (int64_t stage = 0; stage < numStages; ++stage)
    if (int64_t zero = program.getZeroStage(stage); isSharded(zero))
      reportMissing(allGathers, stage, "all_gather",
                    llvm::formatv(" with zero = {0}", zero).str());
}

/// ZeRO-3's all-gather `id` comes before every compute action of its
/// stage on its rank: they read the whole weights it gathers.
void ProgramChecker::checkGatherPrecedesComputes(Id id) {
  const ProgramAction &gather = get(id);
  int64_t rank = rankOf[id];
  for (Id other = begin[rank]; other < id; ++other) {
    const ProgramAction &use = get(other);
    if (use.kind != Kind::compute || use.stage != gather.stage)
      continue;
    fail(id,
         describe(gather) + " must come before the " + describe(use) +
             " on its rank: under zero = 3 it gathers the weights the "
             "stage's computes read",
         other, describe(use) + " here");
    return;
  }
}

//===----------------------------------------------------------------------===//
// Matching transfers
//===----------------------------------------------------------------------===//

void ProgramChecker::checkTransferMatching() {
  for (Id id = 0, e = actions.size(); id < e; ++id) {
    const ProgramAction &op = get(id);
    if (!op.isTransfer())
      continue;
    bool isSend = op.kind == Kind::send;
    ActionKey key = getTransferKey(op);
    Id first = (isSend ? sends : recvs).lookup(key);
    if (first != id) {
      reportDuplicate(id, first);
      continue;
    }
    if ((isSend ? recvs : sends).contains(key))
      continue;
    int64_t other = getNeighbourStage(op.transfer, isSend, op.stage);
    fail(id, llvm::formatv("{0} has no matching 'pp.{1} {2} stage {3} mb {4} "
                           "{5} {6}' on rank {7}",
                           describe(op), isSend ? "recv" : "send",
                           stringifyTransferKind(op.transfer), other, op.mb,
                           isSend ? "from" : "to", program.stageRank[op.stage],
                           op.peer));
  }
}

//===----------------------------------------------------------------------===//
// Deadlock freedom
//===----------------------------------------------------------------------===//

/// Runs the step's actions (not the next step's) in the timing model and
/// reports a deadlock.
void ProgramChecker::checkDeadlockFreedom(TransferSemantics semantics) {
  std::vector<TimedAction> timed;
  std::vector<ProgramSite> sites;
  SmallVector<int64_t> rankBegin = {0};
  for (int64_t rank = 0, e = program.getNumRanks(); rank < e; ++rank) {
    for (Id id = begin[rank]; id < begin[rank + 1]; ++id) {
      if (get(id).part == StepPart::next)
        continue;
      timed.push_back(get(id));
      sites.push_back(site(id));
    }
    rankBegin.push_back(timed.size());
  }
  ScheduleTiming timing(numStages, numMicrobatches);
  timing.setActions(std::move(timed), std::move(rankBegin));
  if (succeeded(
          timing.run(ActionCosts(StageCosts::getUnit(numStages)), semantics)))
    return;
  violations.push_back(getDeadlock(timing, sites));
  if (semantics == TransferSemantics::rendezvous)
    violations.back().notes.push_back(
        {ProgramSite{}, "the ranks wait for each other only with rendezvous "
                        "transfers, where a send waits for its receive"});
}

/// A compute-only program: each compute waits for its inputs, from other
/// ranks too; a rank that waits forever waits for an input computed after
/// it.
void ProgramChecker::checkComputeOnlyDeadlockFreedom() {
  SmallVector<SmallVector<ScheduledAction>> step;
  std::vector<Id> ids;
  for (int64_t rank = 0, e = program.getNumRanks(); rank < e; ++rank) {
    step.emplace_back();
    for (Id id = begin[rank]; id < begin[rank + 1]; ++id)
      if (inStep(id)) {
        step.back().push_back({get(id).phase, get(id).stage, get(id).mb});
        ids.push_back(id);
      }
  }
  ScheduleTiming timing(numStages, numMicrobatches);
  ActionCosts costs(program.cost ? *program.cost
                                 : StageCosts::getUnit(numStages));
  if (succeeded(timing.runComputeOnly(step, program.stageRank, costs,
                                      /*recordIntervals=*/false)))
    return;
  std::string message = "the ranks wait forever:";
  std::optional<Id> first;
  for (int64_t rank = 0, e = program.getNumRanks(); rank < e; ++rank) {
    std::optional<int64_t> blocked = timing.getBlockedAction(rank);
    if (!blocked)
      continue;
    first = first.value_or(ids[*blocked]);
    message += " rank " + std::to_string(rank) + " at " +
               describe(get(ids[*blocked])) + ",";
  }
  fail(*first, message + " whose inputs are never computed before them")
      .aboutOp = false;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// No rank may ever hold more than its cap: activations, and what it holds
/// throughout (weights, gradients, optimizer state).
void ProgramChecker::checkMemoryCap() {
  if (program.memoryCap.empty())
    return;
  ActionCosts costs(program.cost ? *program.cost
                                 : StageCosts::getUnit(numStages));
  for (int64_t rank = 0, e = program.getNumRanks(); rank < e; ++rank) {
    double cap = program.memoryCap[rank];
    double held =
        program.staticMemory.empty() ? 0.0 : program.staticMemory[rank];
    auto delta = [&](const ProgramAction &action) {
      bool counted =
          action.kind == Kind::compute &&
          (program.explicitTransfers || action.part != StepPart::next);
      return counted ? costs.memoryDelta(action.phase, action.stage, action.mb)
                     : 0.0;
    };
    MemoryPeak peak = findMemoryPeak(program.ranks[rank], delta, cap - held);
    if (held + peak.peak <= cap + 1e-9)
      continue;
    if (!peak.at) {
      fail(ProgramSite{rank, -1},
           "holds " + formatQuantity(held) +
               " bytes of weights, gradients and optimizer state on rank " +
               std::to_string(rank) + ", above the schedule's memory_cap of " +
               formatQuantity(cap));
      continue;
    }
    std::string message = "leaves rank " + std::to_string(rank) + " holding " +
                          formatQuantity(peak.peak) +
                          " units of activation memory";
    if (held > 0)
      message += " beside " + formatQuantity(held) +
                 " of weights, gradients and optimizer state";
    fail(ProgramSite{rank, static_cast<int64_t>(*peak.at)},
         message + ", above the schedule's memory_cap of " +
             formatQuantity(cap));
  }
}

Violation mlir::pp::sched::getDeadlock(const ScheduleTiming &timing,
                                       ArrayRef<ProgramSite> sites) {
  // The action `rank` is blocked at, by its index among all actions.
  auto blocked = [&](int64_t rank) { return *timing.getBlockedAction(rank); };
  auto get = [&](int64_t rank) -> const TimedAction & {
    return timing.getActions(rank)[blocked(rank) - timing.getFirstAction(rank)];
  };
  SmallVector<int64_t> chain = timing.getWaitChain();
  ArrayRef<int64_t> waiting = chain;
  if (chain.size() > 1 && llvm::is_contained(waiting.drop_back(), chain.back()))
    waiting = waiting.drop_back();
  int64_t first = waiting.front();
  std::string message =
      llvm::formatv("deadlock: rank {0} waits at this 'pp.{1}'", first,
                    getOpName(get(first).kind));
  Violation violation{sites[blocked(first)], "", /*aboutOp=*/false, {}};
  for (auto [i, rank] : llvm::enumerate(waiting)) {
    bool neverSent = timing.waitsForever(rank);
    int64_t peer = get(rank).peer;
    if (i == 0) {
      message += neverSent ? ", which has no matching 'pp.send'"
                           : " for rank " + std::to_string(peer);
      continue;
    }
    ProgramSite at = sites[blocked(rank)];
    if (neverSent) {
      message += ", which waits at a 'pp.recv' that has no matching 'pp.send'";
      violation.notes.push_back(
          {at, llvm::formatv("rank {0} waits here for a 'pp.send' that never "
                             "comes",
                             rank)});
      continue;
    }
    message += ", which waits for rank " + std::to_string(peer);
    violation.notes.push_back(
        {at, llvm::formatv("rank {0} waits here for rank {1}", rank, peer)});
  }
  violation.message = std::move(message);
  return violation;
}

std::vector<Violation> mlir::pp::sched::verify(const Program &program) {
  return ProgramChecker(program).run();
}
