//===- ScheduleProgram.cpp - a pp.schedule as a plain program -------------===//
//
// Reads schedule ops into a sched::Program, writes a program back as
// schedule ops, and reports a program's violations at the ops.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleProgram.h"
#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

using Kind = TimedAction::Kind;

sched::ProgramAction mlir::pp::readProgramAction(Operation &op) {
  ProgramAction action;
  action.part = getStepPart(&op);
  llvm::TypeSwitch<Operation *>(&op)
      .Case([&](ComputeOp compute) {
        action.phase = compute.getPhase();
        action.stage = compute.getStage();
        action.mb = compute.getMb();
        action.overlapped = static_cast<bool>(compute.getOverlapPartner());
      })
      .Case<SendOp, RecvOp>([&](auto transfer) {
        action.kind = isa<SendOp>(op) ? Kind::send : Kind::recv;
        action.transfer = transfer.getKind();
        action.stage = transfer.getStage();
        action.mb = transfer.getMb();
        action.peer = transfer.getPeer();
        action.grouped = transfer.getGrouped();
      })
      .Case([&](AllReduceOp reduce) {
        action.kind = Kind::allReduce;
        action.stage = reduce.getStage();
      })
      .Case([&](ReduceScatterOp reduce) {
        action.kind = Kind::reduceScatter;
        action.stage = reduce.getStage();
      })
      .Case([&](AllGatherOp gather) {
        action.kind = Kind::allGather;
        action.stage = gather.getStage();
      })
      .Case([&](OptimizerStepOp step) {
        action.kind = Kind::optimizerStep;
        action.stage = step.getStage();
      })
      .Default([&](Operation *) { action.kind = Kind::other; });
  return action;
}

/// The ZeRO stages and units of `schedule` in `program`, spelled as the
/// schedule spells them: one value for every stage, or one per stage.
static void readZero(ScheduleOp schedule, Program &program) {
  Attribute zero = schedule.getZeroAttr();
  if (auto perStage = dyn_cast_if_present<DenseI64ArrayAttr>(zero))
    program.zeroStages.assign(perStage.asArrayRef().begin(),
                              perStage.asArrayRef().end());
  else if (zero)
    program.zeroStages = {schedule.getZeroStage(0)};
  Attribute unit = schedule.getZeroGatherAttr();
  auto isParam = [&](int64_t stage) {
    return schedule.getZeroGatherUnit(stage) == ZeroGather::Param;
  };
  if (auto perStage = dyn_cast_if_present<ArrayAttr>(unit))
    for (int64_t stage = 0, e = perStage.size(); stage < e; ++stage)
      program.gatherPerParam.push_back(isParam(stage));
  else if (unit)
    program.gatherPerParam = {isParam(0)};
}

sched::Program mlir::pp::readProgram(ScheduleOp schedule,
                                     TransferSemantics semantics,
                                     ArrayRef<double> staticMemory) {
  Program program;
  program.numStages = schedule.getNumStages();
  program.numMicrobatches = schedule.getNumMicrobatches();
  program.stageRank = llvm::to_vector(schedule.getStageRank());
  for (RankOp rank : schedule.getBody().front().getOps<RankOp>())
    program.ranks.push_back(
        llvm::map_to_vector(rank.getBody().front(), [](Operation &op) {
          return readProgramAction(op);
        }));
  program.semantics = semantics;
  if (CostAttr cost = schedule.getCostAttr())
    program.cost = getStageCosts(cost);
  if (schedule.getMemoryCapAttr())
    for (int64_t rank = 0, e = program.getNumRanks(); rank < e; ++rank)
      program.memoryCap.push_back(*schedule.getRankMemoryCap(rank));
  program.staticMemory = llvm::to_vector(staticMemory);
  program.numSlices = schedule.getNumSlices();
  program.numReplicas = schedule.getNumReplicas().value_or(1);
  readZero(schedule, program);
  return program;
}

