//===- Auto.cpp - search for the fastest schedule under a memory cap ------===//
//
// `auto` evaluates every built-in schedule that fits the problem, the
// Zero Bubble heuristic's variants (ZeroBubbleGreedy.h) and a family of
// greedy list schedules (GreedySchedule.h), all under the problem's
// costs, and keeps the fastest one within the memory caps; a local search
// (LocalScheduleSearch.h) improves it, and then a branch and bound over all
// schedules on the standard placements and those the built-ins use looks
// for a faster one: on small problems it finishes and proves the result
// optimal. It stops as soon as a schedule meets the lower bound it proves,
// and reports that bound and its gap to it. The greedy family and the local
// search have budgets of work, so that large problems stay fast.
//
// `exact` runs that search alone, from no incumbent, on the standard
// placements: a diagnostic knob that tests the search against an oracle
// without the other candidates hiding its mistakes.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ExactScheduleSearch.h"
#include "pp/Scheduling/GreedySchedule.h"
#include "pp/Scheduling/LocalScheduleSearch.h"
#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"
#include "pp/Scheduling/ZeroBubbleGreedy.h"

#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// How many states the exact search may expand per placement before `auto`
/// settles for the best schedule found so far.
static constexpr int64_t kSearchBudget = 100000;
/// Larger problems are not searched: the search recurses once per action.
static constexpr int64_t kSearchMaxActions = 3000;

/// How many actions the local search may time in all (a fraction of a
/// second), and how many timings it may run at most.
static constexpr int64_t kLocalSearchWork = 10000000;
static constexpr int64_t kLocalSearchMaxEvaluations = 4000;
/// How many times a compute-only run timing a candidate in a rendezvous
/// program costs.
static constexpr int64_t kRendezvousWork = 8;
/// Past this many compute actions, a rendezvous problem gets two greedy
/// candidates and no local search, so that auto stays within about three
/// times 1f1b's generation time (p = 64, m = 1024 has 196608).
static constexpr int64_t kLargeProgramActions = 100000;
/// How many actions the greedy family may schedule in all (a fraction of a
/// second); at least four greedy schedules are built.
static constexpr int64_t kGreedyWork = 2500000;
/// Under rendezvous semantics, the greedy family also charges each compute
/// action these multiples of the transfer time per transfer (see
/// chargeTransfers).
static constexpr double kTransferCharges[] = {0.5, 1.0, 2.0};
/// How many consecutive in-flight counts the greedy family tries below the
/// largest useful one before it thins out.
static constexpr size_t kGreedyNear = 12;

/// Whether the exact search may run: it recurses once per action.
static bool searchable(const ScheduleProblem &problem) {
  return 3 * problem.numStages * problem.numMicrobatches <= kSearchMaxActions;
}

/// Searches every schedule on each of `placements` for one faster than
/// `incumbent()` and passes those found to `offer`; returns whether every
/// search finished within its budget.
static bool
searchPlacements(const ScheduleProblem &problem, const ActionCosts &costs,
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
  if (llvm::all_equal(amounts))
    return formatQuantity(amounts.front());
  return "[" + llvm::join(llvm::map_range(amounts, formatQuantity), ", ") + "]";
}

/// `value` followed by `unit` where the costs have one ("0.5 s").
static std::string withUnit(std::string value, StringRef unit) {
  return unit.empty() ? value : value + " " + unit.str();
}

