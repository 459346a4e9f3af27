//===- Schedule.cpp - materialise a pipeline schedule ---------------------===//
//
// Emits a pp.schedule whose per-rank action lists follow a named schedule.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/CostProfile.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Scheduling/ScheduleGenerators.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace mlir::pp {
#define GEN_PASS_DEF_PPSCHEDULE
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// The number of stages of the derived stage functions in `module`.
static int64_t countStages(ModuleOp module) {
  int64_t count = 0;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr))
      count = std::max(count, stage.getInt() + 1);
  return count;
}

/// The costs a planner left on `module` as a profile, or nothing:
/// pp-plan-microbatches' per micro-batch, else the stage planner's in
/// seconds and bytes, with each rank's activation budget as its cap.
static std::optional<CostProfile> getPlannedCosts(ModuleOp module) {
  auto cost = module->getAttrOfType<CostAttr>(kMicrobatchCostAttr);
  CostProfile profile;
  if (!cost && (cost = module->getAttrOfType<CostAttr>(kPlannedCostAttr))) {
    profile.timeUnit = "s";
    profile.memoryUnit = "B";
    if (auto caps =
            module->getAttrOfType<DenseF64ArrayAttr>(kPlannedActivationCapAttr))
      profile.memoryCap.assign(caps.asArrayRef().begin(),
                               caps.asArrayRef().end());
  }
  if (!cost)
    return std::nullopt;
  StageCosts costs = getStageCosts(cost);
  profile.transfer = costs.transfer;
  for (int64_t s = 0; s < costs.getNumStages(); ++s) {
    auto toProfile = [](std::array<double, 5> at) {
      StageProfile stage;
      std::tie(stage.forward, stage.backwardInput, stage.backwardWeight,
               stage.activationMemory, stage.stashMemory) =
          std::tuple(at[0], at[1], at[2], at[3], at[4]);
      return stage;
    };
    StageProfile stage = toProfile({costs.forward[s], costs.backwardInput[s],
                                    costs.backwardWeight[s],
                                    costs.activation[s], costs.stash[s]});
    for (int64_t mb = 0; mb < costs.getNumMicrobatches(); ++mb)
      stage.microbatches.push_back(toProfile(costs.get(s, mb)));
    if (!costs.optimizer.empty())
      stage.optimizer = costs.optimizer[s];
    profile.stages.push_back(std::move(stage));
  }
  profile.stepOverhead = costs.stepOverhead;
  return profile;
}

/// Stage functions by stage, phase and sequence slice (0 for a function of
/// whole micro-batches).
using StageFunctions =
    DenseMap<std::tuple<int64_t, Phase, int64_t>, func::FuncOp>;

/// The derived stage functions in `module`.
static StageFunctions getStageFunctions(ModuleOp module) {
  StageFunctions funcs;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr);
    auto phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr);
    auto slice = func->getAttrOfType<IntegerAttr>(kSliceAttr);
    if (stage && phase)
      funcs.try_emplace(
          {stage.getInt(), phase.getValue(), slice ? slice.getInt() : 0}, func);
  }
  return funcs;
}

/// The number of sequence slices the stage functions of `module` are cut
/// into (pp-split-slice-stages), 1 if none.
static int64_t countFunctionSlices(ModuleOp module) {
  int64_t count = 1;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto slice = func->getAttrOfType<IntegerAttr>(kSliceAttr))
      count = std::max(count, slice.getInt() + 1);
  return count;
}

/// Where a generated action points: its name, such as "rank 1: forward
/// stage 3 mb 2", fused with the stage function it runs where the module
/// has one (so a diagnostic points into the model).
static Location getActionLoc(MLIRContext *context, int64_t rank,
                             const ScheduledAction &action,
                             func::FuncOp stageFunc) {
  std::string name =
      llvm::formatv("rank {0}: {1} stage {2} mb {3}", rank,
                    stringifyPhase(action.phase), action.stage, action.mb);
  Location named = NameLoc::get(StringAttr::get(context, name));
  if (!stageFunc)
    return named;
  return FusedLoc::get(context, {named, stageFunc.getLoc()});
}