ScheduleSpelling mlir::pp::readScheduleSpelling(ScheduleOp schedule) {
  ScheduleSpelling spelling;
  spelling.symbol = schedule.getSymName().str();
  spelling.name = schedule.getName().str();
  spelling.pipeline = schedule.getPipeline().str();
  spelling.uniformMemoryCap =
      isa_and_present<FloatAttr>(schedule.getMemoryCapAttr());
  spelling.hasReplicas = schedule.getNumReplicas().has_value();
  spelling.hasSlices = schedule.getSlices().has_value();
  return spelling;
}

std::optional<ActionKind>
mlir::pp::getActionKind(const sched::ProgramAction &action) {
  switch (action.kind) {
  case Kind::compute:
    return getComputeAction(action.phase);
  case Kind::send:
  case Kind::recv:
    return getTransferAction({action.kind == Kind::send, action.transfer});
  case Kind::allReduce:
    return ActionKind::AllReduce;
  case Kind::optimizerStep:
    return ActionKind::OptimizerStep;
  case Kind::reduceScatter:
    return ActionKind::ReduceScatter;
  case Kind::allGather:
    return ActionKind::AllGather;
  case Kind::other:
    return std::nullopt;
  }
  llvm_unreachable("unknown action kind");
}

/// Creates the op of `action` at `loc`; nothing for kind `other`.
static void writeAction(OpBuilder &builder, Location loc,
                        const ProgramAction &action) {
  bool first = action.part == StepPart::firstOnly;
  bool next = action.part == StepPart::next;
  switch (action.kind) {
  case Kind::compute:
    ComputeOp::create(builder, loc, action.phase, action.stage, action.mb,
                      action.overlapped, /*function=*/nullptr, first, next);
    return;
  case Kind::send:
    SendOp::create(builder, loc, action.transfer, action.stage, action.mb,
                   action.peer, action.grouped, first, next);
    return;
  case Kind::recv:
    RecvOp::create(builder, loc, action.transfer, action.stage, action.mb,
                   action.peer, action.grouped, first, next);
    return;
  case Kind::allReduce:
    AllReduceOp::create(builder, loc, action.stage);
    return;
  case Kind::optimizerStep:
    OptimizerStepOp::create(builder, loc, action.stage);
    return;
  case Kind::reduceScatter:
    ReduceScatterOp::create(builder, loc, action.stage);
    return;
  case Kind::allGather:
    AllGatherOp::create(builder, loc, action.stage);
    return;
  case Kind::other:
    return;
  }
}

/// The `memory_cap` of `program` spelled as `spelling` says, if it has one.
static Attribute getMemoryCapAttr(Builder &builder, const Program &program,
                                  const ScheduleSpelling &spelling) {
  if (program.memoryCap.empty())
    return nullptr;
  if (spelling.uniformMemoryCap)
    return builder.getF64FloatAttr(program.memoryCap.front());
  return builder.getDenseF64ArrayAttr(program.memoryCap);
}

/// Records the ZeRO stages and units of `program` on `schedule`: a scalar
/// for one value, an array for one per stage; units only where a stage
/// gathers per param.
static void writeZero(Builder &builder, const Program &program,
                      ScheduleOp schedule) {
  ArrayRef<int64_t> zero = program.zeroStages;
  if (zero.size() == 1)
    schedule.setZeroAttr(builder.getI64IntegerAttr(zero.front()));
  else if (!zero.empty())
    schedule.setZeroAttr(builder.getDenseI64ArrayAttr(zero));
  if (!llvm::is_contained(program.gatherPerParam, true))
    return;
  auto unit = [&](bool param) -> Attribute {
    return ZeroGatherAttr::get(builder.getContext(),
                               param ? ZeroGather::Param : ZeroGather::Stage);
  };
  if (program.gatherPerParam.size() == 1)
    schedule.setZeroGatherAttr(unit(true));
  else
    schedule.setZeroGatherAttr(builder.getArrayAttr(
        llvm::map_to_vector(program.gatherPerParam, unit)));
}

