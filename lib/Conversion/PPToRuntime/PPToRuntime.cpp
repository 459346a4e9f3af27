//===- PPToRuntime.cpp - lower a schedule to calls into libpprt -----------===//
//
// Turns the pp.schedule into `pp_define_program` (declares every runtime
// buffer) and `pp_run_step` (runs one rank's ordered actions), calling the
// bufferized stage functions on memrefs that view runtime buffers.
//
//===----------------------------------------------------------------------===//

#include "pp/Conversion/Passes.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/Transforms/TrainingStep.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include "pprt/pprt.h"

namespace mlir::pp {
#define GEN_PASS_DEF_CONVERTPPTORUNTIME
#include "pp/Conversion/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {

/// A runtime buffer: one named slot of the stage functions.
struct Buffer {
  int32_t id;
  pprt_buffer_kind kind;
  int64_t stage;
  int64_t index;
  MemRefType type;
};

/// Emits the runtime program of one schedule.
class RuntimeProgramBuilder {
public:
  RuntimeProgramBuilder(ModuleOp module, ScheduleOp schedule)
      : module(module), schedule(schedule), b(module.getContext()),
        converter(module.getContext()) {}

  LogicalResult build();

private:
  LogicalResult collectBuffers();
  const Buffer &bufferFor(StringRef slot, MemRefType type, int64_t stage);
  func::FuncOp declare(StringRef name, TypeRange args, TypeRange results = {});
  Value i32(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }
  Value i64(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  }
  void call(StringRef callee, ArrayRef<Value> args);
  void emitDefineProgram();
  void emitRankStep(RankOp rank);
  void emitRunStep(int64_t numRanks);
  void emitCompute(ComputeOp op);
  void emitTransfer(bool isSend, TransferKind kind, int64_t stage, int64_t mb,
                    int64_t peer);

  ModuleOp module;
  ScheduleOp schedule;
  OpBuilder b;
  LLVMTypeConverter converter;
  Location loc = UnknownLoc::get(module.getContext());
  Value ctx;
  llvm::MapVector<StringRef, Buffer> buffers;
  DenseMap<std::pair<int64_t, Phase>, func::FuncOp> stageFuncs;
  std::vector<std::string> accumulatorSlots; // owns the "param_acc:" names
};

} // namespace

/// Splits "kind:a[:b]" into its kind and numbers.
static std::pair<StringRef, SmallVector<int64_t>> parseSlot(StringRef slot) {
  SmallVector<StringRef> parts;
  slot.split(parts, ':');
  SmallVector<int64_t> numbers;
  for (StringRef part : llvm::drop_begin(parts)) {
    int64_t n = 0;
    part.getAsInteger(10, n);
    numbers.push_back(n);
  }
  return {parts.front(), numbers};
}

/// The accumulator of a per-micro-batch weight gradient slot, and back.
static std::string accumulatorOf(StringRef gradSlot) {
  return ("param_acc:" + gradSlot.drop_front(strlen("param_grad:"))).str();
}
static std::string gradientOf(StringRef accSlot) {
  return ("param_grad:" + accSlot.drop_front(strlen("param_acc:"))).str();
}

static pprt_buffer_kind kindOfSlot(StringRef kind) {
  return llvm::StringSwitch<pprt_buffer_kind>(kind)
      .Case("param", PPRT_PARAM)
      .Case("param_acc", PPRT_PARAM_GRAD)
      .Case("data", PPRT_INPUT)
      .Case("target", PPRT_TARGET)
      .Case("loss", PPRT_LOSS)
      .Case("loss_grad", PPRT_LOSS_GRAD)
      .Default(PPRT_MICROBATCH);
}

const Buffer &RuntimeProgramBuilder::bufferFor(StringRef slot, MemRefType type,
                                               int64_t stage) {
  auto it = buffers.find(slot);
  if (it != buffers.end())
    return it->second;
  auto [kind, numbers] = parseSlot(slot);
  Buffer buffer{int32_t(buffers.size()), kindOfSlot(kind), stage,
                numbers.empty() ? 0 : numbers.front(), type};
  return buffers.insert({slot, buffer}).first->second;
}

