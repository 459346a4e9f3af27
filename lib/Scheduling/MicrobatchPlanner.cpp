//===- MicrobatchPlanner.cpp - variable-length micro-batches --------------===//
//
// DynaPipe's dynamic program: for each candidate slowest time T, the least
// sum of micro-batch times over cuts whose micro-batches all take at most
// T and fit the memory cap; the plan is the candidate with the least
// (p - 1) x T + sum.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/MicrobatchPlanner.h"
#include "pp/Scheduling/ScheduleProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// What a run of samples costs as one micro-batch: nothing when it cannot
/// be one (`grows` then says whether longer runs cannot be either).
struct RunCost {
  bool fits = false, grows = true;
  double time = 0.0, memory = 0.0;
  int64_t shape = -1;
};

/// The cost of a micro-batch of `rows` samples padded to `length`: by the
/// token costs, or at the quickest shape holding it. Longer runs only get
/// slower (the shapes holding them are fewer) but, with shapes, may hold
/// less memory, so only a run no shape holds stops the growth.
RunCost getRunCost(const MicrobatchPlanProblem &problem, int64_t rows,
                   int64_t length) {
  RunCost cost;
  double cap = problem.memoryCap * (1 + 1e-12);
  if (problem.shapes.empty()) {
    cost.time = problem.time.get(rows, length);
    cost.memory = problem.memory.get(rows, length);
    cost.fits = cost.grows = cost.memory <= cap;
    return cost;
  }
  cost.grows = false;
  for (auto [index, shape] : llvm::enumerate(problem.shapes)) {
    if (!shape.holds(rows, length))
      continue;
    cost.grows = true;
    if (shape.memory > cap || (cost.fits && shape.time >= cost.time))
      continue;
    cost = {true, true, shape.time, shape.memory, int64_t(index)};
  }
  return cost;
}

/// Runs the samples [i, j) as one micro-batch, for every i < j, calling
/// `visit(i, rows, paddedLength)` from i = j - 1 down, so that the padded
/// length is a running maximum.
template <typename Fn>
void forEachRunEndingAt(ArrayRef<int64_t> lengths, int64_t j, Fn visit) {
  int64_t padded = 0;
  for (int64_t i = j - 1; i >= 0; --i) {
    padded = std::max(padded, lengths[i]);
    if (!visit(i, j - i, padded))
      return;
  }
}

/// The least sum of micro-batch times over cuts into a multiple of
/// `microbatchMultiple` micro-batches that all take at most `slowest` and
/// fit the cap, and the ends of that cut. Infinity if there is none.
double leastTotal(ArrayRef<int64_t> lengths,
                  const MicrobatchPlanProblem &problem, double slowest,
                  SmallVectorImpl<int64_t> &ends) {
  int64_t n = lengths.size(), k = problem.microbatchMultiple;
  double inf = std::numeric_limits<double>::infinity();
  // State j * k + c: the first j samples cut into c micro-batches mod k.
  SmallVector<double> best((n + 1) * k, inf);
  SmallVector<int64_t> from((n + 1) * k, -1);
  best[0] = 0.0;
  for (int64_t j = 1; j <= n; ++j)
    forEachRunEndingAt(lengths, j, [&](int64_t i, int64_t rows, int64_t len) {
      // Longer runs only get slower: stop at the first too slow.
      RunCost cost = getRunCost(problem, rows, len);
      if (!cost.fits)
        return cost.grows;
      if (cost.time > slowest * (1 + 1e-12))
        return false;
      for (int64_t c = 0; c < k; ++c) {
        int64_t to = j * k + (c + 1) % k;
        if (best[i * k + c] + cost.time < best[to]) {
          best[to] = best[i * k + c] + cost.time;
          from[to] = i * k + c;
        }
      }
      return true;
    });
  ends.clear();
  for (int64_t state = n * k; state > 0; state = from[state]) {
    if (from[state] < 0)
      return inf;
    ends.push_back(state / k);
  }
  std::reverse(ends.begin(), ends.end());
  return best[n * k];
}

/// The distinct times of the micro-batches that fit the cap, ascending,
/// thinned to at most `most` (the largest always kept).
SmallVector<double> getCandidates(ArrayRef<int64_t> lengths,
                                  const MicrobatchPlanProblem &problem) {
  SmallVector<double> times;
  for (int64_t j = 1, n = lengths.size(); j <= n; ++j)
    forEachRunEndingAt(lengths, j, [&](int64_t, int64_t rows, int64_t len) {
      RunCost cost = getRunCost(problem, rows, len);
      if (cost.fits)
        times.push_back(cost.time);
      return cost.grows;
    });
  llvm::sort(times);
  times.erase(std::unique(times.begin(), times.end()), times.end());
  int64_t most = std::max<int64_t>(problem.maxCandidates, 2);
  if (int64_t(times.size()) <= most)
    return times;
  SmallVector<double> thinned;
  for (int64_t k = 0; k < most; ++k)
    thinned.push_back(times[k * (times.size() - 1) / (most - 1)]);
  return thinned;
}

