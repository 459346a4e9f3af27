//===- StepPlannerFuzzTest.cpp - random problems for the step planner -----===//
//
// Draws small step-planning problems over every option (1-3 shapes at
// FLOP-like or measured costs, 1, 2, 3, 4 or 6 stages on 1, 2, 4 or 6
// ranks, uneven counts included (the looped placement), 1-2
// replicas, memory caps that bind or not, greedy, 1f1b, zb-h1,
// interleaved-1f1b or hanayo, samples or packed rows) and checks the
// planner against exhaustive search by its own cost (makeMicrobatchPlan on
// getStepCutProblem): each replica's plan against every partition of its
// samples into micro-batches, each line's split among replicas against
// every split (at most D x the best without a micro-batch multiple).
// Also: every sample placed once in a shape holding it, every schedule
// within the caps, packed rows within the context, and `--packing=auto`'s
// rule never slower than plans or packing alone.
// PP_STEP_PLANNER_FUZZ=N draws N problems instead of the bounded default,
// PP_STEP_PLANNER_FUZZ_SEED=S starts from seed S.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleEvaluator.h"
#include "pp/Scheduling/StepPlanner.h"

#include "llvm/ADT/STLExtras.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <functional>
#include <random>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// One drawn problem: what every step is planned for, the index's lines,
/// the replicas and the schedule generator.
struct Drawn {
  StepPlanProblem problem;
  SmallVector<SmallVector<int64_t>> lines;
  int64_t replicas = 1;
  const ScheduleGenerator *generator = nullptr;
};

class Draw {
public:
  explicit Draw(uint64_t seed) : rng(seed) {}

  int64_t integer(int64_t least, int64_t most) {
    return std::uniform_int_distribution<int64_t>(least, most)(rng);
  }
  double real(double least, double most) {
    return std::uniform_real_distribution<double>(least, most)(rng);
  }
  bool chance(double p) { return real(0.0, 1.0) < p; }
  template <typename T> const T &pick(ArrayRef<T> values) {
    return values[integer(0, values.size() - 1)];
  }

  /// A shape's per-stage costs: FLOP-like (a fixed part plus rows x (per
  /// token + attention's per token squared), activation per token) or
  /// measured (any positive values, however the shapes compare).
  StageCosts costs(int64_t stages, bool split, bool measured, int64_t rows,
                   int64_t length, ArrayRef<double> coefficients) {
    StageCosts c = StageCosts::getUnit(stages);
    c.transfer = pick<double>({0.0, 0.1});
    for (int64_t s = 0; s < stages; ++s) {
      double flops =
          coefficients[0] +
          rows * (coefficients[1] * length + coefficients[2] * length * length);
      double forward = measured ? real(0.1, 10.0) : flops * (1 + s * 0.25);
      c.forward[s] = forward;
      c.backwardInput[s] = measured ? real(0.1, 10.0) : 2 * forward;
      c.backwardWeight[s] = split ? (measured ? real(0.1, 10.0) : forward) : 0;
      if (!split)
        c.backwardInput[s] += measured ? 0.0 : forward;
      c.activation[s] =
          measured ? real(1.0, 64.0) : coefficients[3] * rows * length;
      c.stash[s] = 0.0;
    }
    return c;
  }