/// A bound no schedule on `stageRank` beats: each rank must do all of its
/// work, and cannot start before the first micro-batch's forward reaches its
/// first stage; one micro-batch's forwards and backwards form a chain
/// through all stages, with a transfer wherever it changes ranks.
static double lowerBound(const ScheduleProblem &problem,
                         const ActionCosts &costs,
                         ArrayRef<int64_t> stageRank) {
  int64_t stages = problem.numStages, m = problem.numMicrobatches;
  int64_t kinds = costs.isUniform() ? 1 : m;
  SmallVector<double> work(problem.numRanks, 0.0);
  SmallVector<double> head(problem.numRanks,
                           std::numeric_limits<double>::infinity());
  // Per micro-batch (one when all cost alike): when its forward reaches
  // the stage, and its chain of forwards and input gradients.
  SmallVector<double> reach(kinds, 0.0), chain(kinds, 0.0);
  for (int64_t s = 0; s < stages; ++s) {
    int64_t r = stageRank[s];
    head[r] = std::min(head[r], *llvm::min_element(reach));
    work[r] += costs.getTotalDuration(Phase::backward, s, m) +
               costs.getTotalDuration(Phase::forward, s, m);
    double hop =
        s + 1 < stages && stageRank[s + 1] != r ? costs.transferTime() : 0.0;
    for (int64_t mb = 0; mb < kinds; ++mb) {
      reach[mb] += costs.duration(Phase::forward, s, mb) + hop;
      chain[mb] += costs.duration(Phase::forward, s, mb) +
                   costs.duration(Phase::backward_input, s, mb) + 2 * hop;
    }
  }
  double bound = 0.0;
  for (int64_t mb = 0; mb < kinds; ++mb)
    bound = std::max(bound,
                     chain[mb] + costs.duration(Phase::backward_weight, 0, mb));
  for (int64_t r = 0; r < problem.numRanks; ++r)
    bound = std::max(bound, head[r] + work[r]);
  return bound;
}

/// The in-flight counts (in micro-batches of the largest activation) of the
/// greedy candidates: from `most` down, every count near it, where the
/// fastest usually lie, then halving to `least`.
static SmallVector<int64_t> greedyInFlight(int64_t least, int64_t most) {
  SmallVector<int64_t> counts;
  for (int64_t n = most; n >= least;
       n = counts.size() < kGreedyNear ? n - 1 : std::min(n - 1, n / 2))
    counts.push_back(n);
  if (counts.back() != least)
    counts.push_back(least);
  return counts;
}

namespace {

/// `auto`'s candidates, the fastest so far within the caps, and the bound
/// at which it stops looking.
class AutoSearch {
public:
  AutoSearch(const ScheduleProblem &problem)
      : problem(problem), costs(problem.getCostOrUnit()),
        placements(standardPlacements(problem)) {}

  /// Runs every stage of the search until one meets the bound.
  void run();
  /// The schedule found with its remark, or an error if none fits the caps.
  llvm::Expected<GeneratedSchedule> finish();

private:
  void offer(GeneratedSchedule candidate, StringRef name);
  void offerBuiltins();
  void offerZeroBubble();
  void offerGreedy();
  void improveBest();
  void searchExact();
  /// Whether the best schedule meets the lower bound (within a relative
  /// 1e-9): nothing can beat it.
  bool meetsBound() const {
    return best && bestEval.makespan <= bound * (1 + 1e-9) + 1e-12;
  }
  int64_t numActions() const {
    return 3 * problem.numStages * problem.numMicrobatches;
  }
  /// Whether the problem is so large that timing its rendezvous programs
  /// limits the search to the built-ins and two greedy schedules.
  bool largeProgram() const {
    return problem.semantics == TransferSemantics::rendezvous &&
           numActions() > kLargeProgramActions;
  }
  /// What timing one candidate costs, in actions: a rendezvous program has
  /// its transfers, and is ordered and run up to three times.
  int64_t evaluationWork() const {
    return problem.semantics == TransferSemantics::rendezvous
               ? kRendezvousWork * numActions()
               : numActions();
  }

  const ScheduleProblem &problem;
  ActionCosts costs;
  /// The standard placements and those the built-ins use.
  SmallVector<SmallVector<int64_t>> placements;
  /// The least lower bound over `placements`.
  double bound = std::numeric_limits<double>::infinity();
  std::optional<GeneratedSchedule> best;
  Evaluation bestEval;
  std::string bestName;
  int64_t candidates = 0;
  /// Whether the exact search finished on every placement, whether that
  /// proves the best schedule optimal (it searches with async transfers),
  /// and whether the search stopped before its last step because a schedule
  /// met the bound.
  bool exhaustive = false, proven = false, stopped = false;
};

} // namespace

