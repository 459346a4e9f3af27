//===- LocalScheduleSearch.cpp - improve a schedule by small moves --------===//
//
// Where a rank waits before an action, one of the next few actions of that
// rank may be able to run in the gap (a weight gradient most often, or an
// input gradient that arrived first), or the action it waits for may go
// after a few of them; the search tries those moves, largest gaps first,
// and keeps the first that makes the schedule faster.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/LocalScheduleSearch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// How many places an action may move earlier in one move.
static constexpr size_t kWindow = 6;

namespace {

/// Action `from` of `rank` moves to place `to`, about a gap of `idle` time.
struct Move {
  int64_t rank;
  size_t from, to;
  double idle;
};

class LocalScheduleSearch {
public:
  LocalScheduleSearch(const ScheduleProblem &problem, const ActionCosts &costs,
                      GeneratedSchedule &schedule, Evaluation &eval,
                      int64_t maxEvaluations)
      : problem(problem), costs(costs), schedule(schedule), eval(eval),
        evaluator(problem, costs, schedule.stageRank), left(maxEvaluations) {}

  int64_t run();

private:
  SmallVector<Move> findMoves();
  bool tryMove(const Move &move);

  const ScheduleProblem &problem;
  const ActionCosts &costs;
  GeneratedSchedule &schedule;
  Evaluation &eval;
  ScheduleEvaluator evaluator;
  int64_t left;
};

} // namespace

/// Whether moving action `from` to place `to` of `actions` would pass an
/// action of the same phase and stage: that only swaps micro-batches that
/// cost the same.
static bool overtakes(ArrayRef<ScheduledAction> actions, size_t from,
                      size_t to) {
  size_t lo = std::min(from, to), hi = std::max(from, to);
  return llvm::any_of(
      actions.slice(lo, hi - lo + 1), [&](const ScheduledAction &a) {
        return &a != &actions[from] && a.phase == actions[from].phase &&
               a.stage == actions[from].stage;
      });
}

SmallVector<Move> LocalScheduleSearch::findMoves() {
  SmallVector<SmallVector<double>> starts;
  --left;
  if (failed(evaluator.evaluate(schedule, &starts)))
    return {};
  SmallVector<Move> moves;
  for (auto [rank, actions] : llvm::enumerate(schedule.ranks)) {
    double free = 0.0;
    for (size_t to = 0; to < actions.size(); ++to) {
      double idle = starts[rank][to] - free;
      free =
          starts[rank][to] +
          costs.duration(actions[to].phase, actions[to].stage, actions[to].mb);
      if (idle <= 1e-9)
        continue;
      size_t end = std::min(actions.size(), to + 1 + kWindow);
      // One of the next actions runs in the gap...
      for (size_t from = to + 1; from < end; ++from)
        if (!overtakes(actions, from, to))
          moves.push_back({int64_t(rank), from, to, idle});
      // ... or the one that waits goes after a few of them.
      for (size_t past = to + 2; past < end; ++past)
        if (!overtakes(actions, to, past))
          moves.push_back({int64_t(rank), to, past, idle});
    }
  }
  llvm::stable_sort(
      moves, [](const Move &a, const Move &b) { return a.idle > b.idle; });
  return moves;
}

bool LocalScheduleSearch::tryMove(const Move &move) {
  auto &actions = schedule.ranks[move.rank];
  auto at = [&](size_t i) { return actions.begin() + i; };
  // Action `from` goes to place `to`; then it goes back.
  auto shift = [&](size_t from, size_t to) {
    if (from > to)
      std::rotate(at(to), at(from), at(from + 1));
    else
      std::rotate(at(from), at(from + 1), at(to + 1));
  };
  shift(move.from, move.to);
  --left;
  FailureOr<Evaluation> moved = evaluator.evaluate(schedule);
  if (succeeded(moved) && moved->fits(problem) && moved->betterThan(eval)) {
    eval = std::move(*moved);
    return true;
  }
  shift(move.to, move.from);
  return false;
}

int64_t LocalScheduleSearch::run() {
  int64_t kept = 0;
  while (left > 0) {
    bool improved = false;
    for (const Move &move : findMoves()) {
      if (left <= 0)
        break;
      if ((improved = tryMove(move)))
        break;
    }
    if (!improved)
      break;
    ++kept;
  }
  return kept;
}

int64_t mlir::pp::sched::improveSchedule(const ScheduleProblem &problem,
                                         const ActionCosts &costs,
                                         GeneratedSchedule &schedule,
                                         Evaluation &eval,
                                         int64_t maxEvaluations) {
  return LocalScheduleSearch(problem, costs, schedule, eval, maxEvaluations)
      .run();
}
