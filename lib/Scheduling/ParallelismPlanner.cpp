//===- ParallelismPlanner.cpp - choose T, P and the replica count ---------===//

#include "pp/Scheduling/ParallelismPlanner.h"
#include "pp/Scheduling/CollectiveCost.h"
#include "pp/Scheduling/PartitionPlanner.h"
#include "pp/Scheduling/ScheduleEvaluator.h"
#include "pp/Scheduling/ScheduleTiming.h"
#include "pp/Scheduling/TransferOrder.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <tuple>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

namespace {

/// Per-op times and per-range weight bytes of the chain on one device of a
/// tensor-parallel group of T, and what ZeRO-3 gathered per param costs
/// over R replicas: per range, the all-gathers of its weights (one per
/// weight) and the most bytes whole at once, the weights whose spans from
/// first to last reading op overlap at one op.
class GroupCosts {
public:
  GroupCosts(const LayoutChain &chain, const TensorParallelWork &work,
             const DeviceDescription &device, int64_t parts, int64_t replicas)
      : size(chain.size()) {
    CollectiveLink link = CollectiveLink::getSlowest(device);
    for (int64_t op = 0; op < size; ++op) {
      double share = work.splitOps[op] ? 1.0 / parts : 1.0;
      double forward = chain.forward[op];
      double weight = chain.compute[op] - 2.0 * forward;
      double reduce =
          getRingAllReduceTime(work.allReduceBytes[op], parts, link);
      this->forward.push_back(forward * share + reduce);
      backwardInput.push_back(forward * share + reduce);
      backwardWeight.push_back(std::max(weight, 0.0) * share);
    }
    SmallVector<double> bytes, gather;
    for (auto [weight, whole] : llvm::enumerate(chain.weightBytes)) {
      bytes.push_back(whole / (work.splitWeights[weight] ? parts : 1));
      gather.push_back(getRingAllReduceTime(bytes.back(), replicas, link) / 2);
    }
    SmallVector<double> held = getHeldWhole(chain, bytes);
    // Distinct weight bytes of every range [begin, end), each split weight
    // 1/T, their gathers and the most held at once.
    weightBytes.assign(size * size, 0.0);
    gatherTime.assign(size * size, 0.0);
    gatherPeak.assign(size * size, 0.0);
    for (int64_t begin = 0; begin < size; ++begin) {
      llvm::DenseSet<int64_t> seen;
      double sum = 0.0, time = 0.0, peak = 0.0;
      for (int64_t end = begin + 1; end <= size; ++end) {
        for (int64_t weight : chain.weights[end - 1])
          if (seen.insert(weight).second) {
            sum += bytes[weight];
            time += gather[weight];
          }
        peak = std::max(peak, held[end - 1]);
        weightBytes[begin * size + end - 1] = sum;
        gatherTime[begin * size + end - 1] = time;
        gatherPeak[begin * size + end - 1] = peak;
      }
    }
  }

  double getWeightBytes(int64_t begin, int64_t end) const {
    return weightBytes[begin * size + end - 1];
  }
  /// One compute's all-gathers of the weights of the ops [begin, end).
  double getGatherTime(int64_t begin, int64_t end) const {
    return gatherTime[begin * size + end - 1];
  }
  /// The most of those weights whole at once, gathered per param.
  double getGatherPeak(int64_t begin, int64_t end) const {
    return gatherPeak[begin * size + end - 1];
  }
  /// F, B and W of the ops [begin, end).
  std::array<double, 3> getTimes(int64_t begin, int64_t end) const {
    std::array<double, 3> sums = {0.0, 0.0, 0.0};
    for (int64_t op = begin; op < end; ++op) {
      sums[0] += forward[op];
      sums[1] += backwardInput[op];
      sums[2] += backwardWeight[op];
    }
    return sums;
  }

private:
  /// Per op, the bytes of the weights whose first reading op is at or
  /// before it and whose last is at or after it.
  static SmallVector<double> getHeldWhole(const LayoutChain &chain,
                                          ArrayRef<double> bytes) {
    SmallVector<int64_t> first(bytes.size(), -1), last(bytes.size(), -1);
    for (int64_t op = 0; op < chain.size(); ++op)
      for (int64_t weight : chain.weights[op]) {
        if (first[weight] < 0)
          first[weight] = op;
        last[weight] = op;
      }
    SmallVector<double> delta(chain.size() + 1, 0.0), held;
    for (auto [weight, size] : llvm::enumerate(bytes)) {
      if (first[weight] < 0)
        continue;
      delta[first[weight]] += size;
      delta[last[weight] + 1] -= size;
    }
    double sum = 0.0;
    for (int64_t op = 0; op < chain.size(); ++op)
      held.push_back(sum += delta[op]);
    return held;
  }

