//===- Auto.cpp - search for the fastest schedule under a memory cap ------===//
//
// `auto` evaluates every built-in schedule that fits the problem and a family
// of greedy list schedules (split backward, each rank's in-flight memory
// bounded, weight gradients filling idle time), all under the problem's
// costs, and keeps the fastest one within the memory caps. Then a branch and
// bound over all schedules on the standard placements and those the
// built-ins use looks for a faster one: on small problems it finishes and
// proves the result optimal. It reports the lower bound it proves and its
// gap to it.
//
// `exact` runs that search alone, from no incumbent, on the standard
// placements: a diagnostic knob that tests the search against an oracle
// without the other candidates hiding its mistakes.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleCost.h"
#include "pp/Dialect/PP/Transforms/ExactScheduleSearch.h"
#include "pp/Dialect/PP/Transforms/ScheduleGenerators.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace mlir::pp;

namespace {

/// How a compute-only schedule performs under the problem's costs.
struct Evaluation {
  double makespan = std::numeric_limits<double>::infinity();
  SmallVector<double> rankPeak; // the most activation memory each rank holds

  /// The most activation memory any rank holds.
  double peak() const {
    return rankPeak.empty() ? 0.0 : *llvm::max_element(rankPeak);
  }

  /// Whether no rank holds more than its cap in `problem`.
  bool fits(const ScheduleProblem &problem) const {
    for (auto [rank, held] : llvm::enumerate(rankPeak))
      if (held > problem.getMemoryCap(rank) + 1e-9)
        return false;
    return true;
  }
};

/// Times the actions of `schedule`: each rank runs its list in order, an
/// action starts when its rank is free and its inputs are there (a
/// transfer's time later across ranks). Fails if the ranks wait for each
/// other forever.
class ScheduleEvaluator {
public:
  ScheduleEvaluator(const ScheduleProblem &problem, const ScheduleCosts &costs,
                    ArrayRef<int64_t> stageRank)
      : problem(problem), costs(costs), stageRank(stageRank) {}

  /// Forgets every recorded action.
  void reset() {
    int64_t size = problem.numStages * problem.numMicrobatches;
    forwardEnd.assign(size, -1.0);
    backwardEnd.assign(size, -1.0);
  }

  FailureOr<Evaluation> evaluate(const GeneratedSchedule &schedule) {
    reset();
    SmallVector<size_t> next(schedule.ranks.size(), 0);
    SmallVector<double> clock(schedule.ranks.size(), 0.0),
        held(schedule.ranks.size(), 0.0);
    Evaluation result;
    result.makespan = 0.0;
    result.rankPeak.assign(schedule.ranks.size(), 0.0);
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto [rank, actions] : llvm::enumerate(schedule.ranks)) {
        for (; next[rank] < actions.size(); ++next[rank]) {
          const ScheduledAction &a = actions[next[rank]];
          std::optional<double> ready = readyTime(a);
          if (!ready)
            break;
          double end =
              std::max(clock[rank], *ready) + costs.duration(a.phase, a.stage);
          clock[rank] = end;
          record(a, end);
          held[rank] += costs.memoryDelta(a.phase, a.stage);
          result.rankPeak[rank] = std::max(result.rankPeak[rank], held[rank]);
          result.makespan = std::max(result.makespan, end);
          progress = true;
        }
      }
    }
    for (auto [rank, actions] : llvm::enumerate(schedule.ranks))
      if (next[rank] != actions.size())
        return failure();
    return result;
  }

  /// When the inputs of `a` are available, if they are known yet.
  std::optional<double> readyTime(const ScheduledAction &a) const {
    int64_t s = a.stage, m = problem.numMicrobatches;
    auto arrival = [&](int64_t from, double time) {
      return stageRank[from] == stageRank[s] ? time
                                             : time + costs.transferTime();
    };
    switch (a.phase) {
    case Phase::forward:
      if (s == 0)
        return 0.0;
      if (forwardEnd[(s - 1) * m + a.mb] < 0)
        return std::nullopt;
      return arrival(s - 1, forwardEnd[(s - 1) * m + a.mb]);
    case Phase::backward:
    case Phase::backward_input: {
      double own = forwardEnd[s * m + a.mb];
      if (own < 0)
        return std::nullopt;
      if (s == problem.numStages - 1)
        return own;
      double next = backwardEnd[(s + 1) * m + a.mb];
      if (next < 0)
        return std::nullopt;
      return std::max(own, arrival(s + 1, next));
    }
    case Phase::backward_weight:
      if (backwardEnd[s * m + a.mb] < 0)
        return std::nullopt;
      return backwardEnd[s * m + a.mb];
    }
    return std::nullopt;
  }

  void record(const ScheduledAction &a, double end) {
    int64_t index = a.stage * problem.numMicrobatches + a.mb;
    if (a.phase == Phase::forward)
      forwardEnd[index] = end;
    else if (a.phase != Phase::backward_weight)
      backwardEnd[index] = end;
  }

