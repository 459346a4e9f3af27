//===- PPOps.cpp - pp dialect op verifiers --------------------------------===//
//
// Per-op invariants of stages, schedules and schedule actions. Properties of
// a whole schedule (order, matching, deadlock) live in pp-verify-schedule.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::pp;

LogicalResult StageOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("region has ")
           << body.getNumArguments() << " arguments but the stage has "
           << getInputs().size() << " inputs";
  for (auto [i, arg, input] : llvm::enumerate(body.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError("region argument #")
             << i << " has type " << arg.getType() << " but input #" << i
             << " has type " << input.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return yield.emitOpError("yields types that differ from the results of "
                             "its stage");
  if (!getRecompute())
    return success();
  // The backward runs a recomputed forward a second time.
  Operation *writer = nullptr;
  body.walk([&](Operation *op) {
    if (!hasEffect<MemoryEffects::Write>(op))
      return WalkResult::advance();
    writer = op;
    return WalkResult::interrupt();
  });
  if (writer)
    return emitOpError("is recomputed, but '")
           << writer->getName() << "' writes memory, which its backward "
           << "would do a second time";
  return success();
}

CostAttr ScheduleOp::getCostOrUnit() {
  if (CostAttr cost = getCostAttr())
    return cost;
  return CostAttr::getUnit(getContext(), getNumStages());
}

void ScheduleOp::setSemanticsOrDefault(TransferSemantics semantics) {
  if (semantics == TransferSemantics::async)
    removeSemanticsAttr();
  else
    setSemanticsAttr(TransferSemanticsAttr::get(getContext(), semantics));
}

int64_t ScheduleOp::getNumRanks() {
  // Ranks are numbered 0, 1, ... in order (the verifier checks it before
  // the actions', which ask for every peer), so the last one tells the
  // count. Counting the block instead (its size is a walk) made verifying
  // a schedule quadratic in ranks.
  Block &body = getBody().front();
  if (body.empty())
    return 0;
  if (auto last = dyn_cast<RankOp>(body.back()))
    return last.getRank() + 1;
  return llvm::range_size(body.getOps<RankOp>());
}

std::optional<double> ScheduleOp::getRankMemoryCap(int64_t rank) {
  Attribute cap = getMemoryCapAttr();
  if (auto all = dyn_cast_if_present<FloatAttr>(cap))
    return all.getValueAsDouble();
  if (auto perRank = dyn_cast_if_present<DenseF64ArrayAttr>(cap))
    return perRank[rank];
  return std::nullopt;
}

int64_t ScheduleOp::getZeroStage(int64_t stage) {
  Attribute zero = getZeroAttr();
  if (auto perStage = dyn_cast_if_present<DenseI64ArrayAttr>(zero))
    return perStage[stage];
  if (auto all = dyn_cast_if_present<IntegerAttr>(zero))
    return all.getInt();
  return 0;
}

SmallVector<int64_t> ScheduleOp::getZeroStages() {
  return llvm::map_to_vector(
      llvm::seq<int64_t>(0, getNumStages()),
      [&](int64_t stage) { return getZeroStage(stage); });
}

bool ScheduleOp::hasZeroStage(int64_t level) {
  return llvm::is_contained(getZeroStages(), level);
}

ZeroGather ScheduleOp::getZeroGatherUnit(int64_t stage) {
  Attribute unit = getZeroGatherAttr();
  if (auto perStage = dyn_cast_if_present<ArrayAttr>(unit))
    unit = perStage[stage];
  if (auto all = dyn_cast_if_present<ZeroGatherAttr>(unit))
    return all.getValue();
  return ZeroGather::Stage;
}

bool ScheduleOp::hasParamGathers() {
  return llvm::any_of(llvm::seq<int64_t>(0, getNumStages()), [&](int64_t s) {
    return getZeroGatherUnit(s) == ZeroGather::Param;
  });
}

/// `value` as the verifier prints a cap.
static std::string formatCap(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

/// Checks that `memory_cap` is positive and finite (at most kMaxQuantity),
/// and that a list of caps has one per rank.
static LogicalResult verifyMemoryCap(ScheduleOp op, int64_t numRanks) {
  auto valid = [](double cap) { return cap > 0 && isValidQuantity(cap); };
  Attribute cap = op.getMemoryCapAttr();
  if (auto all = dyn_cast_if_present<FloatAttr>(cap);
      all && !valid(all.getValueAsDouble()))
    return op.emitOpError("memory_cap must be positive and at most ")
           << kMaxQuantityText << ", got " << formatCap(all.getValueAsDouble());
  auto perRank = dyn_cast_if_present<DenseF64ArrayAttr>(cap);
  if (!perRank)
    return success();
  if (perRank.size() != numRanks)
    return op.emitOpError("memory_cap has ")
           << perRank.size() << " values, expected one per rank (" << numRanks
           << ")";
  for (auto [rank, value] : llvm::enumerate(perRank.asArrayRef()))
    if (!valid(value))
      return op.emitOpError("memory_cap of rank ")
             << rank << " must be positive and at most " << kMaxQuantityText
             << ", got " << formatCap(value);
  return success();
}

/// Checks that `zero` and `zero_gather` have one value per stage where they
/// are arrays, that each level is 0, 1 or 3, and that only ZeRO-3 stages
/// gather per param.
static LogicalResult verifyZero(ScheduleOp op) {
  int64_t numStages = op.getNumStages();
  if (auto perStage = dyn_cast_if_present<DenseI64ArrayAttr>(op.getZeroAttr());
      perStage && perStage.size() != numStages)
    return op.emitOpError("zero has ")
           << perStage.size() << " levels, expected one per stage ("
           << numStages << ")";
  if (auto perStage = dyn_cast_if_present<ArrayAttr>(op.getZeroGatherAttr());
      perStage && static_cast<int64_t>(perStage.size()) != numStages)
    return op.emitOpError("zero_gather has ")
           << perStage.size() << " units, expected one per stage (" << numStages
           << ")";
  for (int64_t stage = 0; stage < numStages; ++stage) {
    // ZeRO-2 equals ZeRO-1 with gradients accumulated over micro-batches.
    int64_t zero = op.getZeroStage(stage);
    if (zero != 0 && zero != 1 && zero != 3)
      return op.emitOpError("has zero = ")
             << zero << " for stage " << stage
             << "; only 0 (plain data parallelism), 1 (ZeRO-1, optimizer "
             << "state sharded over the replicas) and 3 (ZeRO-3, weights "
             << "sharded too) are supported";
    if (op.getZeroGatherUnit(stage) == ZeroGather::Param && zero != 3)
      return op.emitOpError("gathers the weights of stage ")
             << stage
             << " per param (zero_gather = param) but it has zero = " << zero
             << "; only ZeRO-3 (zero = 3) shards the weights it "
             << "gathers";
  }
  return success();
}

/// Checks that `num_replicas` is a rank count and that the processes the
/// schedule runs on (ranks x replicas x tensor-parallel group) fit
/// kMaxProcesses; num_replicas = 2^63 - 1 was accepted and reached the
/// runtime truncated to 32 bits.
static LogicalResult verifyProcessCount(ScheduleOp schedule, int64_t ranks) {
  std::optional<uint64_t> replicas = schedule.getNumReplicas();
  if (replicas && *replicas > uint64_t(kMaxRanks))
    return schedule.emitOpError("has num_replicas = ")
           << *replicas << "; at most " << kMaxRanks << " are supported";
  // Each factor is at most kMaxRanks here, so the product fits in 64 bits.
  int64_t processes =
      ranks * int64_t(replicas.value_or(1)) *
      std::clamp<int64_t>(getTensorParallelism(schedule), 1, kMaxRanks);
  if (processes > kMaxProcesses)
    return schedule.emitOpError("runs on ")
           << processes << " processes (ranks x replicas x tensor-parallel "
           << "group); at most " << kMaxProcesses << " are supported";
  return success();
}

LogicalResult ScheduleOp::verify() {
  if (getStageRank().empty())
    return emitOpError("needs at least one stage in 'stage_rank'");
  if (getNumStages() > kMaxStages)
    return emitOpError("has ") << getNumStages() << " stages; at most "
                               << kMaxStages << " are supported";
  if (static_cast<int64_t>(getNumMicrobatches()) > kMaxMicrobatches)
    return emitOpError("has ")
           << getNumMicrobatches() << " micro-batches; at most "
           << kMaxMicrobatches << " are supported";
  int64_t expected = 0;
  for (Operation &op : getBody().front()) {
    auto rank = dyn_cast<RankOp>(op);
    if (!rank)
      return op.emitOpError("is not allowed directly in a schedule; "
                            "actions belong inside 'pp.rank'");
    if (static_cast<int64_t>(rank.getRank()) != expected)
      return rank.emitOpError("expected rank ")
             << expected << ", ranks must be numbered 0, 1, ... in order";
    ++expected;
  }
  if (expected > kMaxRanks)
    return emitOpError("has ")
           << expected << " ranks; at most " << kMaxRanks << " are supported";
  if (failed(verifyProcessCount(*this, expected)))
    return failure();
  if (CostAttr cost = getCostAttr();
      cost && cost.getNumStages() != getNumStages())
    return emitOpError("has costs for ")
           << cost.getNumStages() << " stages but " << getNumStages()
           << " stages";
  if (CostAttr cost = getCostAttr();
      cost && cost.getNumMicrobatches() != 0 &&
      cost.getNumMicrobatches() != int64_t(getNumMicrobatches()))
    return emitOpError("has costs for ")
           << cost.getNumMicrobatches() << " micro-batches but "
           << getNumMicrobatches() << " micro-batches";
  if (failed(verifyMemoryCap(*this, expected)))
    return failure();
  if (failed(verifyZero(*this)))
    return failure();
  for (auto [stage, rank] : llvm::enumerate(getStageRank()))
    if (rank < 0 || rank >= expected)
      return emitOpError("stage ")
             << stage << " is placed on rank " << rank
             << ", but the schedule has " << expected << " ranks";
  // Back to back, rank 0 reaches step t + 1's first forward, which reads
  // W(t), only m - p + 1 forwards after step t - 1's last backward, which
  // W(t) needs; PipeDream-2BW asks for m >= p.
  if (getNumWeightVersions() == 2 &&
      static_cast<int64_t>(getNumMicrobatches()) < getNumStages())
    return emitOpError("keeps 2 weight versions but has ")
           << getNumMicrobatches() << " micro-batches for " << getNumStages()
           << " stages; PipeDream-2BW needs at least one micro-batch per "
              "stage";
  if (getNumMicrobatches() % getNumSlices() != 0)
    return emitOpError("counts ")
           << getNumMicrobatches()
           << " slices in 'microbatches', not a multiple of its "
           << getNumSlices() << " slices per micro-batch";
  return success();
}

/// Checks the stage, micro-batch and peer of an action against its schedule.
static LogicalResult verifyAction(Operation *op, int64_t stage, int64_t mb,
                                  std::optional<int64_t> peer = std::nullopt) {
  auto schedule = op->getParentOfType<ScheduleOp>();
  if (!schedule)
    return success();
  if (stage >= schedule.getNumStages())
    return op->emitOpError("stage ")
           << stage << " out of range: the schedule has "
           << schedule.getNumStages() << " stages";
  if (mb >= static_cast<int64_t>(schedule.getNumMicrobatches()))
    return op->emitOpError("micro-batch ")
           << mb << " out of range: the schedule has "
           << schedule.getNumMicrobatches() << " micro-batches";
  if (peer && *peer >= schedule.getNumRanks())
    return op->emitOpError("peer ")
           << *peer << " out of range: the schedule has "
           << schedule.getNumRanks() << " ranks";
  return success();
}

ComputeOp ComputeOp::getOverlapPartner() {
  if (!getOverlap())
    return nullptr;
  return dyn_cast_or_null<ComputeOp>((*this)->getPrevNode());
}

StepPart mlir::pp::getStepPart(Operation *op) {
  return llvm::TypeSwitch<Operation *, StepPart>(op)
      .Case<ComputeOp, SendOp, RecvOp>([](auto action) {
        if (action.getNextStep())
          return StepPart::next;
        return action.getFirstStep() ? StepPart::firstOnly : StepPart::every;
      })
      .Default(StepPart::every);
}

/// Checks `first_step` and `next_step`: one at most, and only where the
/// weight versions let a step's actions run across the step boundary.
static LogicalResult verifyStepPart(Operation *op, bool first, bool next) {
  if (!first && !next)
    return success();
  if (first && next)
    return op->emitOpError("cannot be both 'first_step' and 'next_step'");
  auto schedule = op->getParentOfType<ScheduleOp>();
  if (schedule && schedule.getNumWeightVersions() != 2)
    return op->emitOpError("is '")
           << (first ? "first_step" : "next_step")
           << "', but the schedule keeps one weight version: only a schedule "
              "with 'weight_versions = 2' runs steps without a flush";
  return success();
}

LogicalResult ComputeOp::verify() {
  if (failed(verifyAction(*this, getStage(), getMb())) ||
      failed(verifyStepPart(*this, getFirstStep(), getNextStep())))
    return failure();
  if (getNextStep() && getPhase() != Phase::forward)
    return emitOpError("is 'next_step' but not a forward: only forwards of "
                       "the next step fill a step's cool-down");
  if (!getOverlap())
    return success();
  // An overlapped pair is PyTorch's (F;B)OVERLAP_F_B: a forward, then the
  // backward that runs concurrently with it.
  if (getPhase() == Phase::forward)
    return emitOpError("'overlap' marks the backward of an overlapped pair; "
                       "the forward comes first, without it");
  ComputeOp partner = getOverlapPartner();
  if (!partner || partner.getPhase() != Phase::forward || partner.getOverlap())
    return emitOpError("with 'overlap' must directly follow the "
                       "'pp.compute forward' it overlaps with");
  if (partner.getStage() == getStage() && partner.getMb() == getMb())
    return emitOpError("cannot overlap with the forward of its own stage and "
                       "micro-batch, whose result it needs");
  return success();
}

LogicalResult ComputeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FlatSymbolRefAttr name = getFunctionAttr();
  if (!name)
    return success();
  auto func = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, name);
  if (!func)
    return emitOpError("runs ") << name << ", which is not a func.func";
  auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr);
  auto phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr);
  if (!stage || !phase)
    return emitOpError("runs ")
           << name << ", which is not a stage function (it has no '"
           << kStageAttr << "' and '" << kPhaseAttr << "')";
  if (stage.getInt() != static_cast<int64_t>(getStage()) ||
      phase.getValue() != getPhase())
    return emitOpError("runs ")
           << name << ", the " << stringifyPhase(phase.getValue())
           << " of stage " << stage.getInt() << ", as the "
           << stringifyPhase(getPhase()) << " of stage " << getStage();
  return success();
}

