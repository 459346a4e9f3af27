//===- ZeroBubbleGreedy.cpp - Zero Bubble's heuristic schedule ------------===//
//
// Builds the per-stage orders round by round while keeping each stage's
// clock, memory and accumulated waiting, so that weight gradients go where
// they fill a wait and forwards of earlier stages are pulled in on demand.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ZeroBubbleGreedy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

#include <algorithm>
#include <vector>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

SmallVector<ZeroBubblePolicy> mlir::pp::sched::getZeroBubblePolicies() {
  SmallVector<ZeroBubblePolicy> policies;
  for (bool warmup : {true, false})
    for (bool holdBack : {true, false})
      for (bool fillAlways : {true, false})
        policies.push_back({warmup, holdBack, fillAlways});
  return policies;
}

namespace {

class ZeroBubbleBuilder {
public:
  ZeroBubbleBuilder(const ScheduleProblem &problem, const ActionCosts &costs,
                    const ZeroBubblePolicy &policy)
      : problem(problem), costs(costs), policy(policy),
        stages(problem.numStages), m(problem.numMicrobatches),
        comm(costs.transferTime()), caps(problem.getMemoryCaps()) {}

  FailureOr<GeneratedSchedule> build();

private:
  /// The next micro-batch of `phase` on stage `s`.
  int64_t &next(Phase phase, int64_t s) {
    return nextMb[static_cast<int>(phase)][s];
  }
  int64_t next(Phase phase, int64_t s) const {
    return nextMb[static_cast<int>(phase)][s];
  }
  /// The duration of the next action of `phase` on stage `s`.
  double duration(Phase phase, int64_t s) const {
    return costs.duration(phase, s, next(phase, s));
  }
  double &endOf(Phase phase, int64_t s, int64_t mb) {
    return (phase == Phase::forward ? forwardEnd : backwardEnd)[s * m + mb];
  }
  /// When the inputs of the next action of `phase` on `s` are there.
  double arrival(Phase phase, int64_t s);
  /// Appends the next action of `phase` to stage `s`.
  void run(int64_t s, Phase phase);
  bool fits(int64_t s, Phase phase) const {
    return memory[s] + costs.memoryDelta(phase, s, next(phase, s)) <=
           caps[s] + 1e-9;
  }
  /// Runs weight gradients until the next `phase` fits the cap.
  bool makeRoom(int64_t s, Phase phase);
  /// Runs weight gradients while stage `s` waits for an input due at
  /// `ready`.
  void fillUntil(int64_t s, double ready);
  /// Runs forwards of `s` (and, first, of the stages before) up to `mb`.
  bool ensureForward(int64_t s, int64_t mb);
  bool warmUp();
  bool runRound();

  const ScheduleProblem &problem;
  const ActionCosts &costs;
  const ZeroBubblePolicy &policy;
  int64_t stages, m;
  double comm;
  SmallVector<double> caps;
  SmallVector<int64_t> nextMb[3];
  std::vector<double> forwardEnd, backwardEnd;
  /// Per stage: when it is free, what it holds, and how long it waited
  /// since its first forward.
  SmallVector<double> free, memory, idle;
  GeneratedSchedule schedule;
};

} // namespace

double ZeroBubbleBuilder::arrival(Phase phase, int64_t s) {
  int64_t mb = next(phase, s);
  if (phase == Phase::forward)
    return s == 0 ? 0.0 : endOf(Phase::forward, s - 1, mb) + comm;
  if (phase == Phase::backward_input) {
    double own = endOf(Phase::forward, s, mb);
    return s == stages - 1
               ? own
               : std::max(own, endOf(Phase::backward_input, s + 1, mb) + comm);
  }
  return endOf(Phase::backward_input, s, mb);
}

void ZeroBubbleBuilder::run(int64_t s, Phase phase) {
  int64_t mb = next(phase, s);
  double start = std::max(free[s], arrival(phase, s));
  if (next(Phase::forward, s) > 0)
    idle[s] += start - free[s];
  free[s] = start + costs.duration(phase, s, mb);
  if (phase != Phase::backward_weight)
    endOf(phase, s, mb) = free[s];
  memory[s] += costs.memoryDelta(phase, s, mb);
  ++next(phase, s);
  schedule.ranks[s].push_back({phase, s, mb});
}

bool ZeroBubbleBuilder::makeRoom(int64_t s, Phase phase) {
  while (!fits(s, phase)) {
    if (next(Phase::backward_weight, s) >= next(Phase::backward_input, s))
      return false;
    run(s, Phase::backward_weight);
  }
  return true;
}

void ZeroBubbleBuilder::fillUntil(int64_t s, double ready) {
  auto pending = [&] {
    return next(Phase::backward_weight, s) < next(Phase::backward_input, s);
  };
  // Weight gradients that end before the input arrives are free.
  while (pending() && free[s] + duration(Phase::backward_weight, s) <= ready)
    run(s, Phase::backward_weight);
  if (!pending() || free[s] >= ready)
    return;
  // One that delays the stage only while it has waited less than the stage
  // that waited most.
  double worst = *llvm::max_element(idle);
  if (policy.fillAlways || ready - free[s] > worst - idle[s])
    run(s, Phase::backward_weight);
}