  int64_t size;
  SmallVector<double> forward, backwardInput, backwardWeight;
  std::vector<double> weightBytes, gatherTime, gatherPeak;
};

/// What a pipeline stage holding the ops [begin, end) adds to its device
/// under each of its ZeRO levels, and the level it takes: the first, in
/// order of preference, under which it fits the cap.
struct StageLevels {
  const LayoutChain &chain;
  const GroupCosts &group;
  /// Per stage, its levels in order of preference.
  ArrayRef<SmallVector<int64_t>> levels;
  /// Per stage, the micro-batches (units) whose activations it holds.
  ArrayRef<double> inFlight;
  /// Bytes a device holds per byte of a stage's weights under a level.
  function_ref<double(int64_t level)> copies;
  int64_t slices;
  double cap;
  /// Whether ZeRO-3 stages gather per param.
  bool perParam;

  /// One compute's gathers of the ops' weights under `level`: per param
  /// under ZeRO-3, else none (a stage's gather is a collective apart).
  double getGatherTime(int64_t level, int64_t begin, int64_t end) const {
    return level == 3 && perParam ? group.getGatherTime(begin, end) : 0.0;
  }

  /// F + B + W (each forward and backward of a slice gathering per param)
  /// and the transfers at the stage's ends; the weights' state, the most
  /// gathered per param at once and the activations in flight.
  StageLoad getLevelLoad(int64_t level, int64_t stage, int64_t begin,
                         int64_t end) const {
    auto [f, b, w] = group.getTimes(begin, end);
    StageLoad load{f + b + w + 2.0 * slices * getGatherTime(level, begin, end),
                   0.0};
    if (stage > 0)
      load.time += 2.0 * chain.transferTime[begin];
    if (stage + 1 < int64_t(levels.size()))
      load.time += 2.0 * chain.transferTime[end];
    load.memory =
        copies(level) * group.getWeightBytes(begin, end) +
        (level == 3 && perParam ? group.getGatherPeak(begin, end) : 0.0) +
        inFlight[stage] * chain.activationBytes(begin, end) / slices;
    return load;
  }

  /// The stage's first level that fits, or none.
  std::optional<int64_t> choose(int64_t stage, int64_t begin,
                                int64_t end) const {
    for (int64_t level : levels[stage])
      if (getLevelLoad(level, stage, begin, end).memory <= cap)
        return level;
    return std::nullopt;
  }

  /// The load under the level the stage takes; one that fits under none
  /// loads its least memory, above the cap.
  StageLoad getLoad(int64_t stage, int64_t begin, int64_t end) const {
    if (std::optional<int64_t> level = choose(stage, begin, end))
      return getLevelLoad(*level, stage, begin, end);
    StageLoad least = getLevelLoad(levels[stage].front(), stage, begin, end);
    for (int64_t level : levels[stage]) {
      StageLoad other = getLevelLoad(level, stage, begin, end);
      if (other.memory < least.memory)
        least = other;
    }
    return least;
  }
};

/// Plans and times one layout.
class LayoutEvaluator {
public:
  LayoutEvaluator(const LayoutChain &chain, const TensorParallelWork &work,
                  const ParallelismRequest &request)
      : chain(chain), work(work), request(request),
        link(CollectiveLink::getSlowest(request.device)) {
    cap = request.memoryPerDevice > 0.0 ? request.memoryPerDevice
                                        : request.device.memoryCapacity;
  }