/// Whether every rank of `generated` keeps within its memory cap; the
/// generators that cannot adapt to a cap (all but 1f1b, hanayo, greedy,
/// auto and exact) are caught here rather than by pp-verify-schedule.
static LogicalResult checkMemoryCaps(ModuleOp module, StringRef name,
                                     const ScheduleProblem &problem,
                                     const GeneratedSchedule &generated) {
  if (problem.memoryCap.empty())
    return success();
  ActionCosts costs(problem.getCostOrUnit());
  for (auto [rank, actions] : llvm::enumerate(generated.ranks)) {
    double peak = findActivationPeak(costs, actions).peak;
    double cap = problem.getMemoryCap(rank);
    if (peak > cap + 1e-9)
      return module.emitError("schedule '")
             << name << "' holds " << formatQuantity(peak) << " "
             << (problem.memoryUnit.empty() ? "units" : problem.memoryUnit)
             << " of activation memory on rank " << rank
             << ", over its memory cap of " << formatQuantity(cap)
             << "; 1f1b, greedy and auto schedule within per-rank caps";
  }
  return success();
}

/// Runs `generator` on `problem` and checks what it generates: the memory
/// caps, then everything else `verify` checks (a generator brought by a
/// plugin need not be correct by construction).
static FailureOr<GeneratedSchedule>
generateSchedule(ModuleOp module, const ScheduleChoice &generator,
                 const ScheduleProblem &problem) {
  llvm::Expected<GeneratedSchedule> generated = generator.generate(problem);
  if (!generated)
    return module.emitError(llvm::toString(generated.takeError()));
  if (failed(checkMemoryCaps(module, generator.getName(), problem, *generated)))
    return failure();
  if (llvm::Error error = verify(problem, *generated))
    return module.emitError("schedule '")
           << generator.getName() << "' generated an invalid schedule: "
           << llvm::toString(std::move(error));
  return std::move(*generated);
}

/// The cost of one of `slices` uniform sequence slices of a micro-batch:
/// every time and memory of `cost` (unit costs when null) divided by it.
static CostAttr getSliceCost(MLIRContext *context, CostAttr cost,
                             int64_t stages, int64_t slices) {
  if (!cost)
    cost = CostAttr::getUnit(context, stages);
  Builder b(context);
  auto divide = [&](DenseF64ArrayAttr values) {
    return b.getDenseF64ArrayAttr(llvm::to_vector(llvm::map_range(
        values.asArrayRef(), [&](double v) { return v / slices; })));
  };
  return CostAttr::get(
      context, divide(cost.getForward()), divide(cost.getBackwardInput()),
      divide(cost.getBackwardWeight()),
      b.getF64FloatAttr(cost.getComm().getValueAsDouble() / slices),
      divide(cost.getActivation()), divide(cost.getStash()), nullptr, nullptr,
      nullptr, nullptr, nullptr, cost.getOptimizer(), cost.getStepOverhead());
}

namespace {
struct SchedulePass : pp::impl::PPScheduleBase<SchedulePass> {
  using Base::Base;

  /// Whether the costs are pp-plan-microbatches' rather than a file's.
  bool plannedCosts = false;

  /// The micro-batch count: the option, which must agree with the count the
  /// stage functions were split into; without the option, that count or 1.
  FailureOr<int64_t> resolveMicrobatches(ModuleOp module) {
    if (numMicrobatches < 0) {
      module.emitError("num-microbatches must be at least 1, got ")
          << numMicrobatches.getValue();
      return failure();
    }
    if (numMicrobatches > kMaxMicrobatches) {
      module.emitError("num-microbatches is ")
          << numMicrobatches.getValue() << "; at most " << kMaxMicrobatches
          << " micro-batches are supported";
      return failure();
    }
    for (auto func : module.getOps<func::FuncOp>()) {
      auto split = func->getAttrOfType<IntegerAttr>(kMicrobatchesAttr);
      if (!split)
        continue;
      if (numMicrobatches != 0 && split.getInt() != numMicrobatches) {
        func.emitError("the stage functions are split into ")
            << split.getInt() << " micro-batches, but num-microbatches is "
            << numMicrobatches.getValue();
        return failure();
      }
      return split.getInt();
    }
    return numMicrobatches == 0 ? int64_t(1) : numMicrobatches.getValue();
  }

