//===- PartitionPlanner.cpp - optimal contiguous stage partitions ---------===//
//
// Dynamic programming over (ops placed, stages placed) with Pareto sets of
// per-rank partial loads, so that ranks holding several stages are exact.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/PartitionPlanner.h"

#include "llvm/ADT/STLExtras.h"

#include <vector>

using namespace mlir;
using namespace mlir::pp;

int64_t PartitionProblem::getNumRanks() const {
  return stageRank.empty() ? 0 : *llvm::max_element(stageRank) + 1;
}

namespace {
/// A partial partition: the stages placed so far, summarised.
struct Label {
  /// The largest load of a rank whose stages are all placed.
  double closedMax = 0.0;
  /// Load and memory so far of every rank (0 once closed).
  SmallVector<double> time, memory;
  /// Where the previous stage started, and its label there.
  int64_t prevBegin = -1, prevLabel = -1;

  bool dominates(const Label &other) const {
    if (closedMax > other.closedMax)
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

/// Adds `label` to `set` unless a label there is at least as good; drops the
/// labels it beats.
void insertPareto(LabelSet &set, Label label) {
  if (llvm::any_of(set, [&](const Label &l) { return l.dominates(label); }))
    return;
  llvm::erase_if(set, [&](const Label &l) { return label.dominates(l); });
  set.push_back(std::move(label));
}
} // namespace

std::optional<Partition>
mlir::pp::planPartition(const PartitionProblem &problem) {
  int64_t n = problem.numOps, numStages = problem.getNumStages();
  int64_t numRanks = problem.getNumRanks();
  SmallVector<int64_t> lastStage(numRanks, -1);
  for (auto [stage, rank] : llvm::enumerate(problem.stageRank))
    lastStage[rank] = stage;
  auto fits = [&](int64_t rank, double memory) {
    return problem.memoryCap.empty() ||
           memory <= problem.memoryCap[rank] * (1.0 + 1e-12);
  };

  // labels[k][i]: partial partitions of the first i ops into k stages.
  std::vector<std::vector<LabelSet>> labels(numStages + 1,
                                            std::vector<LabelSet>(n + 1));
  labels[0][0].push_back(Label{0.0, SmallVector<double>(numRanks, 0.0),
                               SmallVector<double>(numRanks, 0.0)});
  for (int64_t stage = 0; stage < numStages; ++stage) {
    int64_t rank = problem.stageRank[stage];
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
        StageLoad load = problem.load(stage, begin, end);
        for (auto [index, from] : llvm::enumerate(labels[stage][begin])) {
          Label next = from;
          next.time[rank] += load.time;
          if (!problem.memoryCap.empty())
            next.memory[rank] += load.memory;
          if (!fits(rank, next.memory[rank]))
            continue;
          if (lastStage[rank] == stage) {
            next.closedMax = std::max(next.closedMax, next.time[rank]);
            next.time[rank] = next.memory[rank] = 0.0;
          }
          next.prevBegin = begin;
          next.prevLabel = index;
          insertPareto(labels[stage + 1][end], std::move(next));
        }
        if (!atEnd && problem.mustCut[end])
          break;
      }
    }
  }

  const LabelSet &done = labels[numStages][n];
  if (done.empty())
    return std::nullopt;
  const Label *best =
      llvm::min_element(done, [](const Label &a, const Label &b) {
        return a.closedMax < b.closedMax;
      });
  Partition partition;
  partition.bottleneck = best->closedMax;
  partition.starts.resize(numStages);
  for (int64_t stage = numStages; stage > 0; --stage) {
    partition.starts[stage - 1] = best->prevBegin;
    best = &labels[stage - 1][best->prevBegin][best->prevLabel];
  }
  return partition;
}
