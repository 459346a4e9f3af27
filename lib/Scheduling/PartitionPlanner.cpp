//===- PartitionPlanner.cpp - optimal contiguous stage partitions ---------===//
//
// Dynamic programming over (ops placed, stages placed) with Pareto sets of
// per-rank partial loads, so that ranks holding several stages are exact,
// and of the time recomputation adds, so that it is chosen only where needed.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/PartitionPlanner.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <limits>
#include <vector>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

int64_t PartitionProblem::getNumRanks() const {
  return stageRank.empty() ? 0 : *llvm::max_element(stageRank) + 1;
}

namespace {
/// A partial partition: the stages placed so far, summarised.
struct Label {
  /// The largest load of a rank whose stages are all placed.
  double closedMax = 0.0;
  /// Load and memory so far of every rank with several stages, and of
  /// the current stage's if it is its rank's only one (getRankSlots; 0
  /// once closed).
  SmallVector<double> time, memory;
  /// The time recomputing stages added, over every rank.
  double recomputeTime = 0.0;
  /// Where the previous stage started, and its label there; whether the
  /// last stage placed recomputes.
  int64_t prevBegin = -1, prevLabel = -1;
  bool recompute = false;

  bool dominates(const Label &other) const {
    if (closedMax > other.closedMax || recomputeTime > other.recomputeTime)
      return false;
    for (auto [a, b] : llvm::zip(time, other.time))
      if (a > b)
        return false;
    for (auto [a, b] : llvm::zip(memory, other.memory))
      if (a > b)
        return false;
    return true;
  }
};

using LabelSet = SmallVector<Label, 1>;

/// The most partial plans kept per (ops placed, stages placed). With one
/// stage per rank there is only ever one; beyond the limit the search keeps
/// the least loaded and is no longer proven optimal.
constexpr size_t kMaxLabels = 48;

/// The largest load a partial plan already implies.
double getLoad(const Label &label) {
  return std::max(label.closedMax, *llvm::max_element(label.time));
}

/// Adds `label` to `set` unless a label there is at least as good; drops the
/// labels it beats, and the most loaded one if the set grows too large.
/// Returns false if a label that no other dominates was dropped.
bool insertPareto(LabelSet &set, Label label) {
  if (llvm::any_of(set, [&](const Label &l) { return l.dominates(label); }))
    return true;
  llvm::erase_if(set, [&](const Label &l) { return label.dominates(l); });
  set.push_back(std::move(label));
  if (set.size() <= kMaxLabels)
    return true;
  set.erase(llvm::max_element(set, [](const Label &a, const Label &b) {
    return getLoad(a) < getLoad(b);
  }));
  return false;
}
} // namespace

/// Where a partial plan keeps each rank's running load and memory. A rank
/// with one stage is closed by the stage that opens it, so all such ranks
/// share one slot that is zero between stages; with one stage per rank a
/// plan is then a single number instead of a vector as long as the ranks.
static SmallVector<int64_t> getRankSlots(const PartitionProblem &problem,
                                         int64_t &numSlots) {
  SmallVector<int64_t> stagesOnRank(problem.getNumRanks(), 0);
  for (int64_t rank : problem.stageRank)
    ++stagesOnRank[rank];
  SmallVector<int64_t> slot(stagesOnRank.size(), 0);
  numSlots = 1; // slot 0: the ranks of one stage
  for (auto [rank, count] : llvm::enumerate(stagesOnRank))
    if (count > 1)
      slot[rank] = numSlots++;
  return slot;
}