  void evaluate(ParallelismCandidate &candidate);

private:
  std::string checkTensorParallel(int64_t parts) const;
  std::string checkShape(const ParallelismCandidate &candidate) const;
  /// The ZeRO levels stage `stage` of `candidate` may take, in order of
  /// preference (the fixed one, or those on offer); none with ZeRO-3 where
  /// the schedule keeps several weight versions.
  SmallVector<int64_t> getLevels(const ParallelismCandidate &candidate,
                                 int64_t stage, int64_t weightVersions) const;
  void explainMemory(PartitionProblem partition,
                     ParallelismCandidate &candidate) const;
  /// Bytes of state per byte of a stage's weights under ZeRO `level`: the
  /// weights, their gradients and the optimizer's moments (the replica's
  /// block under ZeRO-1); under ZeRO-3 the replica's block of the weights
  /// besides the whole weights it gathers for the step (gathered per
  /// param, the whole weights held at once count apart).
  double getWeightCopies(int64_t level, bool perParam, int64_t replicas) const {
    if (level == 0 || replicas == 1)
      return 2.0 + request.optimizerStateCopies;
    bool gathersPerParam = level == 3 && perParam;
    return (gathersPerParam ? 1.0 : 2.0) +
           request.optimizerStateCopies / replicas +
           (level == 3 ? 1.0 / replicas : 0.0);
  }
  double getStepTime(const GeneratedSchedule &schedule, const StageCosts &costs,
                     ArrayRef<double> stageWeights,
                     const ParallelismCandidate &candidate) const;

  const LayoutChain &chain;
  const TensorParallelWork &work;
  const ParallelismRequest &request;
  CollectiveLink link;
  double cap;
};

} // namespace

std::string LayoutEvaluator::checkTensorParallel(int64_t parts) const {
  if (parts == 1)
    return "";
  if (!work.unsplittable.empty())
    return work.unsplittable;
  if (work.splitDims.empty())
    return "no weight splits: every device of a group would do all the work";
  for (auto &[name, size] : work.splitDims)
    if (size % parts != 0)
      return llvm::formatv("T = {0} does not divide {1} (size {2})", parts,
                           name, size)
          .str();
  return "";
}

/// Per action of a rank's `own` actions, the stages whose ZeRO-3 gather goes
/// right before it: before the first compute of each stage `gathers`
/// holds, and the receives (and exchange groups) that feed it, where
/// pp-insert-transfers puts it.
static SmallVector<SmallVector<int64_t, 1>>
getGatherPoints(ArrayRef<TimedAction> own,
                function_ref<bool(int64_t stage)> gathers) {
  SmallVector<SmallVector<int64_t, 1>> points(own.size());
  llvm::SmallDenseSet<int64_t, 4> seen;
  for (auto [index, action] : llvm::enumerate(own)) {
    if (action.kind != TimedAction::Kind::compute || !gathers(action.stage) ||
        !seen.insert(action.stage).second)
      continue;
    size_t before = index;
    while (before > 0 && (own[before - 1].kind == TimedAction::Kind::recv ||
                          (own[before].isTransfer() && own[before].grouped)))
      --before;
    points[before].push_back(action.stage);
  }
  return points;
}

