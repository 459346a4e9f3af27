//===- LocalScheduleSearch.cpp - improve a schedule by small moves --------===//
//
// Where a rank waits before an action, one of the next few actions of that
// rank may be able to run in the gap (a weight gradient most often, or an
// input gradient that arrived first); the search tries them, largest gaps
// first, and keeps the first that makes the schedule faster.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/LocalScheduleSearch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pp;

/// How many places an action may move earlier in one move.
static constexpr size_t kWindow = 6;

namespace {

/// Action `from` of `rank` moves to place `to` (earlier), into `idle` time.
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

/// Whether `a` and `b` are the same phase of the same stage: swapping them
/// would only swap micro-batches that cost the same.
static bool sameSequence(const ScheduledAction &a, const ScheduledAction &b) {
  return a.phase == b.phase && a.stage == b.stage;
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
      free = starts[rank][to] +
             costs.duration(actions[to].phase, actions[to].stage);
      if (idle <= 1e-9)
        continue;
      for (size_t from = to + 1;
           from < std::min(actions.size(), to + 1 + kWindow); ++from) {
        if (llvm::any_of(ArrayRef(actions).slice(to, from - to),
                         [&](const ScheduledAction &a) {
                           return sameSequence(a, actions[from]);
                         }))
          continue;
        moves.push_back({int64_t(rank), from, to, idle});
      }
    }
  }
  llvm::stable_sort(
      moves, [](const Move &a, const Move &b) { return a.idle > b.idle; });
  return moves;
}

bool LocalScheduleSearch::tryMove(const Move &move) {
  auto &actions = schedule.ranks[move.rank];
  auto at = [&](size_t i) { return actions.begin() + i; };
  std::rotate(at(move.to), at(move.from), at(move.from + 1));
  --left;
  FailureOr<Evaluation> moved = evaluator.evaluate(schedule);
  if (succeeded(moved) && moved->fits(problem) && moved->betterThan(eval)) {
    eval = std::move(*moved);
    return true;
  }
  std::rotate(at(move.to), at(move.to + 1), at(move.from + 1));
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

int64_t mlir::pp::improveSchedule(const ScheduleProblem &problem,
                                  const ActionCosts &costs,
                                  GeneratedSchedule &schedule, Evaluation &eval,
                                  int64_t maxEvaluations) {
  return LocalScheduleSearch(problem, costs, schedule, eval, maxEvaluations)
      .run();
}