void AutoSearch::offer(GeneratedSchedule candidate, StringRef name) {
  ++candidates;
  ScheduleEvaluator evaluator(problem, costs, candidate.stageRank);
  FailureOr<Evaluation> eval = evaluator.evaluate(candidate);
  if (failed(eval) || !eval->fits(problem))
    return;
  if (!best || eval->makespan < bestEval.makespan - 1e-9) {
    best = std::move(candidate);
    bestEval = *eval;
    bestName = name.str();
  }
}

/// Whether two schedules place the stages and order every rank's actions
/// alike.
static bool sameSchedule(const GeneratedSchedule &a,
                         const GeneratedSchedule &b) {
  auto sameAction = [](const ScheduledAction &x, const ScheduledAction &y) {
    return x.phase == y.phase && x.stage == y.stage && x.mb == y.mb &&
           x.part == y.part;
  };
  return a.stageRank == b.stageRank &&
         llvm::equal(a.ranks, b.ranks, [&](const auto &x, const auto &y) {
           return llvm::equal(x, y, sameAction);
         });
}

/// Every built-in that can schedule the problem, as it is and with split
/// backwards (once where it splits them either way: timing a large program
/// is what auto spends its time on).
void AutoSearch::offerBuiltins() {
  for (const ScheduleGenerator &generator : getScheduleGenerators()) {
    if (generator.name == "auto" || generator.name == "exact")
      continue;
    std::optional<GeneratedSchedule> fused;
    for (bool split : {false, true}) {
      ScheduleProblem variant = problem;
      variant.splitBackward = split;
      // Problems a generator rejects are not candidates.
      llvm::Expected<GeneratedSchedule> candidate = generator.generate(variant);
      if (!candidate) {
        llvm::consumeError(candidate.takeError());
        continue;
      }
      // A delayed update (pipedream-2bw) trains differently: not auto's
      // to choose.
      if (candidate->weightVersions != 1)
        continue;
      if (!llvm::is_contained(placements, candidate->stageRank))
        placements.push_back(candidate->stageRank);
      if (!split)
        fused = *candidate;
      else if (fused && sameSchedule(*fused, *candidate))
        continue;
      offer(std::move(*candidate),
            split ? (generator.name + " (split)").str() : generator.name.str());
    }
  }
}

/// Costs under which a list schedule leaves room for transfers: each
/// forward and input gradient also takes `factor` times the transfer time
/// per transfer it takes part in. Under rendezvous semantics a transfer
/// holds both of its ranks, which the list schedule does not see otherwise.
static ActionCosts chargeTransfers(const ScheduleProblem &problem,
                                   ArrayRef<int64_t> stageRank, double factor) {
  StageCosts cost = problem.getCostOrUnit();
  double charge = factor * cost.transfer;
  int64_t last = problem.numStages - 1;
  for (int64_t s = 0; s <= last; ++s) {
    int transfers = (s > 0 && stageRank[s - 1] != stageRank[s]) +
                    (s < last && stageRank[s + 1] != stageRank[s]);
    cost.forward[s] += charge * transfers;
    cost.backwardInput[s] += charge * transfers;
    MicrobatchCosts &table = cost.perMicrobatch;
    for (SmallVector<double> *field : {&table.forward, &table.backwardInput})
      for (int64_t mb = 0; mb < table.numMicrobatches && !field->empty(); ++mb)
        (*field)[s * table.numMicrobatches + mb] += charge * transfers;
  }
  return ActionCosts(cost);
}