/// The program of `schedule` with each stage's gradient collectives, by
/// its ZeRO level, after its rank's last compute of it and the optimizer
/// steps at the end (the gathers of ZeRO-3 stages gathered per stage
/// before their first compute), timed.
double
LayoutEvaluator::getStepTime(const GeneratedSchedule &schedule,
                             const StageCosts &costs,
                             ArrayRef<double> stageWeights,
                             const ParallelismCandidate &candidate) const {
  using Kind = TimedAction::Kind;
  int64_t replicas = candidate.replicas;
  ArrayRef<int64_t> zero = candidate.zero;
  int64_t numStages = schedule.stageRank.size();
  RankActions program = insertTransfers(schedule);
  std::vector<TimedAction> actions;
  SmallVector<int64_t> rankBegin = {0};
  auto collective = [](Kind kind, int64_t stage) {
    TimedAction action;
    action.kind = kind;
    action.stage = stage;
    return action;
  };
  // Gathered per param, the computes gather (their costs include it).
  auto gathersStage = [&](int64_t stage) {
    return zero[stage] == 3 && replicas > 1 && !candidate.gatherPerParam;
  };
  for (int64_t rank = 0; rank < program.getNumRanks(); ++rank) {
    MutableArrayRef<TimedAction> own = program.getRank(rank);
    SmallVector<int64_t> stages;
    SmallVector<SmallVector<int64_t, 1>> gathers =
        getGatherPoints(own, gathersStage);
    for (auto [index, action] : llvm::enumerate(own)) {
      for (int64_t stage : gathers[index])
        actions.push_back(collective(Kind::allGather, stage));
      actions.push_back(action);
      if (action.kind != Kind::compute || action.phase == Phase::forward ||
          replicas == 1)
        continue;
      bool last = llvm::none_of(own.drop_front(index + 1), [&](auto &next) {
        return next.kind == Kind::compute && next.stage == action.stage &&
               next.phase != Phase::forward;
      });
      if (!last)
        continue;
      stages.push_back(action.stage);
      actions.push_back(collective(zero[action.stage] != 0 ? Kind::reduceScatter
                                                           : Kind::allReduce,
                                   action.stage));
    }
    for (int64_t stage : stages) {
      actions.push_back(collective(Kind::optimizerStep, stage));
      if (zero[stage] == 1)
        actions.push_back(collective(Kind::allGather, stage));
    }
    rankBegin.push_back(actions.size());
  }
  ActionCosts actionCosts(costs);
  SmallVector<double> reduce;
  for (double bytes : stageWeights)
    reduce.push_back(getRingAllReduceTime(bytes, replicas, link));
  actionCosts.setAllReduceDurations(reduce);
  ScheduleTiming timing(numStages, request.numMicrobatches * request.numSlices);
  timing.setActions(std::move(actions), std::move(rankBegin));
  if (failed(timing.run(actionCosts, TransferSemantics::async)))
    return -1.0;
  return timing.getMakespan();
}

/// Why the candidate's shape cannot be planned: a fixed T, P or R it
/// differs from, a tensor-parallel degree the ops do not split into, a
/// stage count the chain, markers or ZeRO levels given per stage do not
/// allow; empty where it can.
std::string
LayoutEvaluator::checkShape(const ParallelismCandidate &candidate) const {
  int64_t numStages = candidate.stages;
  for (auto [fixed, value, name] :
       {std::tuple(request.fixedTensorParallel, candidate.tensorParallel, "T"),
        std::tuple(request.fixedStages, numStages, "P"),
        std::tuple(request.fixedReplicas, candidate.replicas, "R")})
    if (fixed > 0 && fixed != value)
      return llvm::formatv("{0} is fixed at {1}", name, fixed);
  if (std::string reason = checkTensorParallel(candidate.tensorParallel);
      !reason.empty())
    return reason;
  if (numStages > chain.size() || numStages > request.maxStages)
    return llvm::formatv("more stages than the step's {0} ops", chain.size());
  if (numStages < int64_t(request.markerCuts.size()) + 1)
    return llvm::formatv("the model's {0} stage markers make more stages",
                         request.markerCuts.size());
  size_t levels = request.fixedZero.size();
  if (levels > 1 && int64_t(levels) != numStages)
    return llvm::formatv("the ZeRO levels given are one per stage of {0}",
                         levels);
  return "";
}

SmallVector<int64_t>
LayoutEvaluator::getLevels(const ParallelismCandidate &candidate, int64_t stage,
                           int64_t weightVersions) const {
  ArrayRef<int64_t> fixed = request.fixedZero;
  SmallVector<int64_t> levels;
  if (!fixed.empty())
    levels = {fixed[fixed.size() == 1 ? 0 : stage]};
  else if (candidate.replicas == 1)
    levels = {llvm::min_element(request.zeroLevels)[0]};
  else
    levels = llvm::to_vector(request.zeroLevels);
  llvm::sort(levels);
  // ZeRO-3 gathers one weight version per step.
  if (candidate.replicas > 1 && weightVersions > 1)
    llvm::erase(levels, 3);
  return levels;
}