  /// The per-stage values of a cost option: one value for every stage, or
  /// one per stage; `fallback` (one per stage) when the option is not given.
  FailureOr<DenseF64ArrayAttr> perStage(ModuleOp module, StringRef name,
                                        ArrayRef<double> values,
                                        ArrayRef<double> fallback) {
    Builder b(module.getContext());
    int64_t stages = fallback.size();
    if (values.empty())
      return b.getDenseF64ArrayAttr(fallback);
    if (values.size() == 1)
      return b.getDenseF64ArrayAttr(SmallVector<double>(stages, values[0]));
    if (int64_t(values.size()) != stages) {
      module.emitError(name)
          << " has " << values.size()
          << " values, expected 1 or one per stage (" << stages << ")";
      return failure();
    }
    return b.getDenseF64ArrayAttr(values);
  }

  /// The costs of `cost-file`, or nothing without one.
  FailureOr<std::optional<CostProfile>> readCostFile(ModuleOp module) {
    if (costFile.empty())
      return std::optional<CostProfile>();
    FailureOr<CostProfile> profile =
        readCostProfile(costFile, [&] { return module.emitError(); });
    if (failed(profile))
      return failure();
    return std::optional<CostProfile>(std::move(*profile));
  }

  /// The costs the options start from: the cost file's, which must
  /// describe `stages` stages, or unit costs.
  FailureOr<CostProfile> getBaseCosts(ModuleOp module,
                                      std::optional<CostProfile> file,
                                      int64_t stages) {
    if (!file)
      return CostProfile::getUnit(stages);
    if (int64_t(file->stages.size()) != stages) {
      (plannedCosts
           ? module.emitError("the planned micro-batches' costs ")
           : module.emitError("cost file '") << costFile.getValue() << "' ")
          << "describe" << (plannedCosts ? " " : "s ") << file->stages.size()
          << " stages, but there are " << stages << " to schedule";
      return failure();
    }
    return std::move(*file);
  }

  /// Per stage, whether its backward recomputes its forward: the option's
  /// stages and those whose stage functions carry `pp.recompute`.
  FailureOr<SmallVector<bool>> resolveRecompute(ModuleOp module,
                                                int64_t stages) {
    SmallVector<bool> recomputed(stages, false);
    for (int64_t stage : recompute) {
      if (stage < 0 || stage >= stages) {
        module.emitError("recompute names stage ")
            << stage << ", but there are " << stages << " stages";
        return failure();
      }
      recomputed[stage] = true;
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr);
          stage && func->hasAttr(kRecomputeAttr) && stage.getInt() < stages)
        recomputed[stage.getInt()] = true;
    return recomputed;
  }

  /// Recomputing stages run one forward more in B and hold their inputs
  /// instead of their activations.
  FailureOr<std::pair<DenseF64ArrayAttr, DenseF64ArrayAttr>>
  applyRecompute(ModuleOp module, ArrayRef<bool> recomputed,
                 DenseF64ArrayAttr forward, DenseF64ArrayAttr backwardInput,
                 DenseF64ArrayAttr activation) {
    auto inputs =
        perStage(module, "input-memory", inputMemory, activation.asArrayRef());
    if (failed(inputs))
      return failure();
    SmallVector<double> b(backwardInput.asArrayRef()),
        act(activation.asArrayRef());
    for (auto [stage, recomputes] : llvm::enumerate(recomputed))
      if (recomputes) {
        b[stage] += forward[stage];
        act[stage] = (*inputs)[stage];
      }
    Builder builder(module.getContext());
    return std::make_pair(builder.getDenseF64ArrayAttr(b),
                          builder.getDenseF64ArrayAttr(act));
  }