/// Why sample `index` of `length` tokens cannot be a micro-batch alone:
/// no shape holds it, or it is over the memory cap.
llvm::Error checkAlone(const MicrobatchPlanProblem &problem, size_t index,
                       int64_t length) {
  RunCost alone = getRunCost(problem, 1, length);
  if (alone.fits)
    return llvm::Error::success();
  if (!alone.grows && !problem.shapes.empty()) {
    int64_t longest = 0;
    for (const MicrobatchShape &shape : problem.shapes)
      longest = std::max(longest, shape.length);
    return ScheduleError() << "sample " << index << " has " << length
                           << " tokens, more than the longest micro-batch "
                              "shape holds ("
                           << longest << ")";
  }
  double least = problem.memory.get(1, length);
  if (!problem.shapes.empty()) {
    least = std::numeric_limits<double>::infinity();
    for (const MicrobatchShape &shape : problem.shapes)
      if (shape.holds(1, length))
        least = std::min(least, shape.memory);
  }
  return ScheduleError() << "sample " << index << " of length " << length
                         << " needs " << formatQuantity(least)
                         << " of activation memory alone, over the cap of "
                         << formatQuantity(problem.memoryCap);
}

} // namespace

MicrobatchPlan
mlir::pp::sched::makeMicrobatchPlan(ArrayRef<int64_t> lengths,
                                    ArrayRef<int64_t> ends,
                                    const MicrobatchPlanProblem &problem) {
  MicrobatchPlan plan;
  int64_t start = 0;
  for (int64_t end : ends) {
    int64_t padded =
        *std::max_element(lengths.begin() + start, lengths.begin() + end);
    RunCost cost = getRunCost(problem, end - start, padded);
    double time =
        cost.fits ? cost.time : std::numeric_limits<double>::infinity();
    plan.begin.push_back(start);
    plan.rows.push_back(end - start);
    plan.paddedLength.push_back(padded);
    plan.shape.push_back(cost.shape);
    plan.slowest = std::max(plan.slowest, time);
    plan.total += time;
    start = end;
  }
  plan.objective = (problem.numStages - 1) * plan.slowest + plan.total;
  return plan;
}

llvm::Expected<MicrobatchPlan>
mlir::pp::sched::planMicrobatches(ArrayRef<int64_t> lengths,
                                  const MicrobatchPlanProblem &problem) {
  if (lengths.empty())
    return ScheduleError() << "no samples to cut into micro-batches";
  for (auto [index, length] : llvm::enumerate(lengths))
    if (length <= 0)
      return ScheduleError() << "sample " << index << " has length " << length
                             << "; lengths must be positive";
  for (auto [index, length] : llvm::enumerate(lengths))
    if (llvm::Error error = checkAlone(problem, index, length))
      return std::move(error);
  double bestObjective = std::numeric_limits<double>::infinity();
  SmallVector<int64_t> bestEnds, ends;
  for (double slowest : getCandidates(lengths, problem)) {
    // Candidates ascend: past this one no sum makes up for the delay.
    if ((problem.numStages - 1) * slowest >= bestObjective)
      break;
    double total = leastTotal(lengths, problem, slowest, ends);
    double objective = (problem.numStages - 1) * slowest + total;
    if (objective < bestObjective) {
      bestObjective = objective;
      bestEnds = ends;
    }
  }
  // Every sample alone fits, so only the count's multiple leaves no cut.
  if (bestEnds.empty())
    return ScheduleError() << "no cut of " << lengths.size()
                           << (lengths.size() == 1 ? " sample" : " samples")
                           << " into a multiple of "
                           << problem.microbatchMultiple << " micro-batches"
                           << (problem.shapes.empty() ? "" : " at the shapes");
  return makeMicrobatchPlan(lengths, bestEnds, problem);
}

StageCosts mlir::pp::sched::getMicrobatchCosts(const MicrobatchPlan &plan,
                                               ArrayRef<StageTokenCosts> stages,
                                               double transfer) {
  StageCosts costs;
  costs.transfer = transfer;
  MicrobatchCosts &table = costs.perMicrobatch;
  int64_t m = plan.getNumMicrobatches();
  table.numMicrobatches = m;
  auto fill = [&](TokenCost StageTokenCosts::*field,
                  SmallVector<double> &perStage,
                  SmallVector<double> &perMicrobatch) {
    for (const StageTokenCosts &stage : stages) {
      double largest = 0.0;
      for (int64_t mb = 0; mb < m; ++mb) {
        double value = (stage.*field).get(plan.rows[mb], plan.paddedLength[mb]);
        perMicrobatch.push_back(value);
        largest = std::max(largest, value);
      }
      perStage.push_back(largest);
    }
  };
  fill(&StageTokenCosts::forward, costs.forward, table.forward);
  fill(&StageTokenCosts::backwardInput, costs.backwardInput,
       table.backwardInput);
  fill(&StageTokenCosts::backwardWeight, costs.backwardWeight,
       table.backwardWeight);
  fill(&StageTokenCosts::activation, costs.activation, table.activation);
  fill(&StageTokenCosts::stash, costs.stash, table.stash);
  return costs;
}

SmallVector<int64_t> sched::orderLongestFirst(ArrayRef<int64_t> lengths) {
  SmallVector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(
      order, [&](int64_t x, int64_t y) { return lengths[x] > lengths[y]; });
  return order;
}

PaddedBaseline sched::getPaddedBaseline(ArrayRef<int64_t> lengths, int64_t rows,
                                        const MicrobatchPlanProblem &problem) {
  int64_t longest = *llvm::max_element(lengths);
  PaddedBaseline baseline;
  baseline.rows = rows;
  while (baseline.rows > 1 && problem.memory.get(baseline.rows, longest) >
                                  problem.memoryCap * (1 + 1e-12))
    --baseline.rows;
  SmallVector<int64_t> padded(lengths.size(), longest), ends;
  for (int64_t end = baseline.rows; end < int64_t(lengths.size());
       end += baseline.rows)
    ends.push_back(end);
  ends.push_back(lengths.size());
  baseline.objective = makeMicrobatchPlan(padded, ends, problem).objective;
  return baseline;
}