/// The search; drops partial plans whose load reaches `bound`. Clears
/// `proven` if it had to drop others.
static std::optional<Partition> search(const PartitionProblem &problem,
                                       double bound, bool &proven) {
  int64_t n = problem.numOps, numStages = problem.getNumStages();
  int64_t numRanks = problem.getNumRanks();
  SmallVector<int64_t> lastStage(numRanks, -1);
  for (auto [stage, rank] : llvm::enumerate(problem.stageRank))
    lastStage[rank] = stage;
  auto fits = [&](int64_t rank, double memory) {
    return problem.memoryCap.empty() ||
           memory <= problem.memoryCap[rank] * (1.0 + 1e-12);
  };
  int64_t numSlots;
  SmallVector<int64_t> rankSlot = getRankSlots(problem, numSlots);

  // labels[k][i]: partial partitions of the first i ops into k stages.
  std::vector<std::vector<LabelSet>> labels(numStages + 1,
                                            std::vector<LabelSet>(n + 1));
  labels[0][0].push_back(Label{0.0, SmallVector<double>(numSlots, 0.0),
                               SmallVector<double>(numSlots, 0.0)});
  for (int64_t stage = 0; stage < numStages; ++stage) {
    int64_t rank = problem.stageRank[stage];
    int64_t slot = rankSlot[rank];
    bool last = stage + 1 == numStages;
    for (int64_t begin = 0; begin < n; ++begin) {
      if (labels[stage][begin].empty())
        continue;
      for (int64_t end = begin + 1; end <= n; ++end) {
        if (n - end < numStages - stage - 1)
          break; // too few ops left for the other stages
        bool atEnd = end == n;
        if (last != atEnd ||
            (!atEnd && !problem.mayCut[end] && !problem.mustCut[end])) {
          if (!atEnd && problem.mustCut[end])
            break; // no stage reaches past a required cut
          continue;
        }
        // Without recomputation first: it wins ties.
        StageLoad plain = problem.load(stage, begin, end);
        SmallVector<std::pair<StageLoad, bool>, 2> choices = {{plain, false}};
        if (problem.recomputeLoad)
          choices.push_back(
              {problem.recomputeLoad(stage, begin, end), /*recompute=*/true});
        for (auto [load, recompute] : choices)
          for (auto [index, from] : llvm::enumerate(labels[stage][begin])) {
            Label next = from;
            next.time[slot] += load.time;
            if (!problem.memoryCap.empty())
              next.memory[slot] += load.memory;
            if (!fits(rank, next.memory[slot]) || next.time[slot] >= bound)
              continue;
            if (recompute)
              next.recomputeTime += load.time - plain.time;
            if (lastStage[rank] == stage) {
              next.closedMax = std::max(next.closedMax, next.time[slot]);
              next.time[slot] = next.memory[slot] = 0.0;
            }
            next.prevBegin = begin;
            next.prevLabel = index;
            next.recompute = recompute;
            if (!insertPareto(labels[stage + 1][end], std::move(next)))
              proven = false;
          }
        if (!atEnd && problem.mustCut[end])
          break;
      }
    }
  }

  const LabelSet &done = labels[numStages][n];
  if (done.empty())
    return std::nullopt;
  // The least bottleneck, then (within rounding) the least recomputation.
  const Label *best =
      llvm::min_element(done, [](const Label &a, const Label &b) {
        return a.closedMax < b.closedMax;
      });
  double tolerance = 1e-9 * best->closedMax;
  for (const Label &label : done)
    if (label.closedMax <= best->closedMax + tolerance &&
        label.recomputeTime < best->recomputeTime)
      best = &label;
  Partition partition;
  partition.bottleneck = best->closedMax;
  partition.starts.resize(numStages);
  if (problem.recomputeLoad)
    partition.recompute.resize(numStages);
  for (int64_t stage = numStages; stage > 0; --stage) {
    partition.starts[stage - 1] = best->prevBegin;
    if (problem.recomputeLoad)
      partition.recompute[stage - 1] = best->recompute;
    best = &labels[stage - 1][best->prevBegin][best->prevLabel];
  }
  return partition;
}

/// What a plan puts on the busiest rank and on the largest stage.
struct PlanLoads {
  double bottleneck = 0.0, largestStage = 0.0;
};

/// The loads of `partition`, or none if a rank exceeds its cap.
static std::optional<PlanLoads> evaluate(const PartitionProblem &problem,
                                         const Partition &partition) {
  ArrayRef<int64_t> starts = partition.starts;
  SmallVector<double> time(problem.getNumRanks(), 0.0),
      memory(problem.getNumRanks(), 0.0);
  PlanLoads loads;
  for (auto [stage, rank] : llvm::enumerate(problem.stageRank)) {
    int64_t end =
        stage + 1 < starts.size() ? starts[stage + 1] : problem.numOps;
    bool recompute = !partition.recompute.empty() && partition.recompute[stage];
    StageLoad load = (recompute ? problem.recomputeLoad
                                : problem.load)(stage, starts[stage], end);
    time[rank] += load.time;
    memory[rank] += load.memory;
    loads.largestStage = std::max(loads.largestStage, load.time);
  }
  for (auto [rank, used] : llvm::enumerate(memory))
    if (!problem.memoryCap.empty() &&
        used > problem.memoryCap[rank] * (1.0 + 1e-12))
      return std::nullopt;
  loads.bottleneck = *llvm::max_element(time);
  return loads;
}

