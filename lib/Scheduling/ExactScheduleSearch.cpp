//===- ExactScheduleSearch.cpp - branch and bound over schedules ----------===//
//
// A depth-first branch and bound over the order in which actions are
// appended to their ranks; see ExactScheduleSearch.h for why it covers every
// schedule and which states it prunes. When inputs are there comes from the
// timing model's DataflowTimes (ScheduleTiming.h), recorded as actions are
// appended and erased as the search backtracks.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ExactScheduleSearch.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// The phases of a split backward, as indices into the search's tables.
enum PhaseIndex : int { kF = 0, kB = 1, kW = 2, kNumPhases = 3 };
constexpr Phase kPhaseOf[kNumPhases] = {Phase::forward, Phase::backward_input,
                                        Phase::backward_weight};
/// Among actions that start at the same time, which to try first: input
/// gradients unblock the stage before, forwards the stage after, and weight
/// gradients nobody.
constexpr int kPreference[kNumPhases] = {1, 0, 2};
/// The most states recorded per counts for the dominance check, and the
/// most times recorded in all (64 MiB).
constexpr size_t kMaxRecorded = 32;
constexpr size_t kMaxRecordedTimes = size_t(1) << 23;

/// An action the current state can append, and when it would start.
struct Candidate {
  double start;
  int phase;
  int64_t stage;
};

class ExactScheduleSearch {
public:
  ExactScheduleSearch(const ScheduleProblem &problem, const ActionCosts &costs,
                      ArrayRef<int64_t> stageRank, double upperBound,
                      int64_t nodeBudget)
      : stages(problem.numStages), mbs(problem.numMicrobatches),
        ranks(problem.numRanks), stageRank(stageRank),
        dataflow(stages, mbs, stageRank, costs.transferTime()),
        cap(problem.getMemoryCaps()), best(upperBound), budget(nodeBudget) {
    for (int phase = 0; phase < kNumPhases; ++phase)
      for (int64_t s = 0; s < stages; ++s)
        for (int64_t mb = 0; mb < mbs; ++mb) {
          duration.push_back(costs.duration(kPhaseOf[phase], s, mb));
          delta.push_back(costs.memoryDelta(kPhaseOf[phase], s, mb));
        }
    done.assign(kNumPhases * stages, 0);
    // Every rank starts with the step's set-up and ends with its stages'
    // optimizer steps.
    clock.assign(ranks, costs.stepOverhead());
    optimizer = costs.getOptimizerPerRank(stageRank, ranks);
    held.assign(ranks, 0.0);
    earliest.assign(kNumPhases * stages * mbs, 0.0);
    remaining = earliest.size();
    computeTails();
  }

  ExactSearchResult run() {
    search();
    ExactSearchResult result;
    result.exhaustive = !aborted;
    result.nodes = nodes;
    result.makespan = best;
    if (bestRanks)
      result.schedule = GeneratedSchedule{SmallVector<int64_t>(stageRank),
                                          std::move(*bestRanks), ""};
    return result;
  }

private:
  int64_t slot(int phase, int64_t s) const { return phase * stages + s; }
  int64_t action(int phase, int64_t s, int64_t mb) const {
    return slot(phase, s) * mbs + mb;
  }
  double length(int phase, int64_t s, int64_t mb) const {
    return duration[action(phase, s, mb)];
  }
  bool crosses(int64_t from, int64_t to) const {
    return stageRank[from] != stageRank[to];
  }
  double arrival(int64_t from, int64_t to, double time) const {
    return dataflow.arrival(from, to, time);
  }
  /// When the `mb`-th `phase` action of stage `s`, which ran, ended.
  double endOf(int phase, int64_t s, int64_t mb) const {
    return dataflow.getEnd(kPhaseOf[phase], s, mb);
  }

  /// When the inputs of the next `phase` action of stage `s` are there, or
  /// nothing if they are not computed yet.
  std::optional<double> readyTime(int phase, int64_t s) const {
    int64_t mb = done[slot(phase, s)];
    if (mb == mbs)
      return std::nullopt;
    return dataflow.readyTime(kPhaseOf[phase], s, mb);
  }