ScheduleOp mlir::pp::writeProgram(OpBuilder &builder, const Program &program,
                                  const ScheduleSpelling &spelling,
                                  ProgramLocator locate) {
  MLIRContext *context = builder.getContext();
  auto schedule = ScheduleOp::create(
      builder, locate({}), builder.getStringAttr(spelling.symbol),
      builder.getStringAttr(spelling.name),
      FlatSymbolRefAttr::get(context, spelling.pipeline),
      builder.getI64IntegerAttr(program.numMicrobatches),
      builder.getDenseI64ArrayAttr(program.stageRank),
      program.cost ? getCostAttr(context, *program.cost) : CostAttr(),
      getMemoryCapAttr(builder, program, spelling));
  if (spelling.hasReplicas)
    schedule.setNumReplicasAttr(builder.getI64IntegerAttr(program.numReplicas));
  if (spelling.hasSlices)
    schedule.setSlicesAttr(builder.getI64IntegerAttr(program.numSlices));
  writeZero(builder, program, schedule);
  schedule.setSemanticsOrDefault(program.semantics);
  OpBuilder::InsertionGuard guard(builder);
  builder.createBlock(&schedule.getBody());
  for (auto [rank, actions] : llvm::enumerate(program.ranks)) {
    int64_t rankIndex = rank;
    auto rankOp = RankOp::create(builder, locate({rankIndex, -1}), rankIndex);
    OpBuilder::InsertionGuard rankGuard(builder);
    builder.createBlock(&rankOp.getBody());
    for (auto [index, action] : llvm::enumerate(actions))
      writeAction(builder, locate({rankIndex, static_cast<int64_t>(index)}),
                  action);
  }
  return schedule;
}

namespace {
/// The ops of a schedule by ProgramSite.
class SiteTable {
public:
  explicit SiteTable(ScheduleOp schedule) : schedule(schedule) {
    for (RankOp rank : schedule.getBody().front().getOps<RankOp>()) {
      ranks.push_back(rank);
      actions.push_back(llvm::map_to_vector(rank.getBody().front(),
                                            [](Operation &op) { return &op; }));
    }
  }
  Operation *lookup(ProgramSite site) const {
    if (site.rank < 0)
      return schedule;
    if (site.action < 0)
      return ranks[site.rank];
    return actions[site.rank][site.action];
  }

private:
  ScheduleOp schedule;
  SmallVector<Operation *> ranks;
  SmallVector<SmallVector<Operation *>> actions;
};
} // namespace

/// An error at `op`: prefixed with its name where it is about the op,
/// without the op printed where it is about a rank's missing actions.
static InFlightDiagnostic emitAt(Operation *op, const Violation &violation) {
  if (violation.aboutOp)
    return op->emitOpError(violation.message);
  if (isa<RankOp>(op))
    return mlir::emitError(op->getLoc(), violation.message);
  return op->emitError(violation.message);
}

/// Reports `violation` with its notes, its sites looked up in `sites`.
static InFlightDiagnostic emitAtSites(const SiteTable &sites,
                                      const Violation &violation) {
  InFlightDiagnostic diag = emitAt(sites.lookup(violation.site), violation);
  for (const Violation::Note &note : violation.notes) {
    if (note.site)
      diag.attachNote(sites.lookup(*note.site)->getLoc()) << note.message;
    else
      diag.attachNote() << note.message;
  }
  return diag;
}

InFlightDiagnostic mlir::pp::emitViolation(ScheduleOp schedule,
                                           const Violation &violation) {
  return emitAtSites(SiteTable(schedule), violation);
}

void mlir::pp::emitViolations(ScheduleOp schedule,
                              ArrayRef<Violation> violations) {
  SiteTable sites(schedule);
  for (const Violation &violation : violations)
    (void)emitAtSites(sites, violation);
}