  Drawn problem() {
    Drawn d;
    StepPlanProblem &p = d.problem;
    p.numStages = pick<int64_t>({1, 2, 2, 3, 4, 6});
    p.numRanks = p.numStages <= 2 ? p.numStages
                                  : pick<int64_t>({2, p.numStages / 2 * 2});
    p.splitBackward = chance(0.5);
    bool measured = chance(0.5);
    SmallVector<double> coefficients = {real(0.0, 4.0), real(0.1, 2.0),
                                        chance(0.5) ? real(0.0, 0.2) : 0.0,
                                        real(0.5, 2.0)};
    for (int64_t k = 0, n = integer(1, 3); k < n; ++k) {
      int64_t rows = pick<int64_t>({1, 2, 3, 4});
      int64_t length = pick<int64_t>({2, 4, 8, 16});
      p.shapes.push_back({rows, length,
                          costs(p.numStages, p.splitBackward, measured, rows,
                                length, coefficients)});
    }
    // Caps from below the least shape's activation to above the largest.
    if (chance(0.6)) {
      MicrobatchPlanProblem cut = getStepCutProblem(p);
      double least = kInf, most = 0.0;
      for (const MicrobatchShape &shape : cut.shapes) {
        least = std::min(least, shape.memory);
        most = std::max(most, shape.memory);
      }
      for (int64_t r = 0; r < p.numRanks; ++r)
        p.memoryCap.push_back(real(0.9 * least, 2.5 * most));
    }
    d.replicas = integer(1, 2);
    d.generator = lookupScheduleGenerator(generatorFor(p));
    p.microbatchMultiple = getMicrobatchMultiple(*d.generator, p.numRanks);
    int64_t longest = getPackingContext(p);
    for (int64_t line = 0, n = integer(1, 3); line < n; ++line) {
      SmallVector<int64_t> lengths;
      for (int64_t k = 0, m = integer(d.replicas, 6); k < m; ++k)
        lengths.push_back(integer(1, longest + (chance(0.05) ? 2 : 0)));
      d.lines.push_back(lengths);
    }
    return d;
  }

private:
  /// A generator that takes the problem's stages and ranks: interleaved
  /// and hanayo only where the stages divide evenly (hanayo by 2R).
  StringRef generatorFor(const StepPlanProblem &p) {
    if (p.numRanks == p.numStages)
      return pick<StringRef>({"greedy", "1f1b", "zb-h1"});
    SmallVector<StringRef> names = {"greedy"};
    if (p.numStages % p.numRanks == 0)
      names.push_back("interleaved-1f1b");
    if (p.numStages % (2 * p.numRanks) == 0)
      names.push_back("hanayo");
    return pick<StringRef>(names);
  }

  std::mt19937_64 rng;
};

/// Calls `visit(block, blocks)` with every partition of `n` items into
/// blocks, item i in block[i] (restricted growth strings).
void forEachPartition(
    int64_t n, llvm::function_ref<void(ArrayRef<int64_t>, int64_t)> visit) {
  SmallVector<int64_t> block(n, 0);
  std::function<void(int64_t, int64_t)> extend = [&](int64_t item,
                                                     int64_t blocks) {
    if (item == n)
      return visit(block, blocks);
    for (int64_t b = 0; b <= blocks; ++b) {
      block[item] = b;
      extend(item + 1, std::max(blocks, b + 1));
    }
  };
  extend(0, 0);
}

/// The least objective over every partition of `lengths` into micro-batches
/// (in any order, not only sorted cuts; their count a multiple of the
/// generator's), each costed by the planner's own makeMicrobatchPlan;
/// infinity if no partition runs at the shapes.
double bestPartition(ArrayRef<int64_t> lengths,
                     const MicrobatchPlanProblem &cut) {
  double best = kInf;
  forEachPartition(
      lengths.size(), [&](ArrayRef<int64_t> block, int64_t blocks) {
        if (blocks % cut.microbatchMultiple)
          return;
        SmallVector<int64_t> laid, ends;
        for (int64_t b = 0; b < blocks; ++b) {
          for (auto [item, in] : llvm::enumerate(block))
            if (in == b)
              laid.push_back(lengths[item]);
          ends.push_back(laid.size());
        }
        MicrobatchPlan plan = makeMicrobatchPlan(laid, ends, cut);
        if (llvm::all_of(plan.shape, [](int64_t shape) { return shape >= 0; }))
          best = std::min(best, plan.objective);
      });
  return best;
}