  /// The #pp.cost of the cost file with the cost options overriding its
  /// fields and recomputing stages' costs applied, or null when none of
  /// them is given.
  FailureOr<CostAttr> buildCost(ModuleOp module, const CostProfile &profile,
                                ArrayRef<bool> recomputed) {
    if (!plannedCosts && costFile.empty() && forwardCost.empty() &&
        backwardInputCost.empty() && backwardWeightCost.empty() &&
        activationMemory.empty() && stashMemory.empty() &&
        std::isnan(commCost.getValue()) &&
        llvm::none_of(recomputed, [](bool r) { return r; }))
      return CostAttr();
    auto column = [&](double StageProfile::*field) {
      return profile.getColumn(field);
    };
    auto f = perStage(module, "forward-cost", forwardCost,
                      column(&StageProfile::forward));
    auto bi = perStage(module, "backward-input-cost", backwardInputCost,
                       column(&StageProfile::backwardInput));
    auto bw = perStage(module, "backward-weight-cost", backwardWeightCost,
                       column(&StageProfile::backwardWeight));
    auto act = perStage(module, "activation-memory", activationMemory,
                        column(&StageProfile::activationMemory));
    auto stash = perStage(module, "stash-memory", stashMemory,
                          column(&StageProfile::stashMemory));
    if (failed(f) || failed(bi) || failed(bw) || failed(act) || failed(stash))
      return failure();
    bool perMicrobatch = profile.getNumMicrobatches() > 0;
    if (perMicrobatch && llvm::is_contained(recomputed, true)) {
      module.emitError("cost file '")
          << costFile.getValue()
          << "' has per-micro-batch costs, which recomputing stages do not "
             "support";
      return failure();
    }
    auto recomputedCosts = applyRecompute(module, recomputed, *f, *bi, *act);
    if (failed(recomputedCosts))
      return failure();
    std::tie(*bi, *act) = *recomputedCosts;
    double comm = std::isnan(commCost.getValue()) ? profile.transfer : commCost;
    auto emit = [&] { return module.emitError(); };
    Builder b(module.getContext());
    // A cost option replaces its field for every micro-batch.
    auto table = [&](ArrayRef<double> option, double StageProfile::*field) {
      return !perMicrobatch || !option.empty()
                 ? DenseF64ArrayAttr()
                 : b.getDenseF64ArrayAttr(profile.getMicrobatchColumn(field));
    };
    SmallVector<double> optimizerColumn = profile.getStageCosts().optimizer;
    CostAttr cost = CostAttr::getChecked(
        emit, module.getContext(), *f, *bi, *bw, b.getF64FloatAttr(comm), *act,
        *stash, table(forwardCost, &StageProfile::forward),
        table(backwardInputCost, &StageProfile::backwardInput),
        table(backwardWeightCost, &StageProfile::backwardWeight),
        table(activationMemory, &StageProfile::activationMemory),
        table(stashMemory, &StageProfile::stashMemory),
        optimizerColumn.empty() ? DenseF64ArrayAttr()
                                : b.getDenseF64ArrayAttr(optimizerColumn),
        profile.stepOverhead > 0 ? b.getF64FloatAttr(profile.stepOverhead)
                                 : FloatAttr());
    if (!cost)
      return failure();
    return cost;
  }

  /// The memory caps: the option's (0 alone for none), else the cost
  /// file's; one for every rank or one per rank, none when empty.
  FailureOr<SmallVector<double>>
  resolveMemoryCap(ModuleOp module, const CostProfile &profile, int64_t ranks) {
    ArrayRef<double> caps = memoryCap;
    std::string source = "memory-cap";
    if (caps.empty()) {
      caps = profile.memoryCap;
      source = "cost file '" + costFile + "': memory_cap";
    } else if (caps.size() == 1 && caps[0] == 0) {
      return SmallVector<double>();
    }
    if (caps.size() > 1 && static_cast<int64_t>(caps.size()) != ranks) {
      module.emitError(source)
          << " has " << caps.size() << " values, expected 1 or one per rank ("
          << ranks << ")";
      return failure();
    }
    for (double cap : caps)
      if (!(cap > 0) || !isValidQuantity(cap)) {
        module.emitError(source)
            << " must be positive and at most " << kMaxQuantityText
            << " (0 alone for no cap), got " << formatQuantity(cap);
        return failure();
      }
    return SmallVector<double>(caps);
  }