/// Greedy list schedules on every placement, for a range of in-flight
/// memory limits within the caps, with weight gradients in idle time or
/// as early as they can run, or forwards before input gradients; under
/// rendezvous semantics also with the transfers charged to the compute actions
/// (transfer-aware).
void AutoSearch::offerGreedy() {
  SmallVector<double> caps = problem.getMemoryCaps();
  double largest = 0.0;
  for (int64_t s = 0; s < problem.numStages; ++s)
    largest = std::max(largest, costs.getLargestMemoryDelta(Phase::forward, s));
  // Past the count whose limit reaches every cap, the limits are the caps.
  int64_t least = problem.numStages / problem.numRanks;
  int64_t most = 2 * problem.numStages;
  double loosest = *llvm::max_element(caps);
  if (largest > 0 && loosest < most * largest)
    most = std::max(least, int64_t(std::ceil(loosest / largest - 1e-9)));
  SmallVector<double> charges = {0.0};
  if (problem.semantics == TransferSemantics::rendezvous &&
      costs.transferTime() > 0)
    charges.append(std::begin(kTransferCharges), std::end(kTransferCharges));
  // Per placement, the costs of each charge.
  std::vector<SmallVector<ActionCosts>> charged;
  for (ArrayRef<int64_t> placement : placements)
    charged.push_back(llvm::map_to_vector(charges, [&](double factor) {
      return chargeTransfers(problem, placement, factor);
    }));
  int64_t builds =
      std::max<int64_t>(kGreedyWork / evaluationWork(), largeProgram() ? 2 : 4);
  for (int64_t inFlight : greedyInFlight(least, most)) {
    SmallVector<double> limit = llvm::map_to_vector(
        caps, [&](double cap) { return std::min(cap, inFlight * largest); });
    for (auto [placement, placementCosts] : llvm::zip(placements, charged))
      for (auto [factor, greedyCosts] : llvm::zip(charges, placementCosts))
        for (auto [eager, forwardsFirst] :
             {std::pair(false, false), std::pair(true, false),
              std::pair(false, true)}) {
          if (builds-- == 0)
            return;
          FailureOr<GeneratedSchedule> candidate =
              buildGreedySchedule(problem, greedyCosts, placement,
                                  GreedyPolicy{limit, eager, forwardsFirst});
          if (succeeded(candidate))
            offer(std::move(*candidate),
                  "greedy, memory limit " + formatPerRank(limit) +
                      (forwardsFirst ? ", forwards first" : "") +
                      (factor > 0
                           ? llvm::formatv(", transfers x{0}", factor).str()
                           : ""));
          if (meetsBound())
            return;
        }
  }
}

/// The Zero Bubble heuristic's variants (one stage per rank), with the
/// problem's costs and, under rendezvous semantics, with transfers charged
/// to the compute actions; within the greedy family's budget of work.
void AutoSearch::offerZeroBubble() {
  if (problem.numRanks != problem.numStages)
    return;
  SmallVector<int64_t> identity =
      llvm::to_vector(llvm::seq<int64_t>(0, problem.numStages));
  SmallVector<double> charges = {0.0};
  if (problem.semantics == TransferSemantics::rendezvous &&
      costs.transferTime() > 0)
    charges.append(std::begin(kTransferCharges), std::end(kTransferCharges));
  int64_t builds = std::max<int64_t>(kGreedyWork / evaluationWork(), 1);
  for (double factor : charges) {
    ActionCosts charged = chargeTransfers(problem, identity, factor);
    for (const ZeroBubblePolicy &policy : getZeroBubblePolicies()) {
      if (builds-- == 0 || meetsBound())
        return;
      FailureOr<GeneratedSchedule> candidate =
          buildZeroBubbleGreedy(problem, charged, policy);
      if (succeeded(candidate))
        offer(std::move(*candidate),
              "zero-bubble greedy" +
                  (factor > 0 ? llvm::formatv(", transfers x{0}", factor).str()
                              : ""));
    }
  }
}

/// Moves actions of the best candidate into idle time while that helps,
/// within a budget of timings that keeps large problems fast.
void AutoSearch::improveBest() {
  if (!best || largeProgram())
    return;
  int64_t evaluations = std::clamp<int64_t>(kLocalSearchWork / evaluationWork(),
                                            1, kLocalSearchMaxEvaluations);
  int64_t moves = improveSchedule(problem, costs, *best, bestEval, evaluations);
  if (moves > 0)
    bestName += llvm::formatv(", {0} local moves", moves).str();
}

/// Searches every schedule on the placements for a faster one; where the
/// search finishes everywhere, the fastest found is optimal.
void AutoSearch::searchExact() {
  if (!searchable(problem) || placements.empty())
    return;
  exhaustive = searchPlacements(
      problem, costs, placements,
      [&](GeneratedSchedule candidate, StringRef name) {
        offer(std::move(candidate), name);
      },
      [&] {
        return best ? bestEval.makespan
                    : std::numeric_limits<double>::infinity();
      });
  proven = exhaustive && problem.semantics == TransferSemantics::async;
}

