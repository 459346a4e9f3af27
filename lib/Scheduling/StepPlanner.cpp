//===- StepPlanner.cpp - a plan and a schedule per training step ----------===//
//
// Each step: sort, cut by the dynamic program at the compiled shapes, and
// schedule each distinct shape sequence once from its micro-batches' costs.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/StepPlanner.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

SmallVector<int64_t>
mlir::pp::sched::sortLongestFirst(ArrayRef<int64_t> lengths) {
  auto order = llvm::to_vector(llvm::seq<int64_t>(0, lengths.size()));
  llvm::stable_sort(
      order, [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  return order;
}

/// The dynamic program's view of `shape`: one micro-batch takes its
/// slowest stage's F + B + W and holds, on a rank, the activations of the
/// rank's stages (at most ceil(S / R) by the standard placements): as many
/// as the largest stage's, as the generators that honour caps with several
/// stages per rank (`greedy`, `hanayo`) count it.
static MicrobatchShape getPlannerShape(const StepShape &shape,
                                       const StepPlanProblem &problem) {
  MicrobatchShape planned{shape.rows, shape.length, 0.0, 0.0};
  const StageCosts &c = shape.costs;
  for (int64_t s = 0; s < c.getNumStages(); ++s) {
    planned.time = std::max(planned.time, c.forward[s] + c.backwardInput[s] +
                                              c.backwardWeight[s]);
    planned.memory = std::max(planned.memory, c.activation[s]);
  }
  planned.memory *= llvm::divideCeil(problem.numStages, problem.numRanks);
  return planned;
}

/// Renames "sample <k>" at the start of `message` to `samples[k]`.
static std::string renameSample(std::string message,
                                ArrayRef<int64_t> samples) {
  StringRef rest(message);
  int64_t position;
  if (!rest.consume_front("sample ") || rest.consumeInteger(10, position) ||
      position < 0 || position >= int64_t(samples.size()))
    return message;
  return ("sample " + llvm::Twine(samples[position]) + rest).str();
}

MicrobatchPlanProblem
mlir::pp::sched::getStepCutProblem(const StepPlanProblem &problem) {
  MicrobatchPlanProblem cut;
  cut.numStages = problem.numStages;
  cut.microbatchMultiple = problem.microbatchMultiple;
  for (const StepShape &shape : problem.shapes)
    cut.shapes.push_back(getPlannerShape(shape, problem));
  // No micro-batch at a shape that alone overflows the smallest cap.
  if (!problem.memoryCap.empty())
    cut.memoryCap = *llvm::min_element(problem.memoryCap);
  return cut;
}

llvm::Expected<StepPlan>
mlir::pp::sched::planStep(ArrayRef<int64_t> lengths,
                          const StepPlanProblem &problem) {
  if (problem.shapes.empty())
    return ScheduleError() << "no micro-batch shapes to plan for";
  StepPlan plan;
  plan.order = sortLongestFirst(lengths);
  SmallVector<int64_t> sorted;
  for (int64_t index : plan.order)
    sorted.push_back(lengths[index]);
  llvm::Expected<MicrobatchPlan> microbatches =
      planMicrobatches(sorted, getStepCutProblem(problem));
  // The planner names sorted positions; the caller knows samples.
  if (!microbatches)
    return ScheduleError() << renameSample(
               llvm::toString(microbatches.takeError()), plan.order);
  plan.microbatches = std::move(*microbatches);
  return plan;
}

StageCosts
mlir::pp::sched::getShapeSequenceCosts(ArrayRef<int64_t> shapes,
                                       const StepPlanProblem &problem) {
  StageCosts costs;
  MicrobatchCosts &table = costs.perMicrobatch;
  int64_t m = shapes.size();
  table.numMicrobatches = m;
  using Field = SmallVector<double> StageCosts::*;
  auto fill = [&](Field field, SmallVector<double> &perMicrobatch) {
    for (int64_t s = 0; s < problem.numStages; ++s) {
      double largest = 0.0;
      for (int64_t shape : shapes) {
        double value = (problem.shapes[shape].costs.*field)[s];
        perMicrobatch.push_back(value);
        largest = std::max(largest, value);
      }
      (costs.*field).push_back(largest);
    }
  };
  fill(&StageCosts::forward, table.forward);
  fill(&StageCosts::backwardInput, table.backwardInput);
  fill(&StageCosts::backwardWeight, table.backwardWeight);
  fill(&StageCosts::activation, table.activation);
  fill(&StageCosts::stash, table.stash);
  for (int64_t shape : shapes)
    costs.transfer =
        std::max(costs.transfer, problem.shapes[shape].costs.transfer);
  return costs;
}

llvm::Expected<GeneratedSchedule>
mlir::pp::sched::scheduleShapeSequence(ArrayRef<int64_t> shapes,
                                       const StepPlanProblem &problem,
                                       const ScheduleGenerator &generator) {
  ScheduleProblem scheduled{problem.numStages, int64_t(shapes.size()),
                            problem.numRanks, problem.splitBackward};
  scheduled.semantics = problem.semantics;
  scheduled.cost = getShapeSequenceCosts(shapes, problem);
  scheduled.memoryCap = problem.memoryCap;
  llvm::Expected<GeneratedSchedule> schedule = generator.generate(scheduled);
  if (!schedule)
    return schedule.takeError();
  llvm::Error error = verify(scheduled, *schedule);
  if (!error)
    return schedule;
  // A schedule right but for the caps is one that does not fit them.
  ScheduleProblem uncapped = scheduled;
  uncapped.memoryCap.clear();
  llvm::Error wrong = verify(uncapped, *schedule);
  bool overCap = !wrong;
  llvm::consumeError(std::move(wrong));
  return ScheduleError() << "'" << generator.name
                         << (overCap ? "' schedule does not fit the memory "
                                       "caps: "
                                     : "' made a wrong schedule: ")
                         << llvm::toString(std::move(error));
}

llvm::Expected<PlannedSteps>
mlir::pp::sched::planSteps(ArrayRef<SmallVector<int64_t>> lines,
                           int64_t numReplicas, const StepPlanProblem &problem,
                           const ScheduleGenerator &generator) {
  PlannedSteps planned;
  std::map<SmallVector<int64_t>, int64_t> known;
  for (auto [line, lengths] : llvm::enumerate(lines)) {
    SmallVector<int64_t> order = sortLongestFirst(lengths);
    for (int64_t r = 0; r < numReplicas; ++r) {
      std::string where = ("step " + llvm::Twine(line)).str();
      if (numReplicas > 1)
        where += (" (replica " + llvm::Twine(r) + ")").str();
      SmallVector<int64_t> samples, own;
      for (size_t p = r; p < order.size(); p += numReplicas) {
        samples.push_back(order[p]);
        own.push_back(lengths[order[p]]);
      }
      if (own.empty())
        return ScheduleError() << where << ": no samples; a step needs at "
                               << "least one per replica";
      llvm::Expected<StepPlan> plan = planStep(own, problem);
      if (!plan)
        return ScheduleError()
               << where << ": "
               << renameSample(llvm::toString(plan.takeError()), samples);
      for (int64_t &sample : plan->order)
        sample = samples[sample];
      const SmallVector<int64_t> &shapes = plan->microbatches.shape;
      auto [it, inserted] = known.try_emplace(shapes, known.size());
      if (inserted) {
        llvm::Expected<GeneratedSchedule> schedule =
            scheduleShapeSequence(shapes, problem, generator);
        if (!schedule)
          return ScheduleError() << where << ": plan " << it->second << ": "
                                 << llvm::toString(schedule.takeError());
        planned.shapeSequences.push_back(shapes);
        planned.schedules.push_back(std::move(*schedule));
      }
      planned.scheduleOfStep.push_back(it->second);
      planned.steps.push_back(std::move(*plan));
    }
  }
  return planned;
}

SmallVector<int64_t> mlir::pp::sched::packSamples(ArrayRef<int64_t> lengths,
                                                  int64_t context) {
  int64_t tokens = 0;
  for (int64_t length : lengths)
    tokens += length;
  SmallVector<int64_t> rows(tokens / context, context);
  if (tokens % context)
    rows.push_back(tokens % context);
  return rows;
}

int64_t mlir::pp::sched::getPackingContext(const StepPlanProblem &problem) {
  int64_t context = 0;
  for (const StepShape &shape : problem.shapes)
    context = std::max(context, shape.length);
  return context;
}

double mlir::pp::sched::getPipelineTime(const PlannedSteps &planned,
                                        int64_t numReplicas) {
  double time = 0.0;
  for (size_t line = 0; line < planned.steps.size(); line += numReplicas) {
    double slowest = 0.0;
    for (int64_t r = 0; r < numReplicas; ++r)
      slowest =
          std::max(slowest, planned.steps[line + r].microbatches.objective);
    time += slowest;
  }
  return time;
}

bool mlir::pp::sched::isPackingQuicker(const PlannedSteps &plans,
                                       const PlannedSteps &packed,
                                       int64_t numReplicas) {
  return getPipelineTime(packed, numReplicas) <
         getPipelineTime(plans, numReplicas);
}