  /// The caps as the schedule carries them: one f64 for every rank, or one
  /// per rank.
  static Attribute getMemoryCapAttr(Builder &b, ArrayRef<double> caps) {
    if (caps.empty())
      return Attribute();
    if (caps.size() == 1)
      return b.getF64FloatAttr(caps[0]);
    return b.getDenseF64ArrayAttr(caps);
  }

  /// Checks every cost and memory option: finite, not negative and at most
  /// kMaxQuantity, whether or not a stage uses it (input-memory counts only
  /// for recomputing stages). memory-cap is checked with the cost file's.
  LogicalResult checkQuantityOptions(ModuleOp module) {
    std::pair<StringRef, ArrayRef<double>> lists[] = {
        {"forward-cost", forwardCost},
        {"backward-input-cost", backwardInputCost},
        {"backward-weight-cost", backwardWeightCost},
        {"activation-memory", activationMemory},
        {"stash-memory", stashMemory},
        {"input-memory", inputMemory}};
    for (auto [name, values] : lists)
      for (double value : values)
        if (!isValidQuantity(value))
          return module.emitError(name)
                 << " must be a finite number between 0 and "
                 << kMaxQuantityText << ", got " << formatQuantity(value);
    // NaN is the option's default: the cost file's value.
    double comm = commCost;
    if (!std::isnan(comm) && !isValidQuantity(comm))
      return module.emitError("comm-cost must be a finite number between 0 "
                              "and ")
             << kMaxQuantityText << ", got " << formatQuantity(comm);
    return success();
  }

  /// Checks num-stages and num-ranks against the supported bounds.
  LogicalResult checkShapeOptions(ModuleOp module) {
    if (numStages < 0)
      return module.emitError("num-stages must be at least 1 (or 0: read "
                              "from the stage functions), got ")
             << numStages.getValue();
    if (numStages > kMaxStages)
      return module.emitError("num-stages is ")
             << numStages.getValue() << "; at most " << kMaxStages
             << " stages are supported";
    if (numRanks > kMaxRanks)
      return module.emitError("num-ranks is ")
             << numRanks.getValue() << "; at most " << kMaxRanks
             << " ranks are supported";
    return success();
  }

  /// The stages to schedule: num-stages, else the stage functions', else
  /// the cost file's.
  FailureOr<int64_t> resolveStages(ModuleOp module,
                                   const std::optional<CostProfile> &file) {
    int64_t stages = numStages > 0 ? numStages.getValue() : countStages(module);
    if (stages < 1 && file)
      stages = file->stages.size();
    if (stages < 1)
      return module.emitError("no stages to schedule: run "
                              "pp-derive-backward first or pass num-stages");
    return stages;
  }

  /// The units the schedule orders: micro-batches times sequence slices.
  FailureOr<int64_t> resolveUnits(ModuleOp module,
                                  const std::optional<CostProfile> &file,
                                  int64_t stages) {
    FailureOr<int64_t> microbatches = resolveMicrobatches(module);
    if (failed(microbatches))
      return failure();
    if (plannedCosts && numMicrobatches == 0 && *microbatches == 1 &&
        file->getNumMicrobatches() > 0)
      *microbatches = file->getNumMicrobatches();
    if (numSlices < 1 || numSlices > kMaxMicrobatches / *microbatches)
      return module.emitError("slices must be at least 1 and at most ")
             << kMaxMicrobatches << " with the micro-batches, got "
             << numSlices.getValue();
    // Stage functions cut into slices run under a schedule of as many.
    if (int64_t cut = countFunctionSlices(module); cut > 1 && cut != numSlices)
      return module.emitError("the stage functions compute ")
             << cut << " sequence slices, but the schedule has slices = "
             << numSlices.getValue();
    int64_t units = *microbatches * numSlices;
    if (stages * units > kMaxStageMicrobatches)
      return module.emitError()
             << stages << " stages x " << units
             << " micro-batches is too large a schedule to generate: at most "
             << kMaxStageMicrobatches << " stage micro-batches are supported";
    return units;
  }