LogicalResult RuntimeProgramBuilder::collectBuffers() {
  for (auto func : module.getOps<func::FuncOp>()) {
    auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr);
    auto phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr);
    if (!stage || !phase)
      continue;
    stageFuncs[{stage.getInt(), phase.getValue()}] = func;
    if (func.getNumResults() != 0)
      return func.emitError("stage functions must be bufferized with results "
                            "as out-parameters before convert-pp-to-runtime");
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto slot = func.getArgAttrOfType<StringAttr>(i, kSlotAttr);
      auto type = dyn_cast<MemRefType>(func.getArgumentTypes()[i]);
      // The runtime holds dense f32 buffers of up to 4 dimensions.
      if (!slot || slot.getValue().empty() || !type || !type.hasStaticShape() ||
          type.getRank() > 4 || !type.getElementType().isF32() ||
          !type.getLayout().isIdentity())
        return func.emitError("argument #")
               << i << " needs a 'pp.slot' and a static, identity-layout f32 "
               << "memref of rank at most 4";
      const Buffer &buffer = bufferFor(slot.getValue(), type, stage.getInt());
      if (buffer.type != type)
        return func.emitError("argument #")
               << i << " has type " << type << " but slot '" << slot.getValue()
               << "' is " << buffer.type << " elsewhere";
      // Weight gradients of one micro-batch are summed into an accumulator.
      if (slot.getValue().starts_with("param_grad:"))
        accumulatorSlots.push_back(accumulatorOf(slot.getValue()));
    }
  }
  for (const std::string &slot : accumulatorSlots) {
    const Buffer &grad = buffers.find(gradientOf(slot))->second;
    bufferFor(slot, grad.type, grad.stage);
  }
  return success();
}

func::FuncOp RuntimeProgramBuilder::declare(StringRef name, TypeRange args,
                                            TypeRange results) {
  if (auto func = module.lookupSymbol<func::FuncOp>(name))
    return func;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto func =
      func::FuncOp::create(b, loc, name, b.getFunctionType(args, results));
  func.setPrivate();
  return func;
}

void RuntimeProgramBuilder::call(StringRef callee, ArrayRef<Value> args) {
  declare(callee, ValueRange(args).getTypes());
  func::CallOp::create(b, loc, callee, TypeRange(), args);
}

void RuntimeProgramBuilder::emitDefineProgram() {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, "pp_define_program",
                                   b.getFunctionType({ptr}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  ctx = func.getArgument(0);
  call("pprt_set_program",
       {ctx, i32(schedule.getNumRanks()), i32(schedule.getNumStages()),
        i32(schedule.getNumMicrobatches())});
  for (auto &[slot, buffer] : buffers) {
    SmallVector<Value> args = {ctx,
                               i32(buffer.id),
                               i32(buffer.kind),
                               i32(buffer.stage),
                               i32(buffer.index),
                               i32(buffer.type.getRank())};
    for (unsigned d = 0; d < 4; ++d)
      args.push_back(
          i64(d < buffer.type.getRank() ? buffer.type.getDimSize(d) : 0));
    call("pprt_define_buffer", args);
  }
  func::ReturnOp::create(b, loc);
}

void RuntimeProgramBuilder::emitCompute(ComputeOp op) {
  func::FuncOp callee = stageFuncs.lookup({op.getStage(), op.getPhase()});
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  SmallVector<Value> operands;
  SmallVector<std::pair<int32_t, int32_t>> accumulations;
  SmallVector<int32_t> losses;
  Value mb = i32(op.getMb());
  for (unsigned i = 0; i < callee.getNumArguments(); ++i) {
    StringRef slot = callee.getArgAttrOfType<StringAttr>(i, kSlotAttr);
    const Buffer &buffer = buffers.find(slot)->second;
    func::FuncOp lookup =
        declare("pprt_buffer", {ptr, b.getI32Type(), b.getI32Type()}, {ptr});
    func::CallOp data = func::CallOp::create(
        b, loc, lookup, ValueRange{ctx, i32(buffer.id), mb});
    MemRefDescriptor descriptor = MemRefDescriptor::fromStaticShape(
        b, loc, converter, buffer.type, data.getResult(0));
    operands.push_back(UnrealizedConversionCastOp::create(b, loc, buffer.type,
                                                          Value(descriptor))
                           .getResult(0));
    if (slot.starts_with("param_grad:"))
      accumulations.push_back(
          {buffers.find(accumulatorOf(slot))->second.id, buffer.id});
    if (slot == "loss")
      losses.push_back(buffer.id);
  }
  func::CallOp::create(b, loc, callee, operands);
  for (auto [acc, grad] : accumulations)
    call("pprt_accumulate", {ctx, i32(acc), i32(grad), mb});
  for (int32_t loss : losses)
    call("pprt_record_loss", {ctx, i32(loss), mb});
}

/// One send or receive per activation (or gradient) slot crossing the edge.
void RuntimeProgramBuilder::emitTransfer(bool isSend, TransferKind kind,
                                         int64_t stage, int64_t mb,
                                         int64_t peer) {
  // Activations are named by the stage that produces them, gradients by the
  // stage whose output they differentiate: the receiver.
  bool activation = kind == TransferKind::activation;
  int64_t other = getNeighbourStage(kind, isSend, stage);
  int64_t receiver = isSend ? other : stage;
  int64_t named = activation ? (isSend ? stage : other) : receiver;
  std::string prefix =
      (activation ? "act:" : "grad:") + std::to_string(named) + ":";
  for (auto &[slot, buffer] : buffers) {
    if (!slot.starts_with(prefix))
      continue;
    call(isSend ? "pprt_send" : "pprt_recv",
         {ctx, i32(buffer.id), i32(mb), i32(peer), i32(receiver),
          i32(activation ? PPRT_ACTIVATION : PPRT_GRADIENT)});
  }
}

void RuntimeProgramBuilder::emitRankStep(RankOp rank) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      b, rank.getLoc(), ("pp_run_step_rank" + Twine(rank.getRank())).str(),
      b.getFunctionType({ptr}, {}));
  func.setPrivate();
  b.setInsertionPointToStart(func.addEntryBlock());
  ctx = func.getArgument(0);
  for (Operation &action : rank.getBody().front()) {
    loc = action.getLoc();
    llvm::TypeSwitch<Operation *, void>(&action)
        .Case<ComputeOp>([&](ComputeOp op) { emitCompute(op); })
        .Case<SendOp>([&](SendOp op) {
          emitTransfer(true, op.getKind(), op.getStage(), op.getMb(),
                       op.getPeer());
        })
        .Case<RecvOp>([&](RecvOp op) {
          emitTransfer(false, op.getKind(), op.getStage(), op.getMb(),
                       op.getPeer());
        })
        .Case<AllReduceOp>([&](AllReduceOp op) {
          call("pprt_all_reduce", {ctx, i32(op.getStage())});
        })
        .Case<OptimizerStepOp>([&](OptimizerStepOp op) {
          call("pprt_optimizer_step", {ctx, i32(op.getStage())});
        });
  }
  func::ReturnOp::create(b, loc);
}

