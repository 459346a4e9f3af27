//===- GreedySchedule.cpp - list schedules with bubbles filled ------------===//
//
// The list scheduler behind `greedy` and `auto`'s greedy candidates. It
// keeps each rank's best next action and, after appending one, refreshes
// only the ranks whose choices it changed: its own and its neighbours'.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/GreedySchedule.h"

#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// An action a rank could append next, when it would start, and its rank
/// among actions that start at the same time (lower first).
struct Choice {
  ScheduledAction action{Phase::forward, -1, 0};
  double start = std::numeric_limits<double>::infinity();
  int priority = 0;

  bool valid() const { return action.stage >= 0; }
  /// Earlier first; on ties the lower priority, then the later stage.
  bool before(const Choice &other) const {
    if (start < other.start - 1e-12)
      return true;
    if (start > other.start + 1e-12)
      return false;
    return priority < other.priority ||
           (priority == other.priority && action.stage > other.action.stage);
  }
};

class GreedyListScheduler {
public:
  GreedyListScheduler(const ScheduleProblem &problem, const ActionCosts &costs,
                      ArrayRef<int64_t> stageRank, const GreedyPolicy &policy)
      : problem(problem), costs(costs), stageRank(stageRank), policy(policy),
        dataflow(problem.numStages, problem.numMicrobatches, stageRank,
                 costs.transferTime()) {}

  FailureOr<GeneratedSchedule> build();

private:
  Choice choose(int64_t rank) const;
  void append(const Choice &choice);
  /// Whether a forward of stage `s` fits the memory limit of `rank`.
  bool admits(int64_t rank, int64_t s) const {
    return s != rankStages[rank].back() ||
           committed[rank] + getEntryMemory(rank, nextForward[s]) <=
               policy.memoryLimit[rank] + 1e-9;
  }
  /// The activations micro-batch `mb` holds on `rank` at most: those of all
  /// its stages.
  double getEntryMemory(int64_t rank, int64_t mb) const {
    double held = 0.0;
    for (int64_t s : rankStages[rank])
      held += costs.memoryDelta(Phase::forward, s, mb);
    return held;
  }
  /// Recomputes the best next action of `rank` and the tournament above it.
  void update(int64_t rank);
  /// Updates the rank of `stage`, if there is one and it is not `done`.
  void refresh(int64_t stage, int64_t done) {
    if (stage >= 0 && stage < problem.numStages && stageRank[stage] != done)
      update(stageRank[stage]);
  }

  const ScheduleProblem &problem;
  const ActionCosts &costs;
  ArrayRef<int64_t> stageRank;
  const GreedyPolicy &policy;
  DataflowTimes dataflow;
  /// Per rank: its stages, later first; when it is free; its best next
  /// action.
  SmallVector<SmallVector<int64_t>> rankStages;
  SmallVector<double> clock;
  /// Per rank: what it holds plus what the micro-batches it has started
  /// will hold on their way through its later stages. A rank starts a
  /// micro-batch (a forward of its first stage) only if the limit leaves
  /// room for the activations of all its stages (getEntryMemory): otherwise
  /// forwards of its first stage could fill its memory and starve its later
  /// ones.
  SmallVector<double> committed;
  SmallVector<Choice> choice;
  /// A tournament over the ranks' choices: node i holds the winner of nodes
  /// 2i and 2i + 1, leaf `leaves + r` rank r, node 1 the overall winner.
  SmallVector<int64_t> winner;
  int64_t leaves = 1;
  /// Per stage: the next micro-batch of each phase.
  SmallVector<int64_t> nextForward, nextBackward, nextWeight;
  GeneratedSchedule schedule;
};

} // namespace

Choice GreedyListScheduler::choose(int64_t rank) const {
  int64_t stages = problem.numStages, m = problem.numMicrobatches;
  Choice best;
  auto consider = [&](ScheduledAction a, int priority) {
    std::optional<double> ready = dataflow.readyTime(a.phase, a.stage, a.mb);
    if (!ready)
      return;
    Choice candidate{a, std::max(clock[rank], *ready), priority};
    if (!best.valid() || candidate.before(best))
      best = candidate;
  };
  bool forwardsFirst = policy.forwardsFirst;
  for (int64_t s : rankStages[rank]) {
    if (nextBackward[s] < m)
      consider({Phase::backward_input, s, nextBackward[s]},
               forwardsFirst ? int(stages) : 0);
    if (nextForward[s] < m && admits(rank, s))
      consider({Phase::forward, s, nextForward[s]},
               forwardsFirst ? int(s) - int(stages) : 1 + int(stages - 1 - s));
    // Unless eager, weight gradients wait for idle time: any other action
    // that starts no later goes first.
    if (nextWeight[s] < nextBackward[s])
      consider({Phase::backward_weight, s, nextWeight[s]},
               policy.eagerWeights ? -1 : int(stages) + 1);
  }
  return best;
}