/// The best objective of each subset (bit mask) of `lengths` planned alone.
SmallVector<double> bestOfEachSubset(ArrayRef<int64_t> lengths,
                                     const MicrobatchPlanProblem &cut) {
  SmallVector<double> best(1u << lengths.size(), kInf);
  for (uint32_t mask = 1; mask < best.size(); ++mask) {
    SmallVector<int64_t> subset;
    for (auto [item, length] : llvm::enumerate(lengths))
      if (mask & (1u << item))
        subset.push_back(length);
    best[mask] = bestPartition(subset, cut);
  }
  return best;
}

/// The least slowest-replica objective over every split of the samples
/// among `replicas` replicas, each holding at least one.
double bestSplit(ArrayRef<double> subsetBest, int64_t n, int64_t replicas) {
  uint32_t all = (1u << n) - 1;
  if (replicas == 1)
    return subsetBest[all];
  double best = kInf;
  for (uint32_t mask = 1; mask < all; ++mask)
    best = std::min(best, std::max(subsetBest[mask], subsetBest[all ^ mask]));
  return best;
}

bool near(double a, double b) {
  return a == b || std::abs(a - b) <= 1e-9 * std::max(a, b);
}

/// What a campaign found.
struct Tally {
  int64_t problems = 0, replicaPlans = 0, infeasible = 0, overCaps = 0,
          mismatches = 0, splits = 0, splitsOff = 0, splitsRefused = 0,
          packingChoices = 0;
  /// The slowest replica over the best split's, at most, and the problem
  /// it came from: without a micro-batch multiple, and with one.
  double worstSplit[2] = {1.0, 1.0};
  uint64_t worstSplitSeed[2] = {0, 0};
  /// The problem being checked.
  uint64_t seed = 0;
};

/// The samples of `lengths` replica `r` of `replicas` takes: sorted
/// positions r, r + D, ... (as a bit mask of the items).
uint32_t getReplicaMask(ArrayRef<int64_t> lengths, int64_t r,
                        int64_t replicas) {
  SmallVector<int64_t> order = sortLongestFirst(lengths);
  uint32_t mask = 0;
  for (size_t p = r; p < order.size(); p += replicas)
    mask |= 1u << order[p];
  return mask;
}

/// Every sample of every line placed once, each micro-batch at a shape that
/// holds it within the smallest cap, its objective the planner's cost of its
/// cut, each schedule verified within the caps.
void checkInvariants(const Drawn &d, ArrayRef<SmallVector<int64_t>> lines,
                     const PlannedSteps &planned) {
  const StepPlanProblem &p = d.problem;
  MicrobatchPlanProblem cut = getStepCutProblem(p);
  ASSERT_EQ(planned.steps.size(), lines.size() * d.replicas);
  for (auto [line, lengths] : llvm::enumerate(lines)) {
    SmallVector<int64_t> placed(lengths.size(), 0);
    for (int64_t r = 0; r < d.replicas; ++r) {
      int64_t index = line * d.replicas + r;
      const StepPlan &plan = planned.steps[index];
      const MicrobatchPlan &mbs = plan.microbatches;
      SmallVector<int64_t> sorted, ends;
      for (int64_t sample : plan.order) {
        ASSERT_LT(sample, int64_t(lengths.size()));
        ++placed[sample];
        sorted.push_back(lengths[sample]);
      }
      int64_t m = mbs.getNumMicrobatches();
      for (int64_t mb = 0; mb < m; ++mb) {
        int64_t end = mb + 1 < m ? mbs.begin[mb + 1] : sorted.size();
        ASSERT_LT(mbs.begin[mb], end);
        int64_t padded = *std::max_element(sorted.begin() + mbs.begin[mb],
                                           sorted.begin() + end);
        const MicrobatchShape &shape = cut.shapes[mbs.shape[mb]];
        EXPECT_TRUE(shape.holds(end - mbs.begin[mb], padded));
        EXPECT_LE(shape.memory, cut.memoryCap * (1 + 1e-12));
        ends.push_back(end);
      }
      ASSERT_EQ(mbs.begin.front(), 0);
      EXPECT_TRUE(
          near(makeMicrobatchPlan(sorted, ends, cut).objective, mbs.objective));
      EXPECT_EQ(planned.shapeSequences[planned.scheduleOfStep[index]],
                mbs.shape);
    }
    EXPECT_TRUE(llvm::all_of(placed, [](int64_t n) { return n == 1; }));
  }
  for (auto [shapes, schedule] :
       llvm::zip(planned.shapeSequences, planned.schedules)) {
    ScheduleProblem check{p.numStages, int64_t(shapes.size()), p.numRanks,
                          p.splitBackward};
    check.semantics = p.semantics;
    check.cost = getShapeSequenceCosts(shapes, p);
    check.memoryCap = p.memoryCap;
    llvm::Error error = verify(check, schedule);
    EXPECT_FALSE(static_cast<bool>(error)) << toString(std::move(error));
    llvm::Expected<Evaluation> eval = simulate(check, schedule);
    ASSERT_TRUE(static_cast<bool>(eval)) << toString(eval.takeError());
    for (auto [rank, cap] : llvm::enumerate(p.memoryCap))
      EXPECT_LE(eval->rankPeak[rank], cap * (1 + 1e-9));
  }
}

