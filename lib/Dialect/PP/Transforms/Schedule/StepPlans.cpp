//===- StepPlans.cpp - a schedule per distinct step plan ------------------===//
//
// Adapts the step planner (pp/Scheduling/StepPlanner.h) to a program: the
// variants' shapes and costs from their stage functions, and the planned
// schedules as pp.schedule ops.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Transforms/Schedule/StepPlans.h"

#include "pp/Dialect/PP/Analysis/CostModel.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/Slot.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Scheduling/CollectiveCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace mlir::pp;

static int64_t getVariantOf(func::FuncOp func) {
  auto variant = func->getAttrOfType<IntegerAttr>(kVariantAttr);
  return variant ? variant.getInt() : 0;
}

/// The stage functions of each variant, by (stage, phase).
using VariantFunctions = std::map<std::pair<int64_t, Phase>, func::FuncOp>;

static std::map<int64_t, VariantFunctions>
getVariantFunctions(ModuleOp module) {
  std::map<int64_t, VariantFunctions> variants;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr);
    auto phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr);
    if (stage && phase)
      variants[getVariantOf(func)][{stage.getInt(), phase.getValue()}] = func;
  }
  return variants;
}

static double getFlops(func::FuncOp func) {
  return func && !func.isExternal() ? estimateBlockCost(func.front()).flops
                                    : 0.0;
}

/// Rows and positions of stage 0's data argument in `forward`.
static FailureOr<std::pair<int64_t, int64_t>> getDataShape(func::FuncOp forward,
                                                           Location loc) {
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto slot = forward.getArgAttrOfType<SlotAttr>(i, kSlotAttr);
    auto type = dyn_cast<ShapedType>(forward.getArgumentTypes()[i]);
    if (!slot || slot.getSlot().kind != SlotKind::Data || !type ||
        !type.hasStaticShape())
      continue;
    if (type.getRank() < 2)
      break;
    return std::make_pair(type.getDimSize(0), type.getDimSize(1));
  }
  return emitError(loc) << "'" << forward.getSymName()
                        << "' has no [rows, positions, ...] data argument to "
                           "take its micro-batch shape from";
}