private:
  const ScheduleProblem &problem;
  const ScheduleCosts &costs;
  ArrayRef<int64_t> stageRank;
  std::vector<double> forwardEnd, backwardEnd;
};

/// A list schedule: ranks take the next action whose inputs are there,
/// backwards first, then forwards (of later stages first, within their
/// rank's `memoryLimit`), then deferred weight gradients, which otherwise
/// wait for idle time unless `eagerWeights`.
class GreedyScheduler {
public:
  GreedyScheduler(const ScheduleProblem &problem, const ScheduleCosts &costs,
                  ArrayRef<int64_t> stageRank)
      : problem(problem), costs(costs), stageRank(stageRank),
        evaluator(problem, costs, stageRank) {}

  FailureOr<GeneratedSchedule> build(ArrayRef<double> memoryLimit,
                                     bool eagerWeights) {
    int64_t stages = problem.numStages, m = problem.numMicrobatches;
    evaluator.reset();
    GeneratedSchedule schedule{SmallVector<int64_t>(stageRank), {}, ""};
    schedule.ranks.resize(problem.numRanks);
    SmallVector<double> clock(problem.numRanks, 0.0),
        held(problem.numRanks, 0.0);
    // Each stage runs its F's, B's and W's in micro-batch order: the
    // earliest-ready one of each phase is always the next one.
    SmallVector<int64_t> nextForward(stages, 0), nextBackward(stages, 0),
        nextWeight(stages, 0);
    int64_t remaining = stages * m * 3;
    while (remaining > 0) {
      // The action that can start first anywhere, by priority on ties.
      struct Choice {
        int64_t rank = -1;
        ScheduledAction action{};
        double start = std::numeric_limits<double>::infinity();
        int priority = 0;
      } best;
      auto consider = [&](int64_t rank, ScheduledAction a, int priority) {
        std::optional<double> ready = evaluator.readyTime(a);
        if (!ready)
          return;
        double start = std::max(clock[rank], *ready);
        if (start < best.start - 1e-12 ||
            (start < best.start + 1e-12 && priority < best.priority))
          best = {rank, a, start, priority};
      };
      for (int64_t s = stages - 1; s >= 0; --s) {
        int64_t rank = stageRank[s];
        if (nextBackward[s] < m)
          consider(rank, {Phase::backward_input, s, nextBackward[s]}, 0);
        int64_t mb = nextForward[s];
        if (mb < m && held[rank] + costs.memoryDelta(Phase::forward, s) <=
                          memoryLimit[rank] + 1e-9)
          consider(rank, {Phase::forward, s, mb}, 1 + int(stages - 1 - s));
        // Unless eager, weight gradients wait for idle time: any other
        // action that starts no later goes first.
        if (nextWeight[s] < nextBackward[s])
          consider(rank, {Phase::backward_weight, s, nextWeight[s]},
                   eagerWeights ? -1 : int(stages) + 1);
      }
      if (best.rank < 0)
        return failure(); // the memory limit leaves no rank anything to do
      schedule.ranks[best.rank].push_back(best.action);
      double end =
          best.start + costs.duration(best.action.phase, best.action.stage);
      clock[best.rank] = end;
      held[best.rank] +=
          costs.memoryDelta(best.action.phase, best.action.stage);
      evaluator.record(best.action, end);
      int64_t s = best.action.stage;
      switch (best.action.phase) {
      case Phase::forward:
        ++nextForward[s];
        break;
      case Phase::backward_input:
        ++nextBackward[s];
        break;
      case Phase::backward_weight:
        ++nextWeight[s];
        break;
      case Phase::backward:
        break;
      }
      --remaining;
    }
    return schedule;
  }

private:
  const ScheduleProblem &problem;
  const ScheduleCosts &costs;
  ArrayRef<int64_t> stageRank;
  ScheduleEvaluator evaluator;
};

} // namespace

/// How many states the exact search may expand per placement before `auto`
/// settles for the best schedule found so far.
static constexpr int64_t kSearchBudget = 100000;
/// Larger problems are not searched: the search recurses once per action.
static constexpr int64_t kSearchMaxActions = 3000;