  /// The longest chain of dependent actions from each action to the end,
  /// its own duration included. Besides data dependencies, a stage runs its
  /// micro-batches of a phase in order.
  void computeTails() {
    tail.assign(earliest.size(), 0.0);
    auto after = [&](int phase, int64_t s, int64_t mb) {
      return mb + 1 < mbs ? tail[action(phase, s, mb + 1)] : 0.0;
    };
    for (int64_t s = 0; s < stages; ++s)
      for (int64_t mb = mbs - 1; mb >= 0; --mb)
        tail[action(kW, s, mb)] =
            length(kW, s, mb) + std::max(after(kW, s, mb), finishing(s));
    for (int64_t s = 0; s < stages; ++s)
      for (int64_t mb = mbs - 1; mb >= 0; --mb) {
        double next = std::max(after(kB, s, mb), tail[action(kW, s, mb)]);
        if (s > 0)
          next = std::max(next, arrival(s, s - 1, tail[action(kB, s - 1, mb)]));
        tail[action(kB, s, mb)] =
            length(kB, s, mb) + std::max(next, finishing(s));
      }
    for (int64_t s = stages - 1; s >= 0; --s)
      for (int64_t mb = mbs - 1; mb >= 0; --mb) {
        double next = std::max(after(kF, s, mb), tail[action(kB, s, mb)]);
        if (s + 1 < stages)
          next = std::max(next, arrival(s, s + 1, tail[action(kF, s + 1, mb)]));
        tail[action(kF, s, mb)] =
            length(kF, s, mb) + std::max(next, finishing(s));
      }
  }

  /// What stage `s`'s rank does after its last action: its optimizer steps.
  double finishing(int64_t s) const { return optimizer[stageRank[s]]; }
  /// When the step ends if nothing else runs: every rank's clock and its
  /// optimizer steps.
  double getFinish() const {
    double finish = 0.0;
    for (auto [free, tailWork] : llvm::zip_equal(clock, optimizer))
      finish = std::max(finish, free + tailWork);
    return finish;
  }

  /// The earliest an action not run yet can start, from its rank's clock,
  /// its inputs (run or not) and the action before it on its stage.
  double earliestStart(int phase, int64_t s, int64_t mb) const {
    double start = clock[stageRank[s]];
    int64_t first = done[slot(phase, s)];
    if (mb > first)
      start = std::max(start, earliest[action(phase, s, mb - 1)] +
                                  length(phase, s, mb - 1));
    // An input that is not run yet is ready no earlier than it could end;
    // one on the same rank ended before the rank's clock.
    auto input = [&](int from, int64_t t) {
      bool ran = mb < done[slot(from, t)];
      double ready = ran ? endOf(from, t, mb)
                         : earliest[action(from, t, mb)] + length(from, t, mb);
      start = std::max(start, arrival(t, s, ready));
    };
    if (phase == kF && s > 0)
      input(kF, s - 1);
    if (phase == kB) {
      input(kF, s);
      if (s + 1 < stages)
        input(kB, s + 1);
    }
    if (phase == kW)
      input(kB, s);
    return start;
  }

  /// A makespan no completion of the current state beats: the longest
  /// remaining chain of dependent actions, and on each rank, the work of
  /// the (phase, stage) sequences that cannot start before a given time.
  double lowerBound() {
    double bound = getFinish();
    // Per rank: when each sequence of its stages can start, and its work.
    SmallVector<SmallVector<std::pair<double, double>, 6>> perRank(ranks);
    auto visit = [&](int phase, int64_t s) {
      int64_t first = done[slot(phase, s)];
      double work = 0.0;
      for (int64_t mb = first; mb < mbs; ++mb) {
        double start = earliestStart(phase, s, mb);
        earliest[action(phase, s, mb)] = start;
        bound = std::max(bound, start + tail[action(phase, s, mb)]);
        work += length(phase, s, mb);
      }
      if (first < mbs)
        perRank[stageRank[s]].push_back(
            {earliest[action(phase, s, first)], work});
    };
    // Inputs before their consumers: forwards down, input gradients up.
    for (int64_t s = 0; s < stages; ++s)
      visit(kF, s);
    for (int64_t s = stages - 1; s >= 0; --s)
      visit(kB, s);
    for (int64_t s = 0; s < stages; ++s)
      visit(kW, s);
    for (auto [rank, sequences] : llvm::enumerate(perRank))
      for (auto [from, unused] : sequences) {
        double work = optimizer[rank];
        for (auto [start, length] : sequences)
          if (start >= from)
            work += length;
        bound = std::max(bound, from + work);
      }
    return bound;
  }