/// What every program on `placement` spends beyond its computations at
/// least: the set-up, and the optimizer steps of the rank that ends last,
/// which have at least the least work of any rank.
static double getLeastStepExtra(const ActionCosts &costs,
                                ArrayRef<int64_t> placement) {
  SmallVector<double> optimizer = costs.getOptimizerPerRank(placement);
  return costs.stepOverhead() +
         (optimizer.empty() ? 0.0 : *llvm::min_element(optimizer));
}

void AutoSearch::run() {
  offerBuiltins();
  for (ArrayRef<int64_t> placement : placements)
    bound = std::min(bound, lowerBound(problem, costs, placement) +
                                getLeastStepExtra(costs, placement));
  for (void (AutoSearch::*step)() :
       {&AutoSearch::offerZeroBubble, &AutoSearch::offerGreedy,
        &AutoSearch::improveBest, &AutoSearch::searchExact}) {
    if ((stopped = meetsBound()))
      return;
    (this->*step)();
  }
}

llvm::Expected<GeneratedSchedule> AutoSearch::finish() {
  if (!best)
    return ScheduleError() << "auto found no schedule within the memory cap of "
                           << formatPerRank(problem.getMemoryCaps())
                           << (exhaustive ? " (none exists: exhaustive search)"
                                          : "");
  std::string claim;
  double shown = bound;
  if (meetsBound())
    claim = "proven optimal: meets the lower bound";
  else if (proven)
    claim = "proven optimal by exhaustive search, lower bound";
  else
    claim = "lower bound";
  // An exhaustive search proves a bound of its own: the optimum.
  if (proven)
    shown = bestEval.makespan;
  best->note = llvm::formatv(
      "auto: makespan {0} ({1}), peak activation memory {2}; {3} {4}, gap "
      "{5:P1}; {6}{7} candidates; {8} stages on {9} ranks",
      withUnit(formatPrecisely(bestEval.makespan), problem.timeUnit), bestName,
      withUnit(formatQuantity(bestEval.peak()), problem.memoryUnit), claim,
      withUnit(formatQuantity(shown), problem.timeUnit),
      shown > 0 ? std::max(0.0, (bestEval.makespan - shown) / shown) : 0.0,
      stopped ? "stopped there after " : "", candidates, problem.numStages,
      problem.numRanks);
  return std::move(*best);
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateAuto(const ScheduleProblem &in) {
  ScheduleProblem problem = in;
  problem.cost = problem.getCostOrUnit();
  AutoSearch search(problem);
  search.run();
  return search.finish();
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::generateExact(const ScheduleProblem &in) {
  ScheduleProblem problem = in;
  problem.cost = problem.getCostOrUnit();
  // The search's model: transfers that never block.
  problem.semantics = TransferSemantics::async;
  ActionCosts costs(*problem.cost);
  if (!searchable(problem))
    return ScheduleError() << "exact search is limited to " << kSearchMaxActions
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
    return ScheduleError() << "exact search did not finish within "
                           << kSearchBudget << " states per placement";
  if (!best)
    return ScheduleError() << "no schedule within the memory cap of "
                           << formatPerRank(problem.getMemoryCaps())
                           << " (exhaustive search)";
  std::string claim = "proven optimal by exhaustive search";
  if (in.semantics != TransferSemantics::async) {
    // Reported as the program runs: its transfers under `in`'s semantics.
    double optimum = bestEval.makespan;
    ScheduleEvaluator evaluator(in, costs, best->stageRank);
    FailureOr<Evaluation> eval = evaluator.evaluate(*best);
    if (failed(eval))
      return ScheduleError()
             << "exact's schedule deadlocks with "
             << stringifyTransferSemantics(in.semantics) << " transfers";
    bestEval = *eval;
    claim = "the search's async optimum " +
            withUnit(formatPrecisely(optimum), in.timeUnit) +
            ", proven by exhaustive search";
  }
  best->note = llvm::formatv(
      "exact: makespan {0}, peak activation memory {1}; {2}",
      withUnit(formatPrecisely(bestEval.makespan), in.timeUnit),
      withUnit(formatQuantity(bestEval.peak()), in.memoryUnit), claim);
  return std::move(*best);
}