bool ZeroBubbleBuilder::ensureForward(int64_t s, int64_t mb) {
  if (mb >= m)
    return false;
  while (next(Phase::forward, s) <= mb) {
    if (s > 0 && !ensureForward(s - 1, next(Phase::forward, s)))
      return false;
    if (!makeRoom(s, Phase::forward))
      return false;
    run(s, Phase::forward);
  }
  return true;
}

/// Micro-batch 0's forwards, the warm-up forwards each stage can run before
/// micro-batch 0's backward reaches it (no more than the stage before runs,
/// so that they can arrive), then micro-batch 0's backwards.
bool ZeroBubbleBuilder::warmUp() {
  for (int64_t s = 0; s < stages; ++s) {
    if (!makeRoom(s, Phase::forward))
      return false;
    run(s, Phase::forward);
  }
  SmallVector<int64_t> extra(stages, 0);
  double back = endOf(Phase::forward, stages - 1, 0) +
                duration(Phase::backward_input, stages - 1);
  for (int64_t s = stages - 2; s >= 0; --s) {
    double t = free[s], held = memory[s];
    while (next(Phase::forward, s) + extra[s] < m) {
      int64_t mb = next(Phase::forward, s) + extra[s];
      double forward = costs.duration(Phase::forward, s, mb);
      double activation = costs.memoryDelta(Phase::forward, s, mb);
      if (held + activation > caps[s] + 1e-9)
        break;
      if (policy.warmupEndsBeforeBackward ? t + forward > back + comm
                                          : t >= back + comm)
        break;
      held += activation;
      t += forward;
      ++extra[s];
    }
    back = std::max(t, back + comm) + duration(Phase::backward_input, s);
  }
  for (int64_t s = 1; s < stages; ++s)
    while (extra[s] > 0 && extra[s] >= extra[s - 1] &&
           next(Phase::forward, s) + extra[s] < m)
      --extra[s];
  for (int64_t s = 0; s < stages; ++s)
    if (extra[s] && !ensureForward(s, next(Phase::forward, s) + extra[s] - 1))
      return false;
  for (int64_t s = stages - 1; s >= 0; --s) {
    if (!makeRoom(s, Phase::backward_input))
      return false;
    run(s, Phase::backward_input);
  }
  return true;
}

/// A forward on every stage that has one left (unless it runs ahead of the
/// next stage, or a later stage has none), then the next micro-batch's
/// backwards from the last stage down.
bool ZeroBubbleBuilder::runRound() {
  SmallVector<bool> want(stages);
  for (int64_t s = 0; s < stages; ++s)
    want[s] = next(Phase::forward, s) < m;
  if (policy.holdBack)
    for (int64_t s = 0; s + 1 < stages; ++s)
      if (want[s] &&
          next(Phase::forward, s) >= next(Phase::forward, s + 1) + 2 &&
          free[s] >= free[s + 1] + duration(Phase::forward, s + 1) +
                         duration(Phase::backward_input, s + 1) + comm)
        want[s] = false;
  for (int64_t s = stages - 2; s >= 0; --s)
    want[s] = want[s] && want[s + 1];
  for (int64_t s = 0; s < stages; ++s) {
    if (!want[s])
      continue;
    if (s > 0 && !ensureForward(s - 1, next(Phase::forward, s)))
      return false;
    if (!makeRoom(s, Phase::forward))
      return false;
    if (s > 0)
      fillUntil(s,
                endOf(Phase::forward, s - 1, next(Phase::forward, s)) + comm);
    run(s, Phase::forward);
  }
  for (int64_t s = stages - 1; s >= 0; --s) {
    // A stage that holds no forward for this backward catches up.
    if (!ensureForward(s, next(Phase::backward_input, s)))
      return false;
    if (!makeRoom(s, Phase::backward_input))
      return false;
    if (s < stages - 1)
      fillUntil(s, endOf(Phase::backward_input, s + 1,
                         next(Phase::backward_input, s)) +
                       comm);
    run(s, Phase::backward_input);
  }
  return true;
}

FailureOr<GeneratedSchedule> ZeroBubbleBuilder::build() {
  if (problem.numRanks != stages)
    return failure();
  for (SmallVector<int64_t> &mbs : nextMb)
    mbs.assign(stages, 0);
  forwardEnd.assign(stages * m, 0.0);
  backwardEnd.assign(stages * m, 0.0);
  free.assign(stages, 0.0);
  memory.assign(stages, 0.0);
  idle.assign(stages, 0.0);
  schedule = {llvm::to_vector(llvm::seq<int64_t>(0, stages)), {}, ""};
  schedule.ranks.resize(stages);
  if (!warmUp())
    return failure();
  for (int64_t round = 1; round < m; ++round)
    if (!runRound())
      return failure();
  for (int64_t s = 0; s < stages; ++s)
    while (next(Phase::backward_weight, s) < m)
      run(s, Phase::backward_weight);
  return std::move(schedule);
}

FailureOr<GeneratedSchedule>
mlir::pp::sched::buildZeroBubbleGreedy(const ScheduleProblem &problem,
                                       const ActionCosts &costs,
                                       const ZeroBubblePolicy &policy) {
  return ZeroBubbleBuilder(problem, costs, policy).build();
}