  /// Whether an earlier state with the same counts had no later clocks and
  /// no later results in flight between ranks; records this state if not.
  bool dominated() {
    std::string key;
    for (int64_t count : done) {
      auto narrow = static_cast<uint32_t>(count);
      key.append(reinterpret_cast<const char *>(&narrow), sizeof(narrow));
    }
    SmallVector<double> times(clock);
    for (int64_t s = 0; s + 1 < stages; ++s)
      if (crosses(s, s + 1))
        for (int64_t mb = done[slot(kF, s + 1)]; mb < done[slot(kF, s)]; ++mb)
          times.push_back(endOf(kF, s, mb));
    for (int64_t s = 1; s < stages; ++s)
      if (crosses(s, s - 1))
        for (int64_t mb = done[slot(kB, s - 1)]; mb < done[slot(kB, s)]; ++mb)
          times.push_back(endOf(kB, s, mb));
    std::vector<double> &front = memo[key];
    size_t width = times.size();
    auto noLater = [&](const double *a, const double *b) {
      for (size_t i = 0; i < width; ++i)
        if (a[i] > b[i])
          return false;
      return true;
    };
    for (size_t at = 0; at < front.size(); at += width)
      if (noLater(&front[at], times.data()))
        return true;
    // Forget the recorded states this one dominates.
    size_t kept = 0;
    for (size_t at = 0; at < front.size(); at += width) {
      if (noLater(times.data(), &front[at]))
        continue;
      std::copy_n(&front[at], width, &front[kept]);
      kept += width;
    }
    recordedTimes -= front.size() - kept;
    front.resize(kept);
    // Forgetting states only prunes less; it bounds the time spent here.
    if (front.size() >= kMaxRecorded * width) {
      front.erase(front.begin(), front.begin() + width);
      recordedTimes -= width;
    }
    if (recordedTimes + width <= kMaxRecordedTimes) {
      front.insert(front.end(), times.begin(), times.end());
      recordedTimes += width;
    }
    return false;
  }

  /// The actions the state can append within their ranks' memory caps,
  /// those that start first (and are likelier to lead to a fast schedule)
  /// first.
  SmallVector<Candidate> candidates() const {
    SmallVector<Candidate> result;
    for (int64_t s = 0; s < stages; ++s)
      for (int phase = 0; phase < kNumPhases; ++phase) {
        std::optional<double> ready = readyTime(phase, s);
        int64_t rank = stageRank[s];
        if (!ready ||
            held[rank] + delta[action(phase, s, done[slot(phase, s)])] >
                cap[rank] + 1e-9)
          continue;
        result.push_back({std::max(clock[rank], *ready), phase, s});
      }
    llvm::sort(result, [](const Candidate &a, const Candidate &b) {
      if (a.start != b.start)
        return a.start < b.start;
      if (a.phase != b.phase)
        return kPreference[a.phase] < kPreference[b.phase];
      return a.stage > b.stage;
    });
    return result;
  }

  void recordBest() {
    best = getFinish();
    bestRanks.emplace(ranks);
    for (auto [rank, scheduled] : path)
      (*bestRanks)[rank].push_back(scheduled);
  }

  void search() {
    if (++nodes > budget) {
      aborted = true;
      return;
    }
    if (remaining == 0) {
      if (getFinish() < best - 1e-9)
        recordBest();
      return;
    }
    if (lowerBound() >= best - 1e-9 || dominated())
      return;
    for (const Candidate &next : candidates()) {
      int64_t s = next.stage, rank = stageRank[s];
      int64_t at = slot(next.phase, s), mb = done[at];
      int64_t id = action(next.phase, s, mb);
      double before = clock[rank];
      clock[rank] = next.start + duration[id];
      dataflow.record(kPhaseOf[next.phase], s, mb, clock[rank]);
      held[rank] += delta[id];
      ++done[at];
      --remaining;
      path.push_back({rank, {kPhaseOf[next.phase], s, mb}});
      search();
      path.pop_back();
      ++remaining;
      --done[at];
      dataflow.erase(kPhaseOf[next.phase], s, mb);
      held[rank] -= delta[id];
      clock[rank] = before;
      if (aborted)
        return;
    }
  }

  int64_t stages, mbs, ranks;
  ArrayRef<int64_t> stageRank;
  /// When the actions that ran ended, and when inputs are there.
  DataflowTimes dataflow;
  /// Per rank: the activation memory it may hold.
  SmallVector<double> cap;
  /// Per (phase, stage, micro-batch): duration and memory change; per
  /// (phase, stage): micro-batches run.
  SmallVector<double> duration, delta;
  SmallVector<int64_t> done;
  /// Per rank: when it is free, and the activation memory it holds.
  SmallVector<double> clock, held;
  /// Per rank: its optimizer steps, which end its step.
  SmallVector<double> optimizer;
  /// Per (phase, stage, micro-batch): its longest chain to the end, and
  /// (scratch for the bound) its earliest start.
  std::vector<double> tail, earliest;
  int64_t remaining;
  /// The actions appended so far, with their ranks.
  SmallVector<std::pair<int64_t, ScheduledAction>> path;
  /// Per counts: the clocks and in-flight times of states already searched.
  std::unordered_map<std::string, std::vector<double>> memo;
  size_t recordedTimes = 0;
  double best;
  std::optional<SmallVector<SmallVector<ScheduledAction>>> bestRanks;
  int64_t nodes = 0, budget;
  bool aborted = false;
};

} // namespace

ExactSearchResult mlir::pp::sched::searchFastestSchedule(
    const ScheduleProblem &problem, const ActionCosts &costs,
    ArrayRef<int64_t> stageRank, double upperBound, int64_t nodeBudget) {
  return ExactScheduleSearch(problem, costs, stageRank, upperBound, nodeBudget)
      .run();
}