void RuntimeProgramBuilder::emitRunStep(int64_t numRanks) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      b, loc, "pp_run_step", b.getFunctionType({ptr, b.getI32Type()}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  Value rank =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), func.getArgument(1));
  auto cases = llvm::to_vector(llvm::seq<int64_t>(0, numRanks));
  auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange(), rank, cases,
                                             cases.size());
  for (int64_t r = 0; r < numRanks; ++r) {
    b.setInsertionPointToStart(&dispatch.getCaseRegions()[r].emplaceBlock());
    func::CallOp::create(b, loc, ("pp_run_step_rank" + Twine(r)).str(),
                         TypeRange(), ValueRange{func.getArgument(0)});
    scf::YieldOp::create(b, loc);
  }
  b.setInsertionPointToStart(&dispatch.getDefaultRegion().emplaceBlock());
  scf::YieldOp::create(b, loc);
  b.setInsertionPointAfter(dispatch);
  func::ReturnOp::create(b, loc);
}

LogicalResult RuntimeProgramBuilder::build() {
  if (failed(collectBuffers()))
    return failure();
  WalkResult missing = schedule.walk([&](ComputeOp op) {
    if (stageFuncs.lookup({op.getStage(), op.getPhase()}))
      return WalkResult::advance();
    op.emitOpError("has no stage function for stage ")
        << op.getStage() << " phase " << stringifyPhase(op.getPhase());
    return WalkResult::interrupt();
  });
  if (missing.wasInterrupted())
    return failure();
  // Without an optimizer step a stage would train nothing.
  DenseSet<int64_t> updated;
  schedule.walk([&](OptimizerStepOp op) { updated.insert(op.getStage()); });
  for (int64_t stage = 0; stage < schedule.getNumStages(); ++stage)
    if (!updated.contains(stage))
      return schedule.emitOpError("has no optimizer step for stage ")
             << stage << "; run pp-insert-transfers to add them";
  emitDefineProgram();
  for (RankOp rank : schedule.getBody().getOps<RankOp>())
    emitRankStep(rank);
  emitRunStep(schedule.getNumRanks());
  return success();
}

namespace {
struct ConvertPPToRuntimePass
    : pp::impl::ConvertPPToRuntimeBase<ConvertPPToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ScheduleOp> schedules(module.getOps<ScheduleOp>());
    if (schedules.size() != 1) {
      module.emitError("convert-pp-to-runtime needs exactly one pp.schedule, "
                       "found ")
          << schedules.size();
      return signalPassFailure();
    }
    if (failed(RuntimeProgramBuilder(module, schedules.front()).build()))
      return signalPassFailure();
    schedules.front().erase();
  }
};
} // namespace