/// The placements searched whichever built-ins fit: one stage per rank, or
/// looped and (for two stages per rank) V-shaped.
static SmallVector<SmallVector<int64_t>>
standardPlacements(const ScheduleProblem &problem) {
  if (problem.numStages == problem.numRanks)
    return {identityPlacement(problem)};
  SmallVector<SmallVector<int64_t>> placements = {loopedPlacement(problem)};
  if (problem.numStages == 2 * problem.numRanks && problem.numRanks > 1)
    placements.push_back(vShapePlacement(problem));
  return placements;
}

/// Whether the exact search may run: it recurses once per action.
static bool searchable(const ScheduleProblem &problem) {
  return 3 * problem.numStages * problem.numMicrobatches <= kSearchMaxActions;
}

/// Searches every schedule on each of `placements` for one faster than
/// `incumbent()` and passes those found to `offer`; returns whether every
/// search finished within its budget.
static bool
searchPlacements(const ScheduleProblem &problem, const ScheduleCosts &costs,
                 ArrayRef<SmallVector<int64_t>> placements,
                 llvm::function_ref<void(GeneratedSchedule, StringRef)> offer,
                 llvm::function_ref<double()> incumbent) {
  bool exhaustive = true;
  for (ArrayRef<int64_t> placement : placements) {
    ExactSearchResult found = searchFastestSchedule(problem, costs, placement,
                                                    incumbent(), kSearchBudget);
    exhaustive &= found.exhaustive;
    if (found.schedule)
      offer(std::move(*found.schedule),
            found.exhaustive ? "exhaustive search" : "branch and bound");
  }
  return exhaustive;
}

/// Memory amounts per rank as the remarks print them: one number when all
/// ranks have the same, else a list.
static std::string formatPerRank(ArrayRef<double> amounts) {
  auto format = [](double x) {
    return llvm::formatv("{0}", llvm::format("%g", x)).str();
  };
  if (llvm::all_equal(amounts))
    return format(amounts.front());
  return "[" + llvm::join(llvm::map_range(amounts, format), ", ") + "]";
}

/// A bound no schedule beats: each rank must do all of its work, and cannot
/// start before the first micro-batch's forward reaches its first stage;
/// one micro-batch's forwards and backwards form a chain through all stages.
static double lowerBound(const ScheduleProblem &problem,
                         const ScheduleCosts &costs,
                         ArrayRef<int64_t> stageRank) {
  int64_t stages = problem.numStages, m = problem.numMicrobatches;
  SmallVector<double> work(problem.numRanks, 0.0);
  SmallVector<double> head(problem.numRanks,
                           std::numeric_limits<double>::infinity());
  double reach = 0.0, chain = 0.0;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t r = stageRank[s];
    head[r] = std::min(head[r], reach);
    work[r] += m * costs.duration(Phase::backward, s) +
               m * costs.duration(Phase::forward, s);
    reach +=
        costs.duration(Phase::forward, s) +
        (s + 1 < stages && stageRank[s + 1] != r ? costs.transferTime() : 0.0);
    chain += costs.duration(Phase::forward, s) +
             costs.duration(Phase::backward_input, s);
  }
  chain += costs.duration(Phase::backward_weight, 0) +
           2 * (stages - 1) * costs.transferTime();
  double bound = chain;
  for (int64_t r = 0; r < problem.numRanks; ++r)
    bound = std::max(bound, head[r] + work[r]);
  return bound;
}