  /// Checks that the costs describe the schedule's shape: a profiler's
  /// model and micro-batches, or the planned micro-batches.
  LogicalResult checkProfileShape(ModuleOp module,
                                  const std::optional<CostProfile> &file,
                                  const CostProfile &profile, int64_t stages,
                                  int64_t microbatches) {
    // A profiler measured one shape: its micro-batches (getBaseCosts
    // checked the stages).
    if (file && !plannedCosts)
      for (const std::string &why :
           {file->checkShape(stages, microbatches / numSlices),
            file->checkModel(module)})
        if (!why.empty())
          return module.emitError("cost file '")
                 << costFile.getValue() << "' " << why;
    module->removeAttr(kModelFingerprintAttr);
    int64_t described = profile.getNumMicrobatches();
    if (described <= 0 || described == microbatches)
      return success();
    if (plannedCosts)
      return module.emitError("the planned micro-batches (")
             << described << ") differ from the " << microbatches
             << " micro-batches to schedule";
    return module.emitError("cost file '")
           << costFile.getValue() << "' has costs for " << described
           << " micro-batches, but there are " << microbatches
           << " to schedule";
  }

  /// The problem the schedule generators solve.
  ScheduleProblem buildProblem(const CostProfile &profile, CostAttr cost,
                               ArrayRef<double> caps, int64_t stages,
                               int64_t microbatches, int64_t ranks) {
    ScheduleProblem problem{stages, microbatches, ranks, splitBackward};
    problem.semantics = semantics;
    if (profile.timeUnit != "unit")
      problem.timeUnit = profile.timeUnit;
    if (profile.memoryUnit != "unit")
      problem.memoryUnit = profile.memoryUnit;
    problem.numSlices = numSlices;
    if (cost)
      problem.cost = getStageCosts(cost);
    if (caps.size() == 1)
      problem.memoryCap.assign(ranks, caps.front());
    else
      problem.memoryCap.assign(caps.begin(), caps.end());
    return problem;
  }

  /// Solves the problem with the chosen generator; the searches order whole
  /// micro-batches, not sequence slices.
  FailureOr<GeneratedSchedule> solve(ModuleOp module,
                                     const ScheduleProblem &problem) {
    StringRef name = schedule.getValue().getName();
    if (numSlices > 1 &&
        llvm::is_contained(ArrayRef<StringRef>{"auto", "greedy", "exact"},
                           name))
      return module.emitError("schedule '")
             << name << "' does not order sequence slices; with slices = "
             << numSlices.getValue() << " use seq1f1b";
    FailureOr<GeneratedSchedule> generated =
        generateSchedule(module, schedule.getValue(), problem);
    if (succeeded(generated) && !generated->note.empty())
      emitRemark(module.getLoc()) << generated->note;
    return generated;
  }

  /// Fills a rank's body with one pp.compute per action, each naming the
  /// stage function it runs where the module has it.
  void buildRankActions(OpBuilder &builder, const StageFunctions &stageFuncs,
                        bool slicedFunctions, int64_t rank,
                        ArrayRef<ScheduledAction> actions) {
    for (const ScheduledAction &action : actions) {
      int64_t slice = slicedFunctions ? action.mb % numSlices : 0;
      func::FuncOp stageFunc =
          stageFuncs.lookup({action.stage, action.phase, slice});
      ComputeOp::create(
          builder, getActionLoc(&getContext(), rank, action, stageFunc),
          action.phase, action.stage, action.mb, /*overlap=*/false,
          stageFunc ? FlatSymbolRefAttr::get(stageFunc) : nullptr,
          /*first_step=*/action.part == StepPart::firstOnly,
          /*next_step=*/action.part == StepPart::next);
    }
  }