/// Plans `lines` (samples, or packed rows) and checks each replica's plan
/// against exhaustive search, the split among replicas against every
/// split, and the invariants. The plans, or their error.
llvm::Expected<PlannedSteps>
checkLines(const Drawn &d, ArrayRef<SmallVector<int64_t>> lines, Tally &tally) {
  MicrobatchPlanProblem cut = getStepCutProblem(d.problem);
  bool anyInfeasible = false;
  for (const SmallVector<int64_t> &lengths : lines) {
    // A replica without samples is refused.
    if (int64_t(lengths.size()) < d.replicas) {
      anyInfeasible = true;
      continue;
    }
    SmallVector<double> best = bestOfEachSubset(lengths, cut);
    double lineTime = 0.0;
    for (int64_t r = 0; r < d.replicas; ++r) {
      uint32_t mask = getReplicaMask(lengths, r, d.replicas);
      SmallVector<int64_t> own;
      for (auto [item, length] : llvm::enumerate(lengths))
        if (mask & (1u << item))
          own.push_back(length);
      ++tally.replicaPlans;
      llvm::Expected<StepPlan> plan = planStep(own, d.problem);
      bool exact = plan ? near(plan->microbatches.objective, best[mask])
                        : best[mask] == kInf;
      if (!plan) {
        anyInfeasible = true;
        llvm::consumeError(plan.takeError());
      }
      if (!exact) {
        ++tally.mismatches;
        ADD_FAILURE() << "replica " << r << " of " << d.replicas << ": planner "
                      << (plan ? plan->microbatches.objective : kInf)
                      << ", best partition " << best[mask];
      }
      lineTime = std::max(lineTime, plan ? plan->microbatches.objective : kInf);
    }
    double split = bestSplit(best, lengths.size(), d.replicas);
    if (d.replicas > 1 && split < kInf) {
      ++tally.splits;
      EXPECT_GE(lineTime * (1 + 1e-12), split);
      if (!near(lineTime, split))
        ++tally.splitsOff;
      // Without a micro-batch multiple, a replica's plan is no slower than
      // the best split's D plans' micro-batches cut down to its samples,
      // (p - 1) x the slowest + every sum: at most D x the best.
      bool multiple = d.problem.microbatchMultiple > 1;
      if (!multiple) {
        EXPECT_LE(lineTime, d.replicas * split * (1 + 1e-9));
      }
      double &worst = tally.worstSplit[multiple];
      if (lineTime == kInf)
        ++tally.splitsRefused;
      else if (lineTime / split > worst) {
        worst = lineTime / split;
        tally.worstSplitSeed[multiple] = tally.seed;
      }
    }
  }
  llvm::Expected<PlannedSteps> planned =
      planSteps(lines, d.replicas, d.problem, *d.generator);
  if (planned) {
    EXPECT_FALSE(anyInfeasible) << "planned a line no plan runs";
    checkInvariants(d, lines, *planned);
    return planned;
  }
  std::string message = toString(planned.takeError());
  if (!anyInfeasible && StringRef(message).contains(": plan ")) {
    // The generators that honour caps fit any plan whose micro-batches
    // each fit alone; the others may not.
    bool honours = llvm::is_contained(
        ArrayRef<StringRef>{"greedy", "1f1b", "hanayo"}, d.generator->name);
    if (honours || !StringRef(message).contains("memory cap"))
      ADD_FAILURE() << "no schedule for the plans: " << message;
    ++tally.overCaps;
  } else if (!anyInfeasible) {
    ADD_FAILURE() << "refused a line every replica plans: " << message;
  }
  ++tally.infeasible;
  return ScheduleError() << message;
}