/// Why no partition fits the memory cap: the least memory any partition
/// needs on its fullest device and the stage that needs it, or that none
/// keeps each weight's users in one stage. `partition.load` gives each
/// range's least memory under any of its ZeRO levels.
void LayoutEvaluator::explainMemory(PartitionProblem partition,
                                    ParallelismCandidate &candidate) const {
  auto load = partition.load;
  auto memory = [&](int64_t stage, int64_t begin, int64_t end) {
    return StageLoad{load(stage, begin, end).memory, 0.0};
  };
  partition.memoryCap.clear();
  partition.load = memory;
  std::optional<Partition> smallest = planPartition(partition);
  if (!smallest) {
    candidate.reason = "no partition keeps each weight's users in one stage";
    return;
  }
  int64_t fullest = 0;
  for (int64_t stage = 0; stage < candidate.stages; ++stage) {
    int64_t begin = smallest->starts[stage];
    int64_t end = stage + 1 < candidate.stages ? smallest->starts[stage + 1]
                                               : partition.numOps;
    if (load(stage, begin, end).memory == smallest->bottleneck) {
      fullest = stage;
      break;
    }
  }
  candidate.memory = smallest->bottleneck;
  candidate.reason = llvm::formatv(
      "memory: needs {0} bytes per device, above {1}: stage {2} fits under "
      "no ZeRO level offered",
      formatQuantity(smallest->bottleneck), formatQuantity(cap), fullest);
}

void LayoutEvaluator::evaluate(ParallelismCandidate &candidate) {
  int64_t parts = candidate.tensorParallel, numStages = candidate.stages;
  int64_t replicas = candidate.replicas;
  candidate.reason = checkShape(candidate);
  if (!candidate.reason.empty())
    return;
  int64_t slices = request.numSlices;
  ScheduleProblem problem{numStages, request.numMicrobatches * slices,
                          numStages};
  problem.numSlices = slices;
  llvm::Expected<GeneratedSchedule> schedule =
      request.schedule.generate(problem);
  if (!schedule) {
    candidate.reason = llvm::toString(schedule.takeError());
    return;
  }
  SmallVector<SmallVector<int64_t>> levels;
  for (int64_t stage = 0; stage < numStages; ++stage) {
    levels.push_back(getLevels(candidate, stage, schedule->weightVersions));
    if (levels.back().empty()) {
      candidate.reason = "ZeRO-3 gathers one weight version per step";
      return;
    }
  }
  SmallVector<double> inFlight = countInFlight(*schedule);
  GroupCosts group(chain, work, request.device, parts, replicas);
  auto copies = [&](int64_t level) {
    return sched::getWeightCopies(
        getWeightCopies(level, candidate.gatherPerParam, replicas),
        schedule->weightVersions);
  };
  StageLevels stageLevels{chain,  group,  levels, inFlight,
                          copies, slices, cap,    candidate.gatherPerParam};
  auto load = [&](int64_t stage, int64_t begin, int64_t end) {
    return stageLevels.getLoad(stage, begin, end);
  };
  PartitionProblem partition;
  partition.numOps = chain.size();
  for (int64_t stage = 0; stage < numStages; ++stage)
    partition.stageRank.push_back(stage);
  partition.mustCut.assign(chain.size() + 1, false);
  partition.mayCut = chain.mayCut;
  for (int64_t cut : request.markerCuts)
    partition.mustCut[cut] = true;
  partition.load = load;
  partition.memoryCap.assign(numStages, cap);
  std::optional<Partition> plan = planPartition(partition);
  if (!plan)
    return explainMemory(partition, candidate);
  StageCosts costs;
  SmallVector<double> stageWeights;
  for (int64_t stage = 0; stage < numStages; ++stage) {
    int64_t begin = plan->starts[stage];
    int64_t end =
        stage + 1 < numStages ? plan->starts[stage + 1] : chain.size();
    int64_t level = *stageLevels.choose(stage, begin, end);
    candidate.zero.push_back(level);
    auto [f, b, w] = group.getTimes(begin, end);
    double gather = stageLevels.getGatherTime(level, begin, end);
    costs.forward.push_back(f / slices + gather);
    costs.backwardInput.push_back(b / slices + gather);
    costs.backwardWeight.push_back(w / slices);
    costs.activation.push_back(chain.activationBytes(begin, end) / slices);
    costs.stash.push_back(0.0);
    if (stage > 0)
      costs.transfer =
          std::max(costs.transfer, chain.transferTime[begin] / slices);
    stageWeights.push_back(group.getWeightBytes(begin, end));
    candidate.memory =
        std::max(candidate.memory,
                 stageLevels.getLevelLoad(level, stage, begin, end).memory);
  }
  if (candidate.gatherPerParam && !llvm::is_contained(candidate.zero, 3)) {
    // The same program as the candidate gathering per stage.
    candidate.zero.clear();
    candidate.memory = 0.0;
    candidate.reason = "no stage takes ZeRO-3 to gather per param";
    return;
  }
  candidate.bottleneck = plan->bottleneck;
  double step = getStepTime(*schedule, costs, stageWeights, candidate);
  if (step < 0.0) {
    candidate.reason = "the schedule deadlocks";
    return;
  }
  candidate.stepTime = step;
  candidate.batchTime = step / replicas;
}