bool mlir::pp::isGroupedWithPrevious(Operation *op) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<SendOp, RecvOp>([](auto transfer) { return transfer.getGrouped(); })
      .Default(false);
}

/// Checks a transfer: its action fields, and that `grouped` follows a
/// transfer.
template <typename TransferOp>
static LogicalResult verifyTransfer(TransferOp op) {
  if (failed(verifyAction(op, op.getStage(), op.getMb(), op.getPeer())) ||
      failed(verifyStepPart(op, op.getFirstStep(), op.getNextStep())))
    return failure();
  Operation *previous = op->getPrevNode();
  if (op.getGrouped() && !isa_and_nonnull<SendOp, RecvOp>(previous))
    return op.emitOpError("with 'grouped' must directly follow the "
                          "'pp.send' or 'pp.recv' whose group it joins");
  return success();
}

LogicalResult SendOp::verify() { return verifyTransfer(*this); }

LogicalResult RecvOp::verify() { return verifyTransfer(*this); }

LogicalResult AllReduceOp::verify() {
  return verifyAction(*this, getStage(), 0);
}

LogicalResult ReduceScatterOp::verify() {
  return verifyAction(*this, getStage(), 0);
}

LogicalResult AllGatherOp::verify() {
  return verifyAction(*this, getStage(), 0);
}

LogicalResult OptimizerStepOp::verify() {
  return verifyAction(*this, getStage(), 0);
}

#define GET_OP_CLASSES
#include "pp/Dialect/PP/IR/PPOps.cpp.inc"
