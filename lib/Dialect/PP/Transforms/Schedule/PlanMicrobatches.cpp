//===- PlanMicrobatches.cpp - variable-length micro-batches of a step -----===//
//
// Reads one step's sample lengths, cuts them into micro-batches with the
// scheduling library's planner (MicrobatchPlanner.h) and leaves the plan and
// its per-(stage, micro-batch) costs on the module for pp-schedule.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Dialect/PP/Utils/InputFile.h"
#include "pp/Scheduling/MicrobatchPlanner.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

namespace mlir::pp {
#define GEN_PASS_DEF_PPPLANMICROBATCHES
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

/// The most samples one step may hold: the planner's work grows with their
/// square.
static constexpr int64_t kMaxSamples = 1 << 14;
/// The planner's work, in runs visited, within which it stays exact.
static constexpr double kPlannerWork = 2e8;

namespace {
struct PlanMicrobatchesPass
    : pp::impl::PPPlanMicrobatchesBase<PlanMicrobatchesPass> {
  using Base::Base;

  /// The lengths on line `step` of the index (blank and comment lines do
  /// not count).
  FailureOr<SmallVector<int64_t>> readLengths(ModuleOp module) {
    auto buffer = readRegularFile(lengthsFile, kMaxJSONFileBytes);
    if (!buffer) {
      module.emitError("cannot read lengths file '")
          << lengthsFile.getValue()
          << "': " << llvm::toString(buffer.takeError());
      return failure();
    }
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    int64_t seen = 0;
    for (auto [index, line] : llvm::enumerate(lines)) {
      StringRef text = line.split('#').first.trim();
      if (text.empty() || seen++ != step)
        continue;
      SmallVector<StringRef> fields;
      SplitString(text, fields, " \t,\r");
      SmallVector<int64_t> lengths;
      for (StringRef field : fields) {
        int64_t length;
        if (field.getAsInteger(10, length) || length <= 0) {
          module.emitError("lengths file '")
              << lengthsFile.getValue() << "' line " << index + 1 << ": '"
              << field << "' is not a positive integer";
          return failure();
        }
        lengths.push_back(length);
      }
      if (int64_t(lengths.size()) > kMaxSamples) {
        module.emitError("lengths file '")
            << lengthsFile.getValue() << "' line " << index + 1 << " has "
            << lengths.size() << " samples; at most " << kMaxSamples
            << " per step are supported";
        return failure();
      }
      return lengths;
    }
    module.emitError("lengths file '")
        << lengthsFile.getValue() << "' has " << seen << " steps; step "
        << step.getValue() << " is not among them";
    return failure();
  }

  /// A cost option: F, B, W, each finite and not negative; zeros if absent.
  FailureOr<std::array<double, 3>> readTriple(ModuleOp module, StringRef name,
                                              ArrayRef<double> values) {
    std::array<double, 3> triple = {0.0, 0.0, 0.0};
    if (values.empty())
      return triple;
    if (values.size() != 3) {
      module.emitError(name)
          << " needs 3 values (F,B,W), got " << values.size();
      return failure();
    }
    for (auto [i, value] : llvm::enumerate(values)) {
      if (!std::isfinite(value) || value < 0 || value > kMaxQuantity) {
        module.emitError(name) << " must be finite, not negative and at most "
                               << kMaxQuantityText << ", got " << value;
        return failure();
      }
      triple[i] = value;
    }
    return triple;
  }

  LogicalResult checkScalars(ModuleOp module) {
    std::pair<StringRef, double> scalars[] = {
        {"activation-per-token", activationPerToken},
        {"memory-cap", memoryCap},
        {"comm-cost", commCost}};
    for (auto [name, value] : scalars)
      if (!std::isfinite(value) || value < 0 || value > kMaxQuantity)
        return module.emitError(name)
               << " must be finite, not negative and at most "
               << kMaxQuantityText << ", got " << value;
    if (lengthsFile.empty())
      return module.emitError("pp-plan-microbatches needs a lengths-file");
    if (step < 0 || numStages < 0 || numStages > kMaxStages || paddedRows < 0)
      return module.emitError(
                 "step, num-stages and padded-rows must not be negative, and "
                 "num-stages at most ")
             << kMaxStages;
    if (microbatchMultiple < 1 || microbatchMultiple > kMaxStages)
      return module.emitError("microbatch-multiple must be in [1, ")
             << kMaxStages << "], got " << microbatchMultiple.getValue();
    return success();
  }

  /// The activation memory one micro-batch may hold.
  double problemCap() const {
    return memoryCap > 0 ? memoryCap.getValue()
                         : std::numeric_limits<double>::infinity();
  }

  /// num-stages, else the stage functions' count.
  FailureOr<int64_t> resolveStages(ModuleOp module) {
    int64_t stages = numStages;
    if (stages == 0)
      for (auto func : module.getOps<func::FuncOp>())
        if (auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr))
          stages = std::max(stages, stage.getInt() + 1);
    if (stages < 1)
      return module.emitError("no stages to plan for: run "
                              "pp-derive-backward first or pass num-stages");
    return stages;
  }