FailureOr<GeneratedSchedule> mlir::pp::generateAuto(const ScheduleProblem &in,
                                                    ScheduleErrorFn emitError) {
  ScheduleProblem problem = in;
  MLIRContext *context = problem.context;
  if (!problem.cost)
    problem.cost = CostAttr::getUnit(context, problem.numStages);
  ScheduleCosts costs(problem.cost);
  SmallVector<double> caps = problem.getMemoryCaps();

  // Candidates: every built-in that can schedule the problem, as it is and
  // with split backwards, and greedy schedules on the standard placements
  // and those the built-ins use.
  std::optional<GeneratedSchedule> best;
  Evaluation bestEval;
  std::string bestName;
  SmallVector<SmallVector<int64_t>> placements = standardPlacements(problem);
  auto offer = [&](GeneratedSchedule candidate, StringRef name) {
    ScheduleEvaluator evaluator(problem, costs, candidate.stageRank);
    FailureOr<Evaluation> eval = evaluator.evaluate(candidate);
    if (failed(eval) || !eval->fits(problem))
      return;
    if (!best || eval->makespan < bestEval.makespan - 1e-9) {
      best = std::move(candidate);
      bestEval = *eval;
      bestName = name.str();
    }
  };
  for (const ScheduleGenerator &generator : getScheduleGenerators()) {
    if (generator.name == "auto" || generator.name == "exact")
      continue;
    for (bool split : {false, true}) {
      ScheduleProblem variant = problem;
      variant.splitBackward = split;
      // Problems a generator rejects are not candidates: silence it.
      ScopedDiagnosticHandler quiet(context,
                                    [](Diagnostic &) { return success(); });
      FailureOr<GeneratedSchedule> candidate =
          generator.generate(variant, [&] { return emitError(); });
      if (failed(candidate))
        continue;
      if (!llvm::is_contained(placements, candidate->stageRank))
        placements.push_back(candidate->stageRank);
      offer(std::move(*candidate),
            split ? (generator.name + " (split)").str() : generator.name.str());
    }
  }
  double largest = 0.0;
  for (int64_t s = 0; s < problem.numStages; ++s)
    largest = std::max(largest, costs.memoryDelta(Phase::forward, s));
  for (ArrayRef<int64_t> placement : placements) {
    GreedyScheduler greedy(problem, costs, placement);
    int64_t perRank = problem.numStages / problem.numRanks;
    for (int64_t inFlight = perRank; inFlight <= 2 * problem.numStages;
         ++inFlight)
      for (bool eager : {false, true}) {
        SmallVector<double> limit = llvm::map_to_vector(caps, [&](double cap) {
          return std::min(cap, inFlight * largest);
        });
        FailureOr<GeneratedSchedule> candidate = greedy.build(limit, eager);
        if (succeeded(candidate))
          offer(std::move(*candidate),
                "greedy, memory limit " + formatPerRank(limit));
      }
  }
  // Search every schedule on those placements for a faster one; where the
  // search finishes everywhere, the fastest found is optimal.
  bool proven = searchable(problem) && !placements.empty();
  if (searchable(problem))
    proven &= searchPlacements(problem, costs, placements, offer, [&] {
      return best ? bestEval.makespan : std::numeric_limits<double>::infinity();
    });
  if (!best)
    return emitError() << "auto found no schedule within the memory cap of "
                       << formatPerRank(caps)
                       << (proven ? " (none exists: exhaustive search)" : "");
  double bound =
      proven ? bestEval.makespan : lowerBound(problem, costs, best->stageRank);
  best->note = llvm::formatv(
      "auto: makespan {0} ({1}), peak activation memory {2}; {3} {4}, gap "
      "{5:P1}",
      llvm::format("%g", bestEval.makespan), bestName,
      llvm::format("%g", bestEval.peak()),
      proven ? "proven optimal by exhaustive search, lower bound"
             : "lower bound",
      llvm::format("%g", bound),
      bound > 0 ? (bestEval.makespan - bound) / bound : 0.0);
  return std::move(*best);
}

FailureOr<GeneratedSchedule>
mlir::pp::generateExact(const ScheduleProblem &in, ScheduleErrorFn emitError) {
  ScheduleProblem problem = in;
  if (!problem.cost)
    problem.cost = CostAttr::getUnit(problem.context, problem.numStages);
  ScheduleCosts costs(problem.cost);
  if (!searchable(problem))
    return emitError() << "exact search is limited to " << kSearchMaxActions
                       << " actions; this problem has "
                       << 3 * problem.numStages * problem.numMicrobatches;
  std::optional<GeneratedSchedule> best;
  Evaluation bestEval;
  auto offer = [&](GeneratedSchedule candidate, StringRef) {
    ScheduleEvaluator evaluator(problem, costs, candidate.stageRank);
    FailureOr<Evaluation> eval = evaluator.evaluate(candidate);
    if (succeeded(eval) &&
        (!best || eval->makespan < bestEval.makespan - 1e-9)) {
      best = std::move(candidate);
      bestEval = *eval;
    }
  };
  bool exhaustive =
      searchPlacements(problem, costs, standardPlacements(problem), offer, [&] {
        return best ? bestEval.makespan
                    : std::numeric_limits<double>::infinity();
      });
  if (!exhaustive)
    return emitError() << "exact search did not finish within " << kSearchBudget
                       << " states per placement";
  if (!best)
    return emitError() << "no schedule within the memory cap of "
                       << formatPerRank(problem.getMemoryCaps())
                       << " (exhaustive search)";
  best->note = llvm::formatv(
      "exact: makespan {0}, peak activation memory {1}; proven optimal by "
      "exhaustive search",
      llvm::format("%g", bestEval.makespan),
      llvm::format("%g", bestEval.peak()));
  return std::move(*best);
}
