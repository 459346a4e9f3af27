//===- Registry.cpp - the table of built-in schedules ---------------------===//
//
// Maps schedule names to their generators: the built-ins and those a pass
// plugin registers.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleGenerators.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir::pp;
using namespace mlir::pp::sched;

static const ScheduleGenerator kGenerators[] = {
    {"gpipe", generateGPipe},
    {"1f1b", generateOneFOneB},
    {"interleaved-1f1b", generateInterleavedOneFOneB},
    {"looped-bfs", generateLoopedBFS},
    {"zb-h1", generateZeroBubbleH1},
    {"zb-h2", generateZeroBubbleH2},
    {"zbv", generateZeroBubbleV},
    {"v-half", generateVHalf},
    {"v-min", generateVMin},
    {"dualpipev", generateDualPipeV},
    {"greedy", generateGreedy},
    {"hanayo", generateHanayo},
    {"interleaved-zb", generateInterleavedZeroBubble},
    {"pipedream-2bw", generatePipeDream2BW},
    {"seq1f1b", generateSeq1F1B},
    {"exact", generateExact},
    {"auto", generateAuto},
};

/// The built-in generators followed by those registered at run time.
static llvm::SmallVector<ScheduleGenerator> &getRegistry() {
  static llvm::SmallVector<ScheduleGenerator> registry(std::begin(kGenerators),
                                                       std::end(kGenerators));
  return registry;
}

llvm::ArrayRef<ScheduleGenerator> mlir::pp::sched::getScheduleGenerators() {
  return getRegistry();
}

const ScheduleGenerator *
mlir::pp::sched::lookupScheduleGenerator(llvm::StringRef name) {
  for (const ScheduleGenerator &generator : getRegistry())
    if (generator.name == name)
      return &generator;
  return nullptr;
}

mlir::LogicalResult
mlir::pp::sched::registerScheduleGenerator(ScheduleGenerator generator) {
  if (lookupScheduleGenerator(generator.name))
    return mlir::failure();
  getRegistry().push_back(generator);
  return mlir::success();
}

std::string mlir::pp::sched::listScheduleGenerators() {
  return llvm::join(
      llvm::map_range(getRegistry(),
                      [](const ScheduleGenerator &g) { return g.name.str(); }),
      ", ");
}

llvm::SmallVector<int64_t>
mlir::pp::sched::identityPlacement(const ScheduleProblem &problem) {
  return llvm::to_vector(llvm::seq<int64_t>(0, problem.numStages));
}

llvm::SmallVector<int64_t>
mlir::pp::sched::loopedPlacement(const ScheduleProblem &problem) {
  return llvm::to_vector(
      llvm::map_range(llvm::seq<int64_t>(0, problem.numStages),
                      [&](int64_t stage) { return stage % problem.numRanks; }));
}

llvm::SmallVector<int64_t>
mlir::pp::sched::wavePlacement(const ScheduleProblem &problem) {
  int64_t p = problem.numRanks;
  return llvm::to_vector(
      llvm::map_range(llvm::seq<int64_t>(0, problem.numStages), [&](int64_t s) {
        return (s / p) % 2 == 0 ? s % p : p - 1 - s % p;
      }));
}

int64_t
mlir::pp::sched::getMicrobatchMultiple(const ScheduleGenerator &generator,
                                       int64_t numRanks) {
  return generator.generate == generateInterleavedOneFOneB ? numRanks : 1;
}

llvm::SmallVector<llvm::SmallVector<int64_t>>
mlir::pp::sched::standardPlacements(const ScheduleProblem &problem) {
  if (problem.numStages == problem.numRanks)
    return {identityPlacement(problem)};
  llvm::SmallVector<llvm::SmallVector<int64_t>> placements = {
      loopedPlacement(problem)};
  // The waves of every W with 2W stages per rank; W = 1 is the V.
  if (problem.numStages % (2 * problem.numRanks) == 0 && problem.numRanks > 1)
    placements.push_back(wavePlacement(problem));
  return placements;
}

llvm::Error
mlir::pp::sched::requireOneStagePerRank(const ScheduleProblem &problem,
                                        llvm::StringRef schedule) {
  if (problem.numRanks == problem.numStages)
    return llvm::Error::success();
  return ScheduleError() << "schedule '" << schedule
                         << "' runs one stage per rank, but there are "
                         << problem.numStages << " stages on "
                         << problem.numRanks << " ranks";
}

void mlir::pp::sched::appendOneFOneBSteps(
    llvm::SmallVectorImpl<ScheduledAction> &actions,
    const ScheduleProblem &problem, int64_t stage, int64_t warmup) {
  int64_t m = problem.numMicrobatches;
  int64_t forward = 0, backward = 0;
  for (; forward < std::min(warmup, m); ++forward)
    actions.push_back({Phase::forward, stage, forward});
  while (forward < m) {
    actions.push_back({Phase::forward, stage, forward++});
    appendBackward(actions, problem, stage, backward++);
  }
  while (backward < m)
    appendBackward(actions, problem, stage, backward++);
}

void mlir::pp::sched::appendLaggedSteps(
    llvm::SmallVectorImpl<ScheduledAction> &actions, int64_t stage,
    int64_t numMicrobatches, int64_t backwardLag, int64_t weightLag) {
  appendLaggedSteps(actions, numMicrobatches, backwardLag, weightLag,
                    [&](Phase phase, int64_t mb) -> ScheduledAction {
                      return {phase, stage, mb};
                    });
}

void mlir::pp::sched::appendLaggedSteps(
    llvm::SmallVectorImpl<ScheduledAction> &actions, int64_t numSteps,
    int64_t backwardLag, int64_t weightLag,
    llvm::function_ref<ScheduledAction(Phase, int64_t)> stepAction) {
  auto inRange = [&](int64_t k) { return k >= 0 && k < numSteps; };
  for (int64_t x = 0; x < numSteps + weightLag; ++x) {
    if (inRange(x))
      actions.push_back(stepAction(Phase::forward, x));
    if (inRange(x - backwardLag))
      actions.push_back(stepAction(Phase::backward_input, x - backwardLag));
    if (inRange(x - weightLag))
      actions.push_back(stepAction(Phase::backward_weight, x - weightLag));
  }
}