  /// Checks that every sample alone fits the cap. The planner names samples
  /// by their place in the sorted list: check here, by the index's order.
  LogicalResult checkSampleMemory(ModuleOp module, ArrayRef<int64_t> lengths) {
    for (auto [index, length] : llvm::enumerate(lengths))
      if (activationPerToken * length > problemCap() * (1 + 1e-12))
        return module.emitError("step ")
               << step.getValue() << ": sample " << index << " of length "
               << length << " needs "
               << formatQuantity(activationPerToken * length)
               << " of activation memory alone, over the cap of "
               << formatQuantity(memoryCap);
    return success();
  }

  void runOnOperation() override;
};

} // namespace

/// Records the plan on the module: its costs, the samples in planned order,
/// where each micro-batch begins and the length it is padded to.
static void recordPlan(ModuleOp module, ArrayRef<int64_t> order,
                       const MicrobatchPlan &plan, const StageCosts &costs) {
  Builder builder(module.getContext());
  module->setAttr(kMicrobatchCostAttr, getCostAttr(module.getContext(), costs));
  module->setAttr(kMicrobatchSamplesAttr, builder.getDenseI64ArrayAttr(order));
  module->setAttr(kMicrobatchBeginAttr,
                  builder.getDenseI64ArrayAttr(plan.begin));
  module->setAttr(kMicrobatchLengthAttr,
                  builder.getDenseI64ArrayAttr(plan.paddedLength));
}

void PlanMicrobatchesPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(checkScalars(module)))
    return signalPassFailure();
  auto a = readTriple(module, "per-sample", perSample);
  auto b = readTriple(module, "per-token", perToken);
  auto c = readTriple(module, "per-token-squared", perTokenSquared);
  auto k = readTriple(module, "per-microbatch", perMicrobatch);
  if (failed(a) || failed(b) || failed(c) || failed(k))
    return signalPassFailure();
  FailureOr<int64_t> stages = resolveStages(module);
  if (failed(stages))
    return signalPassFailure();
  FailureOr<SmallVector<int64_t>> lengths = readLengths(module);
  if (failed(lengths) || failed(checkSampleMemory(module, *lengths)))
    return signalPassFailure();

  SmallVector<int64_t> order = orderLongestFirst(*lengths);
  SmallVector<int64_t> sorted =
      llvm::map_to_vector(order, [&](int64_t i) { return (*lengths)[i]; });

  StageTokenCosts stage;
  TokenCost *phases[] = {&stage.forward, &stage.backwardInput,
                         &stage.backwardWeight};
  for (int phase = 0; phase < 3; ++phase)
    *phases[phase] = {(*a)[phase], (*b)[phase], (*c)[phase], (*k)[phase]};
  stage.activation = {0.0, activationPerToken, 0.0};
  MicrobatchPlanProblem problem;
  problem.numStages = *stages;
  auto sum = [](std::array<double, 3> v) { return v[0] + v[1] + v[2]; };
  problem.time = {sum(*a), sum(*b), sum(*c), sum(*k)};
  problem.memory = stage.activation;
  problem.memoryCap = problemCap();
  problem.microbatchMultiple = microbatchMultiple;
  double n = sorted.size();
  problem.maxCandidates =
      std::max<int64_t>(16, int64_t(kPlannerWork / std::max(1.0, n * n)));
  llvm::Expected<MicrobatchPlan> plan = planMicrobatches(sorted, problem);
  if (!plan) {
    module.emitError("step ")
        << step.getValue() << ": " << llvm::toString(plan.takeError());
    return signalPassFailure();
  }
  if (*stages * plan->getNumMicrobatches() > kMaxStageMicrobatches) {
    module.emitError() << "the plan's " << plan->getNumMicrobatches()
                       << " micro-batches on " << *stages
                       << " stages are too many to schedule";
    return signalPassFailure();
  }
  StageCosts costs = getMicrobatchCosts(
      *plan, SmallVector<StageTokenCosts>(*stages, stage), commCost);

  recordPlan(module, order, *plan, costs);

  PaddedBaseline padded = getPaddedBaseline(
      sorted,
      paddedRows > 0 ? paddedRows.getValue() : *llvm::max_element(plan->rows),
      problem);
  emitRemark(module.getLoc())
      << llvm::formatv(
             "step {0}: {1} samples in {2} micro-batches of {3} samples, "
             "padded to {4} tokens; pipeline time (p - 1) x {5} + {6} = {7}, "
             "against {8} padding every sample to the longest in "
             "micro-batches of {9}",
             step.getValue(), sorted.size(), plan->getNumMicrobatches(),
             llvm::join(
                 llvm::map_range(plan->rows,
                                 [](int64_t r) { return Twine(r).str(); }),
                 ", "),
             llvm::join(
                 llvm::map_range(plan->paddedLength,
                                 [](int64_t l) { return Twine(l).str(); }),
                 ", "),
             formatQuantity(plan->slowest), formatQuantity(plan->total),
             formatQuantity(plan->objective), formatQuantity(padded.objective),
             padded.rows)
             .str();
}