FailureOr<std::vector<sched::StepShape>>
mlir::pp::getVariantShapes(ModuleOp module, bool splitBackward, Location loc) {
  std::vector<sched::StepShape> shapes;
  for (auto &[variant, funcs] : getVariantFunctions(module)) {
    if (variant != int64_t(shapes.size()))
      return emitError(loc)
             << "shape variant " << shapes.size() << " has no stage functions";
    int64_t stages = 0;
    for (auto &entry : funcs)
      stages = std::max(stages, entry.first.first + 1);
    func::FuncOp first = funcs[{0, Phase::forward}];
    if (!first)
      return emitError(loc)
             << "shape variant " << variant << " has no forward of stage 0";
    FailureOr<std::pair<int64_t, int64_t>> data = getDataShape(first, loc);
    if (failed(data))
      return failure();
    sched::StepShape shape{data->first, data->second, {}};
    for (int64_t s = 0; s < stages; ++s) {
      func::FuncOp forward = funcs[{s, Phase::forward}];
      double returned = 0.0;
      if (forward)
        for (Type type : forward.getResultTypes())
          returned += getStorageBytes(type);
      shape.costs.forward.push_back(getFlops(forward));
      // Fused, the backward is B; split, B and W are their functions'.
      shape.costs.backwardInput.push_back(getFlops(
          funcs[{s, splitBackward ? Phase::backward_input : Phase::backward}]));
      shape.costs.backwardWeight.push_back(
          splitBackward ? getFlops(funcs[{s, Phase::backward_weight}]) : 0.0);
      shape.costs.activation.push_back(returned);
      shape.costs.stash.push_back(0.0);
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

/// "2x16, 4x8" for `shapes`.
static std::string describeShapes(ArrayRef<sched::StepShape> shapes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shapes, os,
      [&](const sched::StepShape &shape) {
        os << shape.rows << "x" << shape.length;
      },
      ", ");
  return text;
}

LogicalResult
mlir::pp::setMeasuredVariantCosts(const CostProfile &profile, StringRef path,
                                  std::vector<sched::StepShape> &shapes,
                                  Location loc) {
  int64_t variants = profile.getNumVariants(), have = shapes.size();
  auto fail = [&]() { return emitError(loc) << "cost file '" << path << "' "; };
  if (variants < have)
    return fail() << "has no costs for shape variant " << variants << " ("
                  << shapes[variants].rows << "x" << shapes[variants].length
                  << "); its stages list " << variants << " of the program's "
                  << have << " variants: " << describeShapes(shapes);
  if (variants > have)
    return fail() << "names shape variant " << have
                  << ", which the program lacks; it has " << have << ": "
                  << describeShapes(shapes);
  int64_t stages = shapes.front().costs.getNumStages();
  if (int64_t(profile.stages.size()) != stages)
    return fail() << "has " << profile.stages.size()
                  << " stages; the program has " << stages;
  std::optional<double> seconds = getSecondsPerUnit(profile.timeUnit);
  if (!seconds)
    return fail() << "time_unit '" << profile.timeUnit
                  << "' is not a time; expected s, ms, us or ns";
  for (auto [variant, shape] : llvm::enumerate(shapes)) {
    sched::StageCosts &costs = shape.costs;
    for (int64_t s = 0; s < stages; ++s) {
      const StageProfile &measured = profile.stages[s].variants[variant];
      costs.forward[s] = measured.forward * *seconds;
      costs.backwardInput[s] = measured.backwardInput * *seconds;
      costs.backwardWeight[s] = measured.backwardWeight * *seconds;
      costs.activation[s] = measured.activationMemory;
      costs.stash[s] = measured.stashMemory;
    }
  }
  return success();
}

/// Where an action of a planned schedule points.
static Location getActionLoc(MLIRContext *context, int64_t plan, int64_t rank,
                             const sched::ScheduledAction &action,
                             func::FuncOp stageFunc) {
  std::string name =
      llvm::formatv("plan {0} rank {1}: {2} stage {3} mb {4}", plan, rank,
                    stringifyPhase(action.phase), action.stage, action.mb);
  return FusedLoc::get(context, {NameLoc::get(StringAttr::get(context, name)),
                                 stageFunc.getLoc()});
}

/// A pp.schedule like `main` running `schedule`, micro-batch mb at shape
/// `shapes[mb]`.
static LogicalResult buildPlanSchedule(
    ScheduleOp main, int64_t plan, const sched::GeneratedSchedule &schedule,
    ArrayRef<int64_t> shapes, const sched::StepPlanProblem &problem,
    std::map<int64_t, VariantFunctions> &variants) {
  MLIRContext *context = main.getContext();
  OpBuilder builder(main);
  CostAttr cost =
      getCostAttr(context, sched::getShapeSequenceCosts(shapes, problem));
  auto op = ScheduleOp::create(
      builder, main.getLoc(),
      builder.getStringAttr(main.getSymName() + "_plan" + Twine(plan)),
      main.getNameAttr(), main.getPipelineAttr(),
      builder.getI64IntegerAttr(shapes.size()),
      builder.getDenseI64ArrayAttr(schedule.stageRank), cost,
      main.getMemoryCapAttr());
  op->setAttr(kStepPlanAttr, builder.getI64IntegerAttr(plan));
  // The tensor-parallel group every rank is, as pp-shard-stages made it.
  if (Attribute parts = main->getAttr(kTensorParallelAttr))
    op->setAttr(kTensorParallelAttr, parts);
  builder.createBlock(&op.getBody());
  for (auto [rank, actions] : llvm::enumerate(schedule.ranks)) {
    auto rankOp = RankOp::create(builder, op.getLoc(), rank);
    OpBuilder::InsertionGuard guard(builder);
    builder.createBlock(&rankOp.getBody());
    for (const sched::ScheduledAction &action : actions) {
      func::FuncOp func =
          variants[shapes[action.mb]][{action.stage, action.phase}];
      if (!func)
        return main.emitOpError("has no ")
               << stringifyPhase(action.phase) << " function of stage "
               << action.stage << " at shape variant " << shapes[action.mb];
      ComputeOp::create(
          builder, getActionLoc(context, plan, rank, action, func),
          action.phase, action.stage, action.mb, /*overlap=*/false,
          FlatSymbolRefAttr::get(func), /*first_step=*/false,
          /*next_step=*/false);
    }
  }
  return success();
}

LogicalResult mlir::pp::addStepPlans(ModuleOp module,
                                     const sched::PlannedSteps &planned,
                                     const sched::StepPlanProblem &problem,
                                     int64_t lines, int64_t numReplicas) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.size() != 1)
    return module.emitError("step plans replace exactly one pp.schedule, "
                            "found ")
           << schedules.size();
  ScheduleOp main = schedules.front();
  std::map<int64_t, VariantFunctions> variants = getVariantFunctions(module);
  for (auto [plan, schedule] : llvm::enumerate(planned.schedules))
    if (failed(buildPlanSchedule(main, plan, schedule,
                                 planned.shapeSequences[plan], problem,
                                 variants)))
      return failure();
  main.erase();
  SmallVector<int64_t> table = {lines, numReplicas};
  for (auto [step, plan] : llvm::zip(planned.steps, planned.scheduleOfStep)) {
    table.push_back(plan);
    table.push_back(step.microbatches.getNumMicrobatches());
    table.append(step.microbatches.rows.begin(), step.microbatches.rows.end());
  }
  module->setAttr(kStepPlansAttr,
                  DenseI64ArrayAttr::get(module.getContext(), table));
  return success();
}