void GreedyListScheduler::append(const Choice &chosen) {
  const ScheduledAction &a = chosen.action;
  int64_t rank = stageRank[a.stage];
  schedule.ranks[rank].push_back(a);
  clock[rank] = chosen.start + costs.duration(a.phase, a.stage, a.mb);
  if (a.phase != Phase::forward)
    committed[rank] += costs.memoryDelta(a.phase, a.stage, a.mb);
  else if (a.stage == rankStages[rank].back())
    committed[rank] += getEntryMemory(rank, a.mb);
  dataflow.record(a.phase, a.stage, a.mb, clock[rank]);
  if (a.phase == Phase::forward)
    ++nextForward[a.stage];
  else if (a.phase == Phase::backward_input)
    ++nextBackward[a.stage];
  else
    ++nextWeight[a.stage];
  // Only this rank and the one its result feeds see a change: a forward
  // feeds the next stage, an input gradient the one before.
  update(rank);
  if (a.phase == Phase::forward)
    refresh(a.stage + 1, rank);
  else if (a.phase == Phase::backward_input)
    refresh(a.stage - 1, rank);
}

void GreedyListScheduler::update(int64_t rank) {
  choice[rank] = choose(rank);
  auto better = [&](int64_t a, int64_t b) {
    if (a < 0 || !choice[a].valid())
      return b;
    if (b < 0 || !choice[b].valid())
      return a;
    return choice[b].before(choice[a]) ? b : a;
  };
  int64_t node = leaves + rank;
  winner[node] = choice[rank].valid() ? rank : -1;
  for (node /= 2; node > 0; node /= 2)
    winner[node] = better(winner[2 * node], winner[2 * node + 1]);
}

FailureOr<GeneratedSchedule> GreedyListScheduler::build() {
  int64_t stages = problem.numStages, ranks = problem.numRanks;
  dataflow.reset();
  schedule = {SmallVector<int64_t>(stageRank), {}, ""};
  schedule.ranks.resize(ranks);
  rankStages.assign(ranks, {});
  for (int64_t s = stages - 1; s >= 0; --s)
    rankStages[stageRank[s]].push_back(s);
  clock.assign(ranks, 0.0);
  committed.assign(ranks, 0.0);
  nextForward.assign(stages, 0);
  nextBackward.assign(stages, 0);
  nextWeight.assign(stages, 0);
  choice.assign(ranks, Choice());
  while (leaves < ranks)
    leaves *= 2;
  winner.assign(2 * leaves, -1);
  for (int64_t rank = 0; rank < ranks; ++rank)
    update(rank);
  for (int64_t left = 3 * stages * problem.numMicrobatches; left > 0; --left) {
    if (winner[1] < 0)
      return failure(); // the memory limit leaves no rank anything to do
    append(Choice(choice[winner[1]]));
  }
  return std::move(schedule);
}

FailureOr<GeneratedSchedule> mlir::pp::sched::buildGreedySchedule(
    const ScheduleProblem &problem, const ActionCosts &costs,
    ArrayRef<int64_t> stageRank, const GreedyPolicy &policy) {
  return GreedyListScheduler(problem, costs, stageRank, policy).build();
}

/// Without a cap, each rank may hold as many forwards as there are stages
/// (of its largest activation), as 1F1B's first rank does.
static SmallVector<double> defaultLimits(const ScheduleProblem &problem,
                                         const ActionCosts &costs) {
  double largest = 0.0;
  for (int64_t s = 0; s < problem.numStages; ++s)
    largest = std::max(largest, costs.getLargestMemoryDelta(Phase::forward, s));
  SmallVector<double> limits = problem.getMemoryCaps();
  for (double &limit : limits)
    limit = std::min(limit, problem.numStages * largest);
  return limits;
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateGreedy(const ScheduleProblem &in) {
  ScheduleProblem problem = in;
  problem.cost = problem.getCostOrUnit();
  ActionCosts costs(*problem.cost);
  GreedyPolicy policy{defaultLimits(problem, costs), false};
  // The fastest over the standard placements.
  std::optional<GeneratedSchedule> best;
  Evaluation bestEval;
  for (ArrayRef<int64_t> placement : standardPlacements(problem)) {
    FailureOr<GeneratedSchedule> schedule =
        buildGreedySchedule(problem, costs, placement, policy);
    if (failed(schedule))
      continue;
    ScheduleEvaluator evaluator(problem, costs, placement);
    FailureOr<Evaluation> eval = evaluator.evaluate(*schedule);
    if (succeeded(eval) && (!best || eval->makespan < bestEval.makespan)) {
      best = std::move(*schedule);
      bestEval = *eval;
    }
  }
  if (!best)
    return ScheduleError() << "greedy: the memory cap leaves a rank unable to "
                              "run a forward";
  return std::move(*best);
}
