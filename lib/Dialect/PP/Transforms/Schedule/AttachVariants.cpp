//===- AttachVariants.cpp - stage functions per shape bucket --------------===//
//
// Brings the stage functions of models scheduled at other shapes into one
// program as shape variants, and has each micro-batch run its variant's.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/Slot.h"
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h"
#include "pp/Dialect/PP/Transforms/Schedule/ShapeVariants.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <set>

namespace mlir::pp {
#define GEN_PASS_DEF_PPATTACHVARIANTS
#include "pp/Dialect/PP/Transforms/Schedule/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

static int64_t getVariantOf(func::FuncOp func) {
  auto variant = func->getAttrOfType<IntegerAttr>(kVariantAttr);
  return variant ? variant.getInt() : 0;
}

/// The stage functions of `module` (of any variant).
static SmallVector<func::FuncOp> getStageFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kStageAttr) && func->hasAttr(kPhaseAttr))
      funcs.push_back(func);
  return funcs;
}

/// The weights the untagged stage functions of `module` read, by stage.
static std::map<int64_t, std::set<int64_t>> getStageWeights(ModuleOp module) {
  std::map<int64_t, std::set<int64_t>> weights;
  for (func::FuncOp func : getStageFunctions(module)) {
    if (getVariantOf(func) != 0)
      continue;
    int64_t stage = func->getAttrOfType<IntegerAttr>(kStageAttr).getInt();
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto slot = func.getArgAttrOfType<SlotAttr>(i, kSlotAttr))
        if (slot.getSlot().kind == SlotKind::Param)
          weights[stage].insert(slot.getSlot().index);
  }
  return weights;
}

static ScheduleOp getOnlySchedule(ModuleOp module, StringRef what) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.size() == 1)
    return schedules.front();
  module.emitError() << what << " needs exactly one pp.schedule, found "
                     << schedules.size();
  return nullptr;
}

LogicalResult mlir::pp::attachShapeVariant(ModuleOp module, ModuleOp variant,
                                           int64_t index) {
  ScheduleOp main = getOnlySchedule(module, "the program");
  ScheduleOp other = getOnlySchedule(variant, "a shape variant");
  if (!main || !other)
    return failure();
  if (main.getNumStages() != other.getNumStages() ||
      main.getNumRanks() != other.getNumRanks() ||
      main.getNumMicrobatches() != other.getNumMicrobatches())
    return other.emitOpError("of shape variant ")
           << index << " has " << other.getNumStages() << " stages on "
           << other.getNumRanks() << " ranks and " << other.getNumMicrobatches()
           << " micro-batches; the program has " << main.getNumStages()
           << " on " << main.getNumRanks() << " and "
           << main.getNumMicrobatches();
  std::map<int64_t, std::set<int64_t>> ours = getStageWeights(module),
                                       theirs = getStageWeights(variant);
  for (auto &[stage, weights] : theirs)
    if (ours[stage] != weights)
      return other.emitOpError("of shape variant ")
             << index << " places other weights in stage " << stage
             << " than the program does: its model must be cut into the same "
                "stages (mark them with pp.boundary)";
  SymbolTable symbols(module);
  for (func::FuncOp func : getStageFunctions(variant)) {
    func::FuncOp copy = func.clone();
    copy.setSymName((func.getSymName() + "_v" + Twine(index)).str());
    copy->setAttr(
        kVariantAttr,
        IntegerAttr::get(IntegerType::get(module.getContext(), 64), index));
    if (symbols.lookup(copy.getSymName())) {
      copy.erase();
      return func.emitOpError("of shape variant ")
             << index << " would be named like a symbol of the program";
    }
    symbols.insert(copy, main->getIterator());
  }
  return success();
}

LogicalResult
mlir::pp::assignMicrobatchVariants(ModuleOp module,
                                   ArrayRef<int64_t> microbatchVariants) {
  ScheduleOp schedule = getOnlySchedule(module, "the program");
  if (!schedule)
    return failure();
  if (static_cast<int64_t>(microbatchVariants.size()) !=
      static_cast<int64_t>(schedule.getNumMicrobatches()))
    return schedule.emitOpError("has ")
           << schedule.getNumMicrobatches() << " micro-batches, but "
           << microbatchVariants.size() << " shape variants were given";
  std::map<std::tuple<int64_t, Phase, int64_t>, func::FuncOp> byKey;
  for (func::FuncOp func : getStageFunctions(module))
    byKey[{func->getAttrOfType<IntegerAttr>(kStageAttr).getInt(),
           func->getAttrOfType<PhaseAttr>(kPhaseAttr).getValue(),
           getVariantOf(func)}] = func;
  WalkResult result = schedule.walk([&](ComputeOp op) {
    int64_t variant = microbatchVariants[op.getMb()];
    auto it = byKey.find(
        {static_cast<int64_t>(op.getStage()), op.getPhase(), variant});
    if (it == byKey.end()) {
      op.emitOpError("runs micro-batch ")
          << op.getMb() << " as shape variant " << variant << ", which has no "
          << stringifyPhase(op.getPhase()) << " function for stage "
          << op.getStage();
      return WalkResult::interrupt();
    }
    op.setFunctionAttr(FlatSymbolRefAttr::get(it->second.getSymNameAttr()));
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct AttachVariantsPass : pp::impl::PPAttachVariantsBase<AttachVariantsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [i, path] : llvm::enumerate(variants)) {
      std::string error;
      auto file = openInputFile(path, &error);
      if (!file) {
        module.emitError("pp-attach-variants: ") << error;
        return signalPassFailure();
      }
      llvm::SourceMgr sources;
      sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
      OwningOpRef<ModuleOp> variant =
          parseSourceFile<ModuleOp>(sources, ParserConfig(&getContext()));
      if (!variant || failed(attachShapeVariant(module, *variant, i + 1)))
        return signalPassFailure();
    }
    if (!microbatchVariants.empty()) {
      for (int64_t v : microbatchVariants)
        if (v < 0 || v > static_cast<int64_t>(variants.size())) {
          module.emitError("pp-attach-variants: shape variant ")
              << v << " of a micro-batch is not in [0, " << variants.size()
              << "]";
          return signalPassFailure();
        }
      if (failed(assignMicrobatchVariants(module, microbatchVariants)))
        return signalPassFailure();
    }
  }
};
} // namespace