/// The step `numMicrobatches` micro-batches take on a plan with `loads`:
/// the busiest rank's share, then the fill and drain of the pipeline.
static double estimateStep(const PartitionProblem &problem,
                           const PlanLoads &loads) {
  return problem.numMicrobatches * loads.bottleneck +
         (problem.getNumRanks() - 1) * loads.largestStage;
}

/// Whether no partition can exceed a cap: every rank fits even if each of
/// its stages held the whole chain (loads grow with a stage's extent).
static bool capsCannotBind(const PartitionProblem &problem) {
  SmallVector<double> memory(problem.getNumRanks(), 0.0);
  for (auto [stage, rank] : llvm::enumerate(problem.stageRank))
    memory[rank] += problem.load(stage, 0, problem.numOps).memory;
  return llvm::all_of(llvm::enumerate(memory), [&](auto entry) {
    return entry.value() <= problem.memoryCap[entry.index()];
  });
}

std::optional<Partition>
mlir::pp::sched::planPartition(const PartitionProblem &original) {
  PartitionProblem problem = original;
  if (!problem.memoryCap.empty() && capsCannotBind(problem))
    problem.memoryCap.clear(); // fewer dimensions to compare partial plans on
  int64_t numRanks = problem.getNumRanks();
  const double unbounded = std::numeric_limits<double>::infinity();
  bool proven = true;
  auto finish = [&](std::optional<Partition> partition) {
    if (partition)
      partition->proven = proven;
    return partition;
  };
  if (numRanks == problem.getNumStages())
    return finish(search(problem, unbounded, proven));

  // Several stages per rank: the plan that is best when each stage counts
  // as a rank of its own (a rank's cap split evenly between its stages)
  // bounds the search, which then only keeps partial plans that can still
  // beat it.
  PartitionProblem relaxed = problem;
  relaxed.stageRank.clear();
  relaxed.memoryCap.clear();
  SmallVector<int64_t> stagesOnRank(numRanks, 0);
  for (int64_t rank : problem.stageRank)
    ++stagesOnRank[rank];
  for (auto [stage, rank] : llvm::enumerate(problem.stageRank)) {
    relaxed.stageRank.push_back(stage);
    if (!problem.memoryCap.empty())
      relaxed.memoryCap.push_back(problem.memoryCap[rank] / stagesOnRank[rank]);
  }
  bool relaxedProven = true;
  std::optional<Partition> incumbent =
      search(relaxed, unbounded, relaxedProven);
  std::optional<PlanLoads> bound =
      incumbent ? evaluate(problem, *incumbent) : std::nullopt;
  if (!bound)
    return finish(search(problem, unbounded, proven));
  incumbent->bottleneck = bound->bottleneck;
  std::optional<Partition> better = search(problem, bound->bottleneck, proven);
  if (!better)
    return finish(incumbent);
  if (problem.numMicrobatches > 0 &&
      estimateStep(problem, *bound) <=
          estimateStep(problem, *evaluate(problem, *better)))
    return finish(incumbent);
  return finish(better);
}

namespace {
/// The loads of a stage-cut problem's stages, from per-rank prefix sums.
class StageLoads {
public:
  explicit StageLoads(const StageCutProblem &problem) : problem(problem) {
    for (int64_t rank = 0; rank < problem.getNumRanks(); ++rank) {
      SmallVector<double> &compute = computePrefix.emplace_back(1, 0.0);
      SmallVector<double> &forward = forwardPrefix.emplace_back(1, 0.0);
      for (int64_t op = 0; op < problem.numOps; ++op) {
        compute.push_back(compute.back() + problem.computeTime(op, rank));
        forward.push_back(forward.back() + problem.forwardTime(op, rank));
      }
    }
  }

  /// A stage's F + B + W, the transfers at its boundaries (each keeps both
  /// ends busy), its weights and the activations of its micro-batches in
  /// flight.
  StageLoad get(int64_t stage, int64_t begin, int64_t end) const {
    int64_t rank = problem.stageRank[stage];
    StageLoad load;
    load.time = computePrefix[rank][end] - computePrefix[rank][begin];
    if (stage > 0)
      load.time += transfer(stage, begin, stage - 1);
    if (stage + 1 < problem.getNumStages())
      load.time += transfer(stage, end, stage + 1);
    load.memory = problem.weightCopies * problem.parameterBytes(begin, end) +
                  problem.inFlight[stage] * problem.activationBytes(begin, end);
    return load;
  }