  /// Appends the generated schedule to the module as a pp.schedule.
  LogicalResult buildScheduleOp(ModuleOp module,
                                const GeneratedSchedule &generated,
                                int64_t microbatches, CostAttr cost,
                                ArrayRef<double> caps) {
    std::string symbol = function + "_schedule";
    if (Operation *existing = SymbolTable::lookupSymbolIn(module, symbol))
      return existing->emitOpError("already defines @")
             << symbol << "; pp-schedule adds one schedule per training step";
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto op = ScheduleOp::create(
        builder, module.getLoc(), builder.getStringAttr(symbol),
        builder.getStringAttr(schedule.getValue().getName()),
        FlatSymbolRefAttr::get(builder.getContext(), function),
        builder.getI64IntegerAttr(microbatches),
        builder.getDenseI64ArrayAttr(generated.stageRank), cost,
        getMemoryCapAttr(builder, caps));
    if (generated.weightVersions != 1)
      op.setWeightVersions(generated.weightVersions);
    if (numSlices > 1)
      op.setSlices(numSlices);
    op.setSemanticsOrDefault(semantics);
    builder.createBlock(&op.getBody());
    StageFunctions stageFuncs = getStageFunctions(module);
    bool slicedFunctions = countFunctionSlices(module) > 1;
    for (auto [rank, actions] : llvm::enumerate(generated.ranks)) {
      Location rankLoc = NameLoc::get(
          builder.getStringAttr(llvm::formatv("rank {0}", rank).str()));
      auto rankOp = RankOp::create(builder, rankLoc, rank);
      OpBuilder::InsertionGuard guard(builder);
      builder.createBlock(&rankOp.getBody());
      buildRankActions(builder, stageFuncs, slicedFunctions, rank, actions);
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkQuantityOptions(module)))
      return signalPassFailure();
    FailureOr<std::optional<CostProfile>> file = readCostFile(module);
    if (failed(file))
      return signalPassFailure();
    // Without a cost file, the micro-batches pp-plan-microbatches planned.
    plannedCosts = false;
    if (!*file && (*file = getPlannedCosts(module)))
      plannedCosts = true;
    // The stage planner's costs move onto the schedule.
    module->removeAttr(kPlannedCostAttr);
    module->removeAttr(kPlannedActivationCapAttr);
    if (failed(checkShapeOptions(module)))
      return signalPassFailure();
    FailureOr<int64_t> stages = resolveStages(module, *file);
    if (failed(stages))
      return signalPassFailure();
    FailureOr<int64_t> microbatches = resolveUnits(module, *file, *stages);
    if (failed(microbatches))
      return signalPassFailure();
    int64_t ranks = numRanks > 0 ? numRanks.getValue() : *stages;
    if (numRanks < 0 || *stages % ranks != 0) {
      module.emitError("num-ranks must divide the ")
          << *stages << " stages, got " << numRanks.getValue();
      return signalPassFailure();
    }
    FailureOr<CostProfile> profile = getBaseCosts(module, *file, *stages);
    if (failed(profile) || failed(checkProfileShape(module, *file, *profile,
                                                    *stages, *microbatches)))
      return signalPassFailure();
    FailureOr<SmallVector<bool>> recomputed = resolveRecompute(module, *stages);
    if (failed(recomputed))
      return signalPassFailure();
    FailureOr<CostAttr> cost = buildCost(module, *profile, *recomputed);
    FailureOr<SmallVector<double>> caps =
        resolveMemoryCap(module, *profile, ranks);
    if (failed(cost) || failed(caps))
      return signalPassFailure();
    if (numSlices > 1)
      *cost = getSliceCost(&getContext(), *cost, *stages, numSlices);
    FailureOr<GeneratedSchedule> generated =
        solve(module, buildProblem(*profile, *cost, *caps, *stages,
                                   *microbatches, ranks));
    if (failed(generated) ||
        failed(
            buildScheduleOp(module, *generated, *microbatches, *cost, *caps)))
      return signalPassFailure();
  }
};
} // namespace