/// Packing: rows within the context holding every token; the packed rows
/// planned and checked like samples; `auto`'s rule never slower than
/// plans or packing alone.
void checkPacking(const Drawn &d, llvm::Expected<PlannedSteps> &plans,
                  Tally &tally) {
  int64_t context = getPackingContext(d.problem);
  SmallVector<SmallVector<int64_t>> rows;
  for (const SmallVector<int64_t> &line : d.lines) {
    rows.push_back(packSamples(line, context));
    int64_t tokens = 0, packed = 0;
    for (int64_t length : line)
      tokens += length;
    for (auto [index, row] : llvm::enumerate(rows.back())) {
      EXPECT_GT(row, 0);
      EXPECT_LE(row, context);
      if (index + 1 < rows.back().size()) {
        EXPECT_EQ(row, context);
      }
      packed += row;
    }
    EXPECT_EQ(packed, tokens);
  }
  llvm::Expected<PlannedSteps> packed = checkLines(d, rows, tally);
  if (plans && packed) {
    ++tally.packingChoices;
    double never = getPipelineTime(*plans, d.replicas);
    double always = getPipelineTime(*packed, d.replicas);
    bool pack = isPackingQuicker(*plans, *packed, d.replicas);
    EXPECT_LE(pack ? always : never, std::min(never, always));
  }
  if (!packed)
    llvm::consumeError(packed.takeError());
}

int64_t getEnv(const char *name, int64_t otherwise) {
  const char *value = std::getenv(name);
  return value ? std::strtoll(value, nullptr, 10) : otherwise;
}

TEST(StepPlannerFuzz, RandomProblemsEqualExhaustiveSearch) {
  int64_t count = getEnv("PP_STEP_PLANNER_FUZZ", 4000);
  uint64_t seed = getEnv("PP_STEP_PLANNER_FUZZ_SEED", 1);
  Tally tally;
  for (int64_t k = 0; k < count; ++k) {
    tally.seed = seed + k;
    Drawn d = Draw(tally.seed).problem();
    SCOPED_TRACE("seed " + std::to_string(seed + k));
    ++tally.problems;
    llvm::Expected<PlannedSteps> plans = checkLines(d, d.lines, tally);
    checkPacking(d, plans, tally);
    if (!plans)
      llvm::consumeError(plans.takeError());
    if (HasFatalFailure())
      return;
  }
  EXPECT_EQ(tally.mismatches, 0);
  std::printf("%lld problems, %lld replica plans, %lld mismatches; %lld "
              "refused (%lld over the caps); %lld splits among replicas, "
              "%lld not the best (%lld with no cut), worst %.4f x the best "
              "(seed %llu), %.4f x with a micro-batch multiple (seed %llu); "
              "%lld packing choices\n",
              (long long)tally.problems, (long long)tally.replicaPlans,
              (long long)tally.mismatches, (long long)tally.infeasible,
              (long long)tally.overCaps, (long long)tally.splits,
              (long long)tally.splitsOff, (long long)tally.splitsRefused,
              tally.worstSplit[0], (unsigned long long)tally.worstSplitSeed[0],
              tally.worstSplit[1], (unsigned long long)tally.worstSplitSeed[1],
              (long long)tally.packingChoices);
}

} // namespace