int64_t sched::getZeroSum(const ParallelismCandidate &candidate) {
  int64_t sum = 0;
  for (int64_t level : candidate.zero)
    sum += level;
  return sum;
}

/// Whether a layout of `replicas` may gather ZeRO-3's weights per param.
static bool mayGatherPerParam(const ParallelismRequest &request,
                              int64_t replicas) {
  ArrayRef<int64_t> offered =
      request.fixedZero.empty() ? request.zeroLevels : request.fixedZero;
  return request.planParamGathers && replicas > 1 &&
         llvm::is_contained(offered, 3);
}

ParallelismPlan sched::planParallelism(const LayoutChain &chain,
                                       const TensorParallelWork &work,
                                       const ParallelismRequest &request) {
  ParallelismPlan plan;
  LayoutEvaluator evaluator(chain, work, request);
  int64_t devices = request.devices;
  for (int64_t parts = 1; parts <= devices; ++parts) {
    if (devices % parts != 0)
      continue;
    for (int64_t stages = 1; stages <= devices / parts; ++stages) {
      if ((devices / parts) % stages != 0)
        continue;
      int64_t replicas = devices / parts / stages;
      for (bool perParam : {false, true}) {
        if (perParam && !mayGatherPerParam(request, replicas))
          continue;
        ParallelismCandidate candidate;
        candidate.tensorParallel = parts;
        candidate.stages = stages;
        candidate.replicas = replicas;
        candidate.gatherPerParam = perParam;
        evaluator.evaluate(candidate);
        plan.candidates.push_back(std::move(candidate));
      }
    }
  }
  // The fastest per batch; among equals, the least sharded (sharding the
  // cap does not ask for buys nothing), gathers per stage, then the least
  // memory.
  auto key = [](const ParallelismCandidate &candidate) {
    return std::tuple(candidate.batchTime, getZeroSum(candidate),
                      candidate.gatherPerParam, candidate.memory);
  };
  for (auto [index, candidate] : llvm::enumerate(plan.candidates))
    if (candidate.reason.empty() &&
        (!plan.chosen || key(candidate) < key(plan.candidates[*plan.chosen])))
      plan.chosen = index;
  if (!plan.chosen)
    return plan;
  const ParallelismCandidate &best = plan.candidates[*plan.chosen];
  for (auto [index, candidate] : llvm::enumerate(plan.candidates)) {
    if (index == *plan.chosen || !candidate.reason.empty())
      continue;
    if (candidate.batchTime == best.batchTime &&
        getZeroSum(candidate) > getZeroSum(best))
      candidate.reason = "as fast, sharding more";
    else if (candidate.batchTime == best.batchTime && candidate.gatherPerParam)
      candidate.reason = "as fast, gathering per param";
    else
      candidate.reason =
          llvm::formatv("slower: {0} s per batch, {1:P1} more",
                        formatQuantity(candidate.batchTime),
                        candidate.batchTime / best.batchTime - 1.0)
              .str();
  }
  return plan;
}