  /// The same when the stage's backward runs its forward again: its rank
  /// holds the inputs of the micro-batches in flight but one, whose
  /// activations the backward re-creates.
  StageLoad getRecomputed(int64_t stage, int64_t begin, int64_t end) const {
    int64_t rank = problem.stageRank[stage];
    StageLoad load = get(stage, begin, end);
    load.time += forwardPrefix[rank][end] - forwardPrefix[rank][begin];
    load.memory = problem.weightCopies * problem.parameterBytes(begin, end) +
                  std::max(problem.inFlight[stage] - 1.0, 0.0) *
                      problem.inputBytes(begin, end) +
                  problem.activationBytes(begin, end);
    return load;
  }

private:
  double transfer(int64_t stage, int64_t cut, int64_t other) const {
    int64_t from = problem.stageRank[stage], to = problem.stageRank[other];
    return from == to ? 0.0 : 2.0 * problem.transferTime(cut, from, to);
  }

  const StageCutProblem &problem;
  std::vector<SmallVector<double>> computePrefix, forwardPrefix;
};
} // namespace

/// The least factor by which every cap of `problem` must grow for some
/// partition to fit: the partition whose fullest rank, in units of its cap,
/// is least (a stage that may recompute needs the smaller memory of its two
/// loads).
static std::optional<double> getCapFactor(PartitionProblem problem) {
  auto memoryLoad = problem.load, recomputeLoad = problem.recomputeLoad;
  SmallVector<double> caps = problem.memoryCap;
  problem.memoryCap.clear();
  auto scaled = [&](int64_t stage, int64_t begin, int64_t end) {
    double memory = memoryLoad(stage, begin, end).memory;
    if (recomputeLoad)
      memory = std::min(memory, recomputeLoad(stage, begin, end).memory);
    return StageLoad{memory / caps[problem.stageRank[stage]], 0.0};
  };
  problem.load = scaled;
  problem.recomputeLoad = nullptr;
  if (std::optional<Partition> smallest = planPartition(problem))
    return smallest->bottleneck;
  return std::nullopt;
}

StageCuts mlir::pp::sched::planStageCuts(const StageCutProblem &problem) {
  StageLoads loads(problem);
  auto load = [&](int64_t stage, int64_t begin, int64_t end) {
    return loads.get(stage, begin, end);
  };
  auto recomputeLoad = [&](int64_t stage, int64_t begin, int64_t end) {
    return loads.getRecomputed(stage, begin, end);
  };
  PartitionProblem partition;
  partition.numOps = problem.numOps;
  partition.stageRank = problem.stageRank;
  partition.mayCut = problem.mayCut;
  partition.mustCut.assign(problem.numOps + 1, false);
  for (int64_t cut : problem.markerCuts)
    partition.mustCut[cut] = true;
  partition.load = load;
  if (problem.recompute == RecomputePolicy::All)
    partition.load = recomputeLoad;
  if (problem.recompute == RecomputePolicy::Auto)
    partition.recomputeLoad = recomputeLoad;
  partition.memoryCap = problem.memoryCap;
  partition.numMicrobatches = problem.numMicrobatches;

  StageCuts cuts;
  cuts.partition = planPartition(partition);
  if (!cuts.partition) {
    PartitionProblem uncapped = partition;
    uncapped.memoryCap.clear();
    cuts.overMemory = planPartition(uncapped).has_value();
    if (cuts.overMemory)
      cuts.capFactor = getCapFactor(partition);
    return cuts;
  }
  Partition &plan = *cuts.partition;
  int64_t numStages = problem.getNumStages();
  if (plan.recompute.empty())
    plan.recompute.assign(numStages, problem.recompute == RecomputePolicy::All);
  for (int64_t stage = 0; stage < numStages; ++stage) {
    int64_t begin = plan.starts[stage];
    int64_t end =
        stage + 1 < numStages ? plan.starts[stage + 1] : problem.numOps;
    cuts.loads.push_back(plan.recompute[stage]
                             ? loads.getRecomputed(stage, begin, end)
                             : loads.get(stage, begin, end));
  }
  return cuts;
}
