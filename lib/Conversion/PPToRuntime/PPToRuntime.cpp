//===- PPToRuntime.cpp - lower a schedule to calls into libpprt -----------===//
//
// Turns the pp.schedule into `pp_define_program` (declares every runtime
// buffer) and `pp_run_step` (runs one rank's ordered actions), calling the
// bufferized stage functions on memrefs that view runtime buffers through
// one action function per stage function.
//
//===----------------------------------------------------------------------===//

#include "pp/Conversion/Passes.h"
#include "pp/Conversion/RuntimeFunctions.h"
#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/Slot.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/SaveAndRestore.h"

#include <map>

#include "pp-abi/pprt_abi.h"

namespace mlir::pp {
#define GEN_PASS_DEF_CONVERTPPTORUNTIME
#include "pp/Conversion/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

namespace {

/// A runtime buffer: one slot of the stage functions, or the sum of a
/// weight's per-micro-batch gradients.
struct Buffer {
  int32_t id;
  pprt_buffer_kind kind;
  int64_t stage;
  Slot slot;
  MemRefType type;
  pprt_dtype dtype;
  int64_t idBound = 0; // rows of the smallest table its ids index; 0: none
  std::optional<int64_t> idIgnored; // the one id past it a loss masks out
  pprt_packed_input packedInput = PPRT_PACKED_NONE; // `pp.packed_input`
  int64_t splitDim = -1; // the dimension `pp.split` splits over TP; -1: none
  int64_t variant = 0;   // the shape variant of a per-micro-batch buffer
};

/// The sequence slice stage function `func` computes (`pp.slice`), else 0.
static int64_t getSlice(func::FuncOp func) {
  auto slice = func->getAttrOfType<IntegerAttr>(kSliceAttr);
  return slice ? slice.getInt() : 0;
}

/// The shape variant of stage function `func` (`pp.variant`, else 0). The
/// slices of a sequence-sliced step run as variants: each has its own
/// per-micro-batch buffers and shapes.
static int64_t getVariant(func::FuncOp func) {
  auto variant = func->getAttrOfType<IntegerAttr>(kVariantAttr);
  return variant ? variant.getInt() : getSlice(func);
}

/// Whether a slot of `kind` holds values a sequence slice carries to the
/// later slices of its micro-batch: one buffer, at the unit of the slice
/// that computes them.
static bool isCarried(SlotKind kind) {
  return kind == SlotKind::Carry || kind == SlotKind::CarryGrad;
}

/// Whether every variant shares the buffer of a slot of `kind`: weights,
/// their gradients and the scalar loss have one shape whatever the batch.
static bool isSharedByVariants(SlotKind kind) {
  return kind == SlotKind::Param || kind == SlotKind::ParamGrad ||
         kind == SlotKind::State || kind == SlotKind::Loss ||
         kind == SlotKind::LossGrad || isCarried(kind);
}

/// The dimension the `pp.split` of argument `i` of `func` splits, or -1.
static int64_t getSplitDim(func::FuncOp func, unsigned i) {
  auto split = func.getArgAttrOfType<ArrayAttr>(i, kSplitAttr);
  if (!split)
    return -1;
  for (auto [dim, axes] : llvm::enumerate(split.getAsRange<ArrayAttr>()))
    if (!axes.empty())
      return dim;
  return -1;
}

/// Emits the runtime program of one schedule, or of one per step plan
/// (`pp.step_plan`), which share the stage functions and buffers.
class RuntimeProgramBuilder {
public:
  RuntimeProgramBuilder(ModuleOp module, ArrayRef<ScheduleOp> schedules,
                        SymbolTable &symbols, bool gatherParams)
      : module(module), schedules(schedules), schedule(schedules.front()),
        symbols(symbols), gatherParams(gatherParams), b(module.getContext()),
        converter(module.getContext()), fns(module.getContext()) {}

  LogicalResult build();

private:
  LogicalResult collectBuffers();
  LogicalResult collectMicrobatchVariants();
  LogicalResult checkSchedule();
  LogicalResult collectArgument(func::FuncOp func, unsigned i, int64_t stage);
  const Buffer &slotBuffer(func::FuncOp func, unsigned i);
  /// Whether the stage functions acquire `buffer` themselves: a param of a
  /// stage under ZeRO-3 gathered per param.
  bool isAcquired(const Buffer &buffer) const {
    return buffer.slot.kind == SlotKind::Param && gathersPerParam(buffer.stage);
  }
  bool gathersPerParam(int64_t stage) const {
    return gatherParams &&
           ScheduleOp(schedule).getZeroGatherUnit(stage) == ZeroGather::Param;
  }
  Value i32(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }
  Value call(const RuntimeFunction &fn, ArrayRef<Value> args);
  Value getDims(MemRefType type);
  void emitDefineBuffer(const Buffer &buffer);
  void emitDefineSaved();
  void emitDefineProgram();
  void emitRankStep(RankOp rank, StringRef prefix);
  /// Calls `prefix`_rank<r> for the rank argument of `func`.
  void emitRankDispatch(func::FuncOp func, StringRef prefix, int64_t numRanks);
  void emitDefineStepPlans();
  void emitAction(Operation &action);
  /// Emits `action`, with the brackets of the exchange group it starts or
  /// ends, in the steps it runs in.
  void emitGuardedAction(Operation &action);
  /// Emits `action` behind a guard if it is `first_step` or `next_step`
  /// (which runs with step offset 1).
  void emitInSteps(Operation &action);
  void emitRunStep(int64_t numRanks);
  /// The function `op` runs: the one it names, or for an action without
  /// one (a schedule imported or written apart from its model), the stage
  /// function tagged with its stage and phase.
  func::FuncOp getStageFunction(ComputeOp op);
  /// `<callee>_action(ctx, mb)`: looks up the buffers of `callee`'s
  /// arguments for micro-batch `mb`, calls it, sums its weight gradients and
  /// records its loss. One per stage function, so that the step's code grows
  /// with the schedule's actions and not with actions x arguments.
  func::FuncOp getActionFunction(func::FuncOp callee);
  /// A table of the data pointers of buffers `ids` for micro-batch `mb`
  /// less `back[i]` (a carried value's unit), filled by a loop over
  /// constant globals of the ids and offsets (before `action`).
  Value emitBufferTable(func::FuncOp action, ArrayRef<int32_t> ids,
                        ArrayRef<int32_t> back, Value mb);
  /// How many units before its reader's the buffer of argument `i` of
  /// `func` lives: a carried value's, at the slice that computes it.
  int32_t getUnitsBack(func::FuncOp func, unsigned i);
  /// Rewrites `stage` to take the table of its arguments' buffers instead
  /// of the arguments: each use reads its entry just before the op of the
  /// body that holds it. A call with one argument per buffer, thousands in
  /// a deep model, with every pointer live from its lookup to the call, is
  /// what LLVM's code generation is slowest on (worse than linear).
  /// Params it acquires itself (isAcquired) are not in the table; it then
  /// takes the runtime context first. Returns whether it does.
  bool takeBufferTable(func::FuncOp stage);
  /// Replaces the uses of param argument `param` (buffer `id`) of `stage`
  /// by views of the whole weights that `pprt_param_acquire` returns right
  /// before the first op of the body reading it or a value derived from
  /// it, and releases them right after the last such op.
  void acquireAround(func::FuncOp stage, BlockArgument param, Value context,
                     int32_t id);
  /// Replaces the uses of `argument` by views of the buffer `emitData`
  /// emits, one right before each op of `body` that holds a use.
  void replaceByViews(BlockArgument argument, Region &body,
                      function_ref<Value()> emitData);
  /// A memref of static `type` on the buffer at `data`.
  Value emitBufferView(Value data, MemRefType type) {
    MemRefDescriptor descriptor =
        MemRefDescriptor::fromStaticShape(b, loc, converter, type, data);
    return UnrealizedConversionCastOp::create(b, loc, type, Value(descriptor))
        .getResult(0);
  }
  void emitCompute(ComputeOp op);
  void emitTransfer(bool isSend, TransferKind kind, int64_t stage, int64_t mb,
                    int64_t peer);

  ModuleOp module;
  SmallVector<ScheduleOp> schedules;
  /// The schedule being emitted (the first while defining the program).
  ScheduleOp schedule;
  /// Whether the schedules are step plans, chosen per step by the runtime.
  bool isPlanned() const { return module->hasAttr(kStepPlansAttr); }
  SymbolTable &symbols;
  bool gatherParams;
  OpBuilder b;
  LLVMTypeConverter converter;
  RuntimeFunctions fns;
  Location loc = UnknownLoc::get(module.getContext());
  Value ctx;
  using SlotKey = std::tuple<unsigned, int64_t, int64_t, int64_t>;
  static SlotKey keyOf(const Slot &slot, int64_t variant) {
    return {static_cast<unsigned>(slot.kind), slot.stage, slot.index,
            isSharedByVariants(slot.kind) ? 0 : variant};
  }
  llvm::MapVector<SlotKey, Buffer> buffers;      // by slot and variant
  llvm::MapVector<int64_t, Buffer> gradientSums; // by weight argument
  /// Variant 0's stage functions, which actions without a function run.
  DenseMap<std::pair<int64_t, Phase>, func::FuncOp> stageFuncs;
  DenseMap<Operation *, func::FuncOp> actionFuncs; // by stage function
  /// Stage functions that ops other than the schedule's actions call.
  DenseSet<Operation *> calledElsewhere;
  SmallVector<func::FuncOp> allStageFuncs; // every variant's
  /// The variant each micro-batch runs, where any runs one but 0: of the
  /// schedule being emitted, and of every schedule.
  std::map<int64_t, int64_t> microbatchVariants;
  SmallVector<std::map<int64_t, int64_t>> planVariants;
  /// The slice that computes each carried value (and whose backward reads
  /// its gradients): the first slice whose functions name the slot.
  std::map<std::tuple<unsigned, int64_t, int64_t>, int64_t> carrySlices;
};

} // namespace

static pprt_buffer_kind kindOf(SlotKind kind) {
  switch (kind) {
  case SlotKind::Param:
    return PPRT_PARAM;
  case SlotKind::Data:
    return PPRT_INPUT;
  case SlotKind::Target:
    return PPRT_TARGET;
  case SlotKind::Loss:
    return PPRT_LOSS;
  case SlotKind::LossGrad:
    return PPRT_LOSS_GRAD;
  case SlotKind::State:
    return PPRT_STATE;
  default:
    return PPRT_MICROBATCH;
  }
}

/// The runtime's element type for `type`, if it has one.
static std::optional<pprt_dtype> dtypeOf(Type type) {
  if (type.isF32())
    return PPRT_F32;
  if (type.isF16())
    return PPRT_F16;
  if (type.isBF16())
    return PPRT_BF16;
  if (type.isSignlessInteger(32))
    return PPRT_I32;
  if (type.isSignlessInteger(64))
    return PPRT_I64;
  if (type.isSignlessInteger(1))
    return PPRT_I1;
  return std::nullopt;
}

/// Records the buffer of argument `i` of a stage function, checking that the
/// runtime can hold it: a dense memref of up to PPRT_MAX_DIMS dimensions of
/// f32, f16, bf16, i1, i32 or i64 whose slot has the same type everywhere.
LogicalResult RuntimeProgramBuilder::collectArgument(func::FuncOp func,
                                                     unsigned i,
                                                     int64_t stage) {
  auto slotAttr = func.getArgAttrOfType<SlotAttr>(i, kSlotAttr);
  std::optional<Slot> slot =
      slotAttr ? slotAttr.getSlot() : std::optional<Slot>();
  auto type = dyn_cast<MemRefType>(func.getArgumentTypes()[i]);
  std::optional<pprt_dtype> dtype =
      type ? dtypeOf(type.getElementType()) : std::nullopt;
  if (type && type.getRank() > PPRT_MAX_DIMS)
    return func.emitError("argument #")
           << i << " has rank " << type.getRank() << " (" << type
           << "); runtime buffers have rank at most " << PPRT_MAX_DIMS;
  if (!slot || !type || !type.hasStaticShape() || !dtype ||
      !type.getLayout().isIdentity())
    return func.emitError("argument #")
           << i << " needs a valid 'pp.slot' and a static, identity-layout "
           << "memref of f32, f16, bf16, i1, i32 or i64";
  // The runtime seeds and records the loss of a micro-batch as one f32, so
  // a model that returns anything else would fail only when it runs.
  bool isLoss =
      slot->kind == SlotKind::Loss || slot->kind == SlotKind::LossGrad;
  if (isLoss && (type.getNumElements() != 1 || *dtype != PPRT_F32))
    return mlir::emitError(func.getLoc())
           << "the training step must return a scalar loss (one f32, such "
              "as tensor<f32>); stage "
           << stage << " computes it as " << type;
  int64_t variant = isSharedByVariants(slot->kind) ? 0 : getVariant(func);
  if (isCarried(slot->kind)) {
    auto [it, inserted] = carrySlices.try_emplace(
        {static_cast<unsigned>(slot->kind), slot->stage, slot->index},
        getSlice(func));
    it->second = std::min(it->second, getSlice(func));
  }
  auto [it, inserted] = buffers.try_emplace(
      keyOf(*slot, variant), Buffer{int32_t(buffers.size()), kindOf(slot->kind),
                                    stage, *slot, type, *dtype});
  it->second.variant = variant;
  if (it->second.type != type)
    return func.emitError("argument #")
           << i << " has type " << type << " but slot " << slotAttr << " is "
           << it->second.type << " elsewhere";
  if (slot->kind == SlotKind::Param)
    it->second.splitDim = getSplitDim(func, i);
  if (auto bound = func.getArgAttrOfType<IntegerAttr>(i, kIdBoundAttr)) {
    int64_t &known = it->second.idBound;
    known = known ? std::min(known, bound.getInt()) : bound.getInt();
  }
  if (auto ignored = func.getArgAttrOfType<IntegerAttr>(i, kIdIgnoredAttr))
    it->second.idIgnored = ignored.getInt();
  if (auto packed = func.getArgAttrOfType<StringAttr>(i, kPackedInputAttr)) {
    if (slot->kind != SlotKind::Data || type.getRank() != 2 ||
        (*dtype != PPRT_I32 && *dtype != PPRT_I64))
      return func.emitError("argument #")
             << i << " (" << slotAttr << ", " << type << ") is marked '"
             << kPackedInputAttr << " = " << packed
             << "': only an i32 or i64 [rows, positions] model input holds "
                "document ids or positions";
    it->second.packedInput =
        packed == kDocumentIds ? PPRT_DOCUMENT_IDS : PPRT_POSITION_IDS;
  }
  // Weight gradients of one micro-batch are summed into a persistent buffer.
  if (inserted && slot->kind == SlotKind::ParamGrad)
    gradientSums.try_emplace(
        slot->index, Buffer{0, PPRT_PARAM_GRAD, stage, *slot, type, *dtype});
  return success();
}

LogicalResult RuntimeProgramBuilder::collectBuffers() {
  for (auto func : module.getOps<func::FuncOp>()) {
    auto stage = func->getAttrOfType<IntegerAttr>(kStageAttr);
    auto phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr);
    if (!stage || !phase)
      continue;
    if (getVariant(func) == 0)
      stageFuncs[{stage.getInt(), phase.getValue()}] = func;
    allStageFuncs.push_back(func);
    if (func.getNumResults() != 0)
      return func.emitError("stage functions must be bufferized with results "
                            "as out-parameters before convert-pp-to-runtime");
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (failed(collectArgument(func, i, stage.getInt())))
        return failure();
  }
  // A new state value replaces a state some stage function reads.
  for (auto [key, func] : stageFuncs)
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      Slot slot = func.getArgAttrOfType<SlotAttr>(i, kSlotAttr).getSlot();
      if (slot.kind == SlotKind::StateUpdate &&
          !buffers.count(keyOf(Slot::state(slot.index), 0)))
        return func.emitError("argument #")
               << i << " holds a new value of state argument #" << slot.index
               << ", which no stage function reads";
    }
  // The runtime counts a carried value with the slice that computes it.
  for (auto &[key, buffer] : buffers)
    if (isCarried(buffer.slot.kind))
      buffer.variant = carrySlices[{static_cast<unsigned>(buffer.slot.kind),
                                    buffer.slot.stage, buffer.slot.index}];
  // The sums take the ids after the slots.
  int32_t id = buffers.size();
  for (auto &entry : gradientSums)
    entry.second.id = id++;
  return success();
}

/// The buffer of argument `i` of a stage function (collected before).
const Buffer &RuntimeProgramBuilder::slotBuffer(func::FuncOp func, unsigned i) {
  Slot slot = func.getArgAttrOfType<SlotAttr>(i, kSlotAttr).getSlot();
  return buffers.find(keyOf(slot, getVariant(func)))->second;
}

/// The variant each micro-batch runs: that of the functions its actions
/// call, the same on every stage (its buffers cross stages).
LogicalResult RuntimeProgramBuilder::collectMicrobatchVariants() {
  std::map<int64_t, std::pair<int64_t, ComputeOp>> seen;
  WalkResult result = schedule.walk([&](ComputeOp op) {
    int64_t variant = getVariant(getStageFunction(op));
    auto [it, inserted] = seen.try_emplace(op.getMb(), variant, op);
    if (inserted || it->second.first == variant)
      return WalkResult::advance();
    InFlightDiagnostic diag = op.emitOpError("runs micro-batch ")
                              << op.getMb() << " as shape variant " << variant
                              << ", but stage " << it->second.second.getStage()
                              << " runs it as variant " << it->second.first;
    diag.attachNote(it->second.second.getLoc()) << "that action";
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return failure();
  bool any = llvm::any_of(seen, [](auto &entry) { return entry.second.first; });
  if (any)
    for (auto &[mb, entry] : seen)
      microbatchVariants[mb] = entry.first;
  return success();
}

Value RuntimeProgramBuilder::call(const RuntimeFunction &fn,
                                  ArrayRef<Value> args) {
  func::CallOp op = fn.create(b, loc, symbols, args);
  return op.getNumResults() ? op.getResult(0) : Value();
}

/// A pointer to the dims of `type`: a constant global per shape (before
/// the function being built), shared by the buffers of that shape, or null
/// for a scalar.
Value RuntimeProgramBuilder::getDims(MemRefType type) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  if (type.getRank() == 0)
    return LLVM::ZeroOp::create(b, loc, ptr);
  std::string name = "pp_dims";
  for (int64_t dim : type.getShape())
    name += "_" + std::to_string(dim);
  if (!symbols.lookup<LLVM::GlobalOp>(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(b.getInsertionBlock()->getParentOp());
    auto values = RankedTensorType::get({type.getRank()}, b.getI64Type());
    symbols.insert(LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI64Type(), type.getRank()),
        /*isConstant=*/true, LLVM::Linkage::Private, name,
        DenseElementsAttr::get(values, type.getShape())));
  }
  return LLVM::AddressOfOp::create(b, loc, ptr, name);
}

/// Declares a buffer: id, kind, owning stage, the step argument it holds
/// (weights and data), its element type and its shape.
void RuntimeProgramBuilder::emitDefineBuffer(const Buffer &buffer) {
  bool isArgument = buffer.slot.kind == SlotKind::Param ||
                    buffer.slot.kind == SlotKind::ParamGrad ||
                    buffer.slot.kind == SlotKind::State ||
                    buffer.slot.kind == SlotKind::Data ||
                    buffer.slot.kind == SlotKind::Target;
  SmallVector<Value> args = {ctx,
                             i32(buffer.id),
                             i32(buffer.kind),
                             i32(buffer.stage),
                             i32(isArgument ? buffer.slot.index : 0),
                             i32(buffer.dtype),
                             i32(buffer.type.getRank()),
                             getDims(buffer.type)};
  call(fns.defineBuffer, args);
  if (buffer.variant != 0)
    call(fns.setBufferVariant, {ctx, i32(buffer.id), i32(buffer.variant)});
  if (buffer.idBound > 0 &&
      (buffer.dtype == PPRT_I32 || buffer.dtype == PPRT_I64)) {
    call(fns.setIdBound, {ctx, i32(buffer.id),
                          arith::ConstantOp::create(
                              b, loc, b.getI64IntegerAttr(buffer.idBound))});
    if (buffer.idIgnored)
      call(fns.setIdIgnored,
           {ctx, i32(buffer.id),
            arith::ConstantOp::create(b, loc,
                                      b.getI64IntegerAttr(*buffer.idIgnored))});
  }
  if (buffer.packedInput != PPRT_PACKED_NONE)
    call(fns.setPackedInput,
         {ctx, i32(buffer.id), i32(int64_t(buffer.packedInput))});
  // A weight split over the tensor-parallel group (its gradient alike).
  if (buffer.kind == PPRT_PARAM && buffer.splitDim >= 0 &&
      getTensorParallelism(schedule) > 1)
    call(fns.setBufferSplit, {ctx, i32(buffer.id), i32(buffer.splitDim),
                              i32(getTensorParallelism(schedule))});
}

void RuntimeProgramBuilder::emitDefineProgram() {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, "pp_define_program",
                                   b.getFunctionType({ptr}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  ctx = func.getArgument(0);
  int64_t microbatches = 0;
  for (ScheduleOp plan : schedules)
    microbatches = std::max<int64_t>(microbatches, plan.getNumMicrobatches());
  call(fns.setProgram, {ctx, i32(PPRT_ABI_VERSION), i32(schedule.getNumRanks()),
                        i32(schedule.getNumStages()), i32(microbatches)});
  // The runtime then insists on exactly ranks x replicas processes. Only a
  // schedule that reduces gradients without saying over how many replicas
  // (an imported one) may run as any number of them.
  std::optional<uint64_t> replicas = schedule.getNumReplicas();
  bool reduces = schedule
                     ->walk([](Operation *op) {
                       return isa<AllReduceOp, ReduceScatterOp>(op)
                                  ? WalkResult::interrupt()
                                  : WalkResult::advance();
                     })
                     .wasInterrupted();
  if (replicas || !reduces)
    call(fns.setDataParallel, {ctx, i32(replicas.value_or(1))});
  if (getTensorParallelism(schedule) != 1)
    call(fns.setTensorParallel, {ctx, i32(getTensorParallelism(schedule))});
  if (schedule.getNumWeightVersions() != 1)
    call(fns.setWeightVersions, {ctx, i32(schedule.getNumWeightVersions())});
  // A program with any ZeRO stage declares every stage's.
  SmallVector<int64_t> zero = schedule.getZeroStages();
  if (llvm::any_of(zero, [](int64_t level) { return level != 0; }))
    for (auto [stage, level] : llvm::enumerate(zero))
      call(fns.setStageZero, {ctx, i32(stage), i32(level)});
  for (auto &entry : buffers)
    emitDefineBuffer(entry.second);
  for (auto &entry : gradientSums)
    emitDefineBuffer(entry.second);
  if (!isPlanned())
    for (auto [mb, variant] : planVariants.front())
      call(fns.setMicrobatchVariant, {ctx, i32(mb), i32(variant)});
  else
    emitDefineStepPlans();
  if (int64_t slices = schedule.getNumSlices(); slices > 1)
    call(fns.setSlices, {ctx, i32(slices)});
  emitDefineSaved();
  func::ReturnOp::create(b, loc);
}

/// Each plan's micro-batch variants, then the step table (a constant
/// global) the runtime picks plans and loads samples by.
void RuntimeProgramBuilder::emitDefineStepPlans() {
  for (auto [plan, variants] : llvm::enumerate(planVariants)) {
    int64_t m = schedules[plan].getNumMicrobatches();
    for (int64_t mb = 0; mb < m; ++mb) {
      auto it = variants.find(mb);
      call(fns.setPlanMicrobatchVariant,
           {ctx, i32(plan), i32(mb),
            i32(it == variants.end() ? 0 : it->second)});
    }
  }
  auto table = module->getAttrOfType<DenseI64ArrayAttr>(kStepPlansAttr);
  SmallVector<int32_t> entries(table.asArrayRef().begin(),
                               table.asArrayRef().end());
  Type i32Type = b.getI32Type();
  int64_t count = entries.size();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(b.getInsertionBlock()->getParentOp());
    symbols.insert(LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(i32Type, count), /*isConstant=*/true,
        LLVM::Linkage::Private, "pp_step_plans",
        DenseElementsAttr::get(RankedTensorType::get({count}, i32Type),
                               ArrayRef<int32_t>(entries))));
  }
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value address = LLVM::AddressOfOp::create(b, loc, ptr, "pp_step_plans");
  call(fns.setStepPlans, {ctx, address, i32(count)});
  if (auto row = module->getAttrOfType<IntegerAttr>(kPackedRowsAttr))
    call(fns.setPacking, {ctx, i32(row.getInt())});
}

static_assert(PPRT_FORWARD == static_cast<int>(Phase::forward) &&
                  PPRT_BACKWARD_INPUT ==
                      static_cast<int>(Phase::backward_input) &&
                  PPRT_BACKWARD_WEIGHT ==
                      static_cast<int>(Phase::backward_weight) &&
                  PPRT_BACKWARD == static_cast<int>(Phase::backward),
              "pprt_phase mirrors pp::Phase");

/// Tells the runtime which per-micro-batch buffers a stage's forward leaves
/// for its backward (the values it saved, its inputs, its data) and until
/// which phase: W if W reads them, else the phase that does. The profiler
/// reports their size as the stage's activation memory.
void RuntimeProgramBuilder::emitDefineSaved() {
  // By buffer, then stage, for a deterministic program.
  std::map<std::pair<int32_t, int64_t>, Phase> held;
  for (Phase phase :
       {Phase::backward, Phase::backward_input, Phase::backward_weight}) {
    for (func::FuncOp func : allStageFuncs) {
      if (func->getAttrOfType<PhaseAttr>(kPhaseAttr).getValue() != phase)
        continue;
      int64_t stage = func->getAttrOfType<IntegerAttr>(kStageAttr).getInt();
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        const Buffer &buffer = slotBuffer(func, i);
        SlotKind kind = buffer.slot.kind;
        if (kind == SlotKind::Saved || kind == SlotKind::Activation ||
            kind == SlotKind::Data || kind == SlotKind::Target ||
            kind == SlotKind::Carry)
          held[{buffer.id, stage}] = phase;
      }
    }
  }
  for (auto &[key, phase] : held)
    call(fns.defineSaved,
         {ctx, i32(key.first), i32(key.second), i32(static_cast<int>(phase))});
}

func::FuncOp RuntimeProgramBuilder::getStageFunction(ComputeOp op) {
  if (FlatSymbolRefAttr name = op.getFunctionAttr())
    return symbols.lookup<func::FuncOp>(name.getAttr());
  return stageFuncs.lookup({op.getStage(), op.getPhase()});
}

func::FuncOp RuntimeProgramBuilder::getActionFunction(func::FuncOp callee) {
  func::FuncOp &action = actionFuncs[callee];
  if (action)
    return action;
  OpBuilder::InsertionGuard guard(b);
  llvm::SaveAndRestore<Value> savedCtx(ctx);
  llvm::SaveAndRestore<Location> savedLoc(loc, callee.getLoc());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  action = func::FuncOp::create(loc, (callee.getSymName() + "_action").str(),
                                b.getFunctionType({ptr, b.getI32Type()}, {}));
  action.setPrivate();
  symbols.insert(action, std::next(callee->getIterator()));
  b.setInsertionPointToStart(action.addEntryBlock());
  ctx = action.getArgument(0);
  Value mb = action.getArgument(1);
  SmallVector<int32_t> ids, back;
  SmallVector<std::pair<int32_t, int32_t>> accumulations;
  SmallVector<int32_t> losses;
  SmallVector<std::pair<int32_t, int32_t>> stateUpdates;
  for (unsigned i = 0; i < callee.getNumArguments(); ++i) {
    const Buffer &buffer = slotBuffer(callee, i);
    if (!isAcquired(buffer)) {
      ids.push_back(buffer.id);
      back.push_back(getUnitsBack(callee, i));
    }
    if (buffer.slot.kind == SlotKind::ParamGrad)
      accumulations.push_back(
          {gradientSums.find(buffer.slot.index)->second.id, buffer.id});
    if (buffer.slot.kind == SlotKind::Loss)
      losses.push_back(buffer.id);
    // A forward's new state value replaces the state after the call: the
    // function cannot write it in place, as it reads the state too.
    if (buffer.slot.kind == SlotKind::StateUpdate)
      stateUpdates.push_back(
          {buffers.find(keyOf(Slot::state(buffer.slot.index), 0))->second.id,
           buffer.id});
  }
  if (calledElsewhere.contains(callee)) {
    // Its other callers pass memrefs: a lookup per argument, and the
    // params it reads held around the call.
    SmallVector<Value> operands;
    SmallVector<int32_t> acquired;
    for (unsigned i = 0; i < callee.getNumArguments(); ++i) {
      const Buffer &buffer = slotBuffer(callee, i);
      if (isAcquired(buffer)) {
        acquired.push_back(buffer.id);
        operands.push_back(emitBufferView(
            call(fns.paramAcquire, {ctx, i32(buffer.id)}), buffer.type));
        continue;
      }
      int32_t units = getUnitsBack(callee, i);
      Value unit = units ? arith::SubIOp::create(b, loc, mb, i32(units)) : mb;
      operands.push_back(emitBufferView(
          call(fns.buffer, {ctx, i32(buffer.id), unit}), buffer.type));
    }
    func::CallOp::create(b, loc, callee, operands);
    for (int32_t id : acquired)
      call(fns.paramRelease, {ctx, i32(id)});
  } else {
    Value table = emitBufferTable(action, ids, back, mb);
    if (takeBufferTable(callee))
      func::CallOp::create(b, loc, callee, ValueRange{ctx, table});
    else
      func::CallOp::create(b, loc, callee, table);
  }
  for (auto [state, update] : stateUpdates)
    call(fns.updateState, {ctx, i32(state), i32(update), mb});
  for (auto [acc, grad] : accumulations)
    call(fns.accumulate, {ctx, i32(acc), i32(grad), mb});
  for (int32_t loss : losses)
    call(fns.recordLoss, {ctx, i32(loss), mb});
  func::ReturnOp::create(b, loc);
  return action;
}

int32_t RuntimeProgramBuilder::getUnitsBack(func::FuncOp func, unsigned i) {
  Slot slot = func.getArgAttrOfType<SlotAttr>(i, kSlotAttr).getSlot();
  if (!isCarried(slot.kind))
    return 0;
  return getSlice(func) - carrySlices[{static_cast<unsigned>(slot.kind),
                                       slot.stage, slot.index}];
}

Value RuntimeProgramBuilder::emitBufferTable(func::FuncOp action,
                                             ArrayRef<int32_t> ids,
                                             ArrayRef<int32_t> back, Value mb) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  if (ids.empty())
    return LLVM::ZeroOp::create(b, loc, ptr);
  Type i32Type = b.getI32Type();
  int64_t count = ids.size();
  LLVM::GlobalOp global;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(action);
    global = LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(i32Type, count), /*isConstant=*/true,
        LLVM::Linkage::Private, (action.getSymName() + "_buffers").str(),
        DenseElementsAttr::get(RankedTensorType::get({count}, i32Type), ids));
    symbols.insert(global);
  }
  // Carried values live at an earlier unit of the micro-batch.
  LLVM::GlobalOp backGlobal;
  if (llvm::any_of(back, [](int32_t units) { return units != 0; })) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(action);
    backGlobal = LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(i32Type, count), /*isConstant=*/true,
        LLVM::Linkage::Private, (action.getSymName() + "_units_back").str(),
        DenseElementsAttr::get(RankedTensorType::get({count}, i32Type), back));
    symbols.insert(backGlobal);
  }
  Value size = i32(count);
  Value table = LLVM::AllocaOp::create(b, loc, ptr, ptr, size);
  Value idTable = LLVM::AddressOfOp::create(b, loc, global);
  Value backTable =
      backGlobal ? LLVM::AddressOfOp::create(b, loc, backGlobal) : Value();
  auto loop = scf::ForOp::create(b, loc, i32(0), size, i32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value i = loop.getInductionVar();
  Value id = LLVM::LoadOp::create(
      b, loc, i32Type, LLVM::GEPOp::create(b, loc, ptr, i32Type, idTable, i));
  Value unit = mb;
  if (backTable)
    unit = arith::SubIOp::create(
        b, loc, mb,
        LLVM::LoadOp::create(
            b, loc, i32Type,
            LLVM::GEPOp::create(b, loc, ptr, i32Type, backTable, i)));
  LLVM::StoreOp::create(b, loc, call(fns.buffer, {ctx, id, unit}),
                        LLVM::GEPOp::create(b, loc, ptr, ptr, table, i));
  return table;
}

bool RuntimeProgramBuilder::takeBufferTable(func::FuncOp stage) {
  OpBuilder::InsertionGuard guard(b);
  llvm::SaveAndRestore<Location> savedLoc(loc, stage.getLoc());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  unsigned count = stage.getNumArguments();
  // The buffer ids of the params it acquires, -1 for the table's entries.
  SmallVector<int32_t> acquired;
  for (unsigned i = 0; i < count; ++i) {
    const Buffer &buffer = slotBuffer(stage, i);
    acquired.push_back(isAcquired(buffer) ? buffer.id : -1);
  }
  bool takesContext =
      llvm::any_of(acquired, [](int32_t id) { return id >= 0; });
  Region &body = stage.getBody();
  unsigned first = takesContext ? 2 : 1;
  for (unsigned i = 0; i < first; ++i)
    if (failed(stage.insertArgument(0u, ptr, {}, loc)))
      llvm_unreachable("a stage function takes any argument");
  Value table = stage.getArgument(first - 1);
  int32_t entryIndex = 0;
  for (unsigned i = 0; i < count; ++i) {
    BlockArgument argument = stage.getArgument(i + first);
    if (acquired[i] >= 0) {
      acquireAround(stage, argument, stage.getArgument(0), acquired[i]);
      continue;
    }
    int32_t tableIndex = entryIndex++;
    replaceByViews(argument, body, [&] {
      Value entry = LLVM::GEPOp::create(b, loc, ptr, ptr, table,
                                        ArrayRef<LLVM::GEPArg>{tableIndex});
      return LLVM::LoadOp::create(b, loc, ptr, entry).getResult();
    });
  }
  llvm::BitVector erased(count + first, true);
  erased.reset(0, first);
  if (failed(stage.eraseArguments(erased)))
    llvm_unreachable("a stage function's arguments can go");
  return takesContext;
}

/// Whether a value of `type` may refer to memory: a memref, a pointer, or
/// an address as an integer (what convert-gemm-to-runtime passes).
static bool mayAddress(Type type) {
  return isa<BaseMemRefType, LLVM::LLVMPointerType, IndexType, IntegerType>(
      type);
}

/// The ops at the top of `body` that use `value` or what such an op
/// computes from it (a view, a pointer or an address taken from it), which
/// may read the memory `value` refers to.
static SetVector<Operation *> getReaders(Value value, Region &body) {
  SetVector<Operation *> readers;
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen = {value};
  while (!worklist.empty()) {
    Value derived = worklist.pop_back_val();
    for (Operation *user : derived.getUsers()) {
      Operation *holder = body.findAncestorOpInRegion(*user);
      if (!readers.insert(holder))
        continue;
      for (Value result : holder->getResults())
        if (mayAddress(result.getType()) && seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return readers;
}

void RuntimeProgramBuilder::acquireAround(func::FuncOp stage,
                                          BlockArgument param, Value context,
                                          int32_t id) {
  Region &body = stage.getBody();
  SetVector<Operation *> readers = getReaders(param, body);
  if (readers.empty())
    return;
  Value data;
  if (body.hasOneBlock()) {
    auto before = [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    };
    b.setInsertionPoint(*llvm::min_element(readers, before));
    data = call(fns.paramAcquire, {context, i32(id)});
    b.setInsertionPointAfter(*llvm::max_element(readers, before));
    call(fns.paramRelease, {context, i32(id)});
  } else {
    b.setInsertionPointToStart(&body.front());
    data = call(fns.paramAcquire, {context, i32(id)});
    stage.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      call(fns.paramRelease, {context, i32(id)});
    });
  }
  replaceByViews(param, body, [&] { return data; });
}

void RuntimeProgramBuilder::replaceByViews(BlockArgument argument, Region &body,
                                           function_ref<Value()> emitData) {
  auto type = cast<MemRefType>(argument.getType());
  DenseMap<Operation *, Value> views; // by the op of the body holding a use
  for (OpOperand &use : llvm::make_early_inc_range(argument.getUses())) {
    Operation *holder = body.findAncestorOpInRegion(*use.getOwner());
    Value &view = views[holder];
    if (!view) {
      b.setInsertionPoint(holder);
      view = emitBufferView(emitData(), type);
    }
    use.set(view);
  }
}

void RuntimeProgramBuilder::emitCompute(ComputeOp op) {
  func::FuncOp action = getActionFunction(getStageFunction(op));
  Value mb = i32(op.getMb());
  // The profiler times the whole action as the schedule runs it: buffer
  // lookups (which load a micro-batch's data), the call, the gradient sums.
  call(fns.actionBegin,
       {ctx, i32(static_cast<int>(op.getPhase())), i32(op.getStage()), mb});
  func::CallOp::create(b, loc, action, ValueRange{ctx, mb});
  call(fns.actionEnd, {ctx});
}

/// One send or receive per activation (or gradient) slot crossing the edge.
void RuntimeProgramBuilder::emitTransfer(bool isSend, TransferKind kind,
                                         int64_t stage, int64_t mb,
                                         int64_t peer) {
  // Activations are named by the stage that produces them, gradients by the
  // stage whose output they differentiate: the receiver.
  bool activation = kind == TransferKind::activation;
  int64_t other = sched::getNeighbourStage(kind, isSend, stage);
  int64_t receiver = isSend ? other : stage;
  int64_t named = activation ? (isSend ? stage : other) : receiver;
  SlotKind carried = activation ? SlotKind::Activation : SlotKind::Gradient;
  auto variant = microbatchVariants.find(mb);
  int64_t shape = variant == microbatchVariants.end() ? 0 : variant->second;
  for (auto &[name, buffer] : buffers) {
    if (buffer.slot.kind != carried || buffer.slot.stage != named ||
        buffer.variant != shape)
      continue;
    call(isSend ? fns.send : fns.recv,
         {ctx, i32(buffer.id), i32(mb), i32(peer), i32(receiver),
          i32(activation ? PPRT_ACTIVATION : PPRT_GRADIENT)});
  }
}

/// Whether `op` is a transfer posted with the one before it.
static bool isGrouped(Operation *op) {
  if (auto send = dyn_cast<SendOp>(op))
    return send.getGrouped();
  if (auto recv = dyn_cast<RecvOp>(op))
    return recv.getGrouped();
  return false;
}

void RuntimeProgramBuilder::emitRankStep(RankOp rank, StringRef prefix) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      b, rank.getLoc(), (prefix + "_rank" + Twine(rank.getRank())).str(),
      b.getFunctionType({ptr}, {}));
  func.setPrivate();
  b.setInsertionPointToStart(func.addEntryBlock());
  ctx = func.getArgument(0);
  for (Operation &action : rank.getBody().front())
    emitGuardedAction(action);
  func::ReturnOp::create(b, loc);
}

void RuntimeProgramBuilder::emitGuardedAction(Operation &action) {
  loc = action.getLoc();
  // A transfer followed by `grouped` ones is an exchange group. Its
  // brackets run in every step, its members in their own steps.
  bool grouped = isGrouped(&action),
       nextGrouped = action.getNextNode() && isGrouped(action.getNextNode());
  if (!grouped && nextGrouped)
    call(fns.groupBegin, {ctx});
  emitInSteps(action);
  if (grouped && !nextGrouped)
    call(fns.groupEnd, {ctx});
}

void RuntimeProgramBuilder::emitInSteps(Operation &action) {
  StepPart part = getStepPart(&action);
  if (part == StepPart::every)
    return emitAction(action);
  // first_step: pprt_step_is_first != 0; next_step: pprt_step_is_last == 0.
  bool first = part == StepPart::firstOnly;
  Value flag = call(first ? fns.stepIsFirst : fns.stepIsLast, {ctx});
  Value runs = arith::CmpIOp::create(
      b, loc, first ? arith::CmpIPredicate::ne : arith::CmpIPredicate::eq, flag,
      i32(0));
  auto guard = scf::IfOp::create(b, loc, runs, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToStart(guard.thenBlock());
  if (!first)
    call(fns.setStepOffset, {ctx, i32(1)});
  emitAction(action);
  if (!first)
    call(fns.setStepOffset, {ctx, i32(0)});
}

void RuntimeProgramBuilder::emitAction(Operation &action) {
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
        call(fns.allReduce, {ctx, i32(op.getStage())});
      })
      .Case<ReduceScatterOp>([&](ReduceScatterOp op) {
        call(fns.reduceScatter, {ctx, i32(op.getStage())});
      })
      .Case<AllGatherOp>([&](AllGatherOp op) {
        // Gathered per param, the stage functions gather the weights.
        if (!gathersPerParam(op.getStage()))
          call(fns.allGather, {ctx, i32(op.getStage())});
      })
      .Case<OptimizerStepOp>([&](OptimizerStepOp op) {
        call(fns.optimizerStep, {ctx, i32(op.getStage())});
      });
}

void RuntimeProgramBuilder::emitRankDispatch(func::FuncOp func,
                                             StringRef prefix,
                                             int64_t numRanks) {
  Value rank =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), func.getArgument(1));
  auto cases = llvm::to_vector(llvm::seq<int64_t>(0, numRanks));
  auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange(), rank, cases,
                                             cases.size());
  for (int64_t r = 0; r < numRanks; ++r) {
    b.setInsertionPointToStart(&dispatch.getCaseRegions()[r].emplaceBlock());
    func::CallOp::create(b, loc, (prefix + "_rank" + Twine(r)).str(),
                         TypeRange(), ValueRange{func.getArgument(0)});
    scf::YieldOp::create(b, loc);
  }
  b.setInsertionPointToStart(&dispatch.getDefaultRegion().emplaceBlock());
  scf::YieldOp::create(b, loc);
  b.setInsertionPointAfter(dispatch);
}

/// `pp_run_step(ctx, rank)`: the rank's step, of the step's plan where the
/// program has several (pprt_step_plan).
void RuntimeProgramBuilder::emitRunStep(int64_t numRanks) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      b, loc, "pp_run_step", b.getFunctionType({ptr, b.getI32Type()}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  if (!isPlanned()) {
    emitRankDispatch(func, "pp_run_step", numRanks);
    func::ReturnOp::create(b, loc);
    return;
  }
  Value plan = arith::IndexCastOp::create(
      b, loc, b.getIndexType(), call(fns.stepPlan, {func.getArgument(0)}));
  auto cases = llvm::to_vector(llvm::seq<int64_t>(0, schedules.size()));
  auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange(), plan, cases,
                                             cases.size());
  for (int64_t k : cases) {
    b.setInsertionPointToStart(&dispatch.getCaseRegions()[k].emplaceBlock());
    emitRankDispatch(func, ("pp_run_step_plan" + Twine(k)).str(), numRanks);
    scf::YieldOp::create(b, loc);
  }
  b.setInsertionPointToStart(&dispatch.getDefaultRegion().emplaceBlock());
  scf::YieldOp::create(b, loc);
  b.setInsertionPointAfter(dispatch);
  func::ReturnOp::create(b, loc);
}

/// Checks that `schedule` names a function for each action and updates
/// every stage, and collects its micro-batch variants.
LogicalResult RuntimeProgramBuilder::checkSchedule() {
  microbatchVariants.clear();
  WalkResult missing = schedule.walk([&](ComputeOp op) {
    if (getStageFunction(op))
      return WalkResult::advance();
    op.emitOpError("has no stage function for stage ")
        << op.getStage() << " phase " << stringifyPhase(op.getPhase());
    return WalkResult::interrupt();
  });
  if (missing.wasInterrupted() || failed(collectMicrobatchVariants()))
    return failure();
  // Without an optimizer step a stage would train nothing.
  DenseSet<int64_t> updated;
  schedule.walk([&](OptimizerStepOp op) { updated.insert(op.getStage()); });
  for (int64_t stage = 0; stage < schedule.getNumStages(); ++stage)
    if (!updated.contains(stage))
      return schedule.emitOpError("has no optimizer step for stage ")
             << stage << "; run pp-insert-transfers to add them";
  return success();
}

LogicalResult RuntimeProgramBuilder::build() {
  if (failed(collectBuffers()))
    return failure();
  module.walk([&](CallOpInterface call) {
    auto name = dyn_cast<SymbolRefAttr>(call.getCallableForCallee());
    Operation *callee =
        name ? symbols.lookup(name.getRootReference()) : nullptr;
    if (callee && callee->hasAttr(kStageAttr))
      calledElsewhere.insert(callee);
  });
  for (ScheduleOp plan : schedules) {
    schedule = plan;
    if (failed(checkSchedule()))
      return failure();
    planVariants.push_back(std::move(microbatchVariants));
  }
  schedule = schedules.front();
  emitDefineProgram();
  for (auto [k, plan] : llvm::enumerate(schedules)) {
    schedule = plan;
    microbatchVariants = planVariants[k];
    std::string prefix = !isPlanned() ? std::string("pp_run_step")
                                      : ("pp_run_step_plan" + Twine(k)).str();
    for (RankOp rank : plan.getBody().getOps<RankOp>())
      emitRankStep(rank, prefix);
  }
  emitRunStep(schedule.getNumRanks());
  return success();
}

/// The module's schedule, or its step plans' in plan order: each tagged
/// `pp.step_plan` with its index, and the module with their step table.
static FailureOr<SmallVector<ScheduleOp>> getSchedules(ModuleOp module) {
  SmallVector<ScheduleOp> schedules(module.getOps<ScheduleOp>());
  if (schedules.empty())
    return module.emitError("convert-pp-to-runtime needs exactly one "
                            "pp.schedule, or one per step plan, found 0");
  if (schedules.size() == 1 && !schedules.front()->hasAttr(kStepPlanAttr) &&
      !module->hasAttr(kStepPlansAttr))
    return schedules;
  SmallVector<ScheduleOp> plans(schedules.size());
  for (ScheduleOp schedule : schedules) {
    auto index = schedule->getAttrOfType<IntegerAttr>(kStepPlanAttr);
    if (!index || index.getInt() >= int64_t(plans.size()) ||
        plans[index.getInt()])
      return schedule.emitOpError("is one of ")
             << schedules.size()
             << " schedules; each must be a step plan with its own index in "
                "[0, "
             << schedules.size() << ") ('" << kStepPlanAttr << "')";
    plans[index.getInt()] = schedule;
    if (schedule.getNumRanks() != schedules.front().getNumRanks() ||
        schedule.getNumStages() != schedules.front().getNumStages())
      return schedule.emitOpError("runs ")
             << schedule.getNumStages() << " stages on "
             << schedule.getNumRanks()
             << " ranks; every step plan must run the same";
  }
  if (!module->hasAttr(kStepPlansAttr))
    return module.emitError("the module has step plans but no '")
           << kStepPlansAttr << "' table to choose them by";
  return plans;
}

/// Whether the stage functions of `module` compute the slices `schedule`
/// runs: one set per slice, or whole micro-batches without slices.
static LogicalResult checkSlicedFunctions(ModuleOp module,
                                          ScheduleOp schedule) {
  int64_t slices = schedule.getNumSlices(), cut = 1;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kStageAttr))
      cut = std::max(cut, getSlice(func) + 1);
  if (cut == slices)
    return success();
  if (cut == 1)
    return schedule.emitOpError("runs ")
           << slices
           << " sequence slices per micro-batch, but its stage functions "
              "compute whole micro-batches; cut the step with "
              "pp-split-sequence before pp-partition-stages and "
              "pp-split-slice-stages after it";
  return schedule.emitOpError("runs ")
         << slices << " sequence slices per micro-batch, but its stage "
         << "functions compute " << cut;
}

namespace {
struct ConvertPPToRuntimePass
    : pp::impl::ConvertPPToRuntimeBase<ConvertPPToRuntimePass> {
  using ConvertPPToRuntimeBase::ConvertPPToRuntimeBase;
  /// The schedule's memory and time were counted for its units of
  /// gathering: the lowering gathers per param where some stage does.
  LogicalResult checkZeroGather(ScheduleOp schedule) {
    ZeroGather unit =
        schedule.hasParamGathers() ? ZeroGather::Param : ZeroGather::Stage;
    if (unit == zeroGather)
      return success();
    return schedule.emitOpError("gathers ZeRO-3's weights per ")
           << stringifyZeroGather(unit)
           << " (zero_gather), but the lowering was asked for zero-gather="
           << stringifyZeroGather(zeroGather)
           << "; give pp-insert-transfers and convert-pp-to-runtime the "
              "same zero-gather";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<SmallVector<ScheduleOp>> schedules = getSchedules(module);
    if (failed(schedules))
      return signalPassFailure();
    // Slices run as their own actions only with stage functions cut into
    // slices (pp-split-sequence, then pp-split-slice-stages).
    for (ScheduleOp schedule : *schedules)
      if (failed(checkSlicedFunctions(module, schedule)))
        return signalPassFailure();
    SymbolTable symbols(module);
    bool gatherParams = zeroGather == ZeroGather::Param;
    for (ScheduleOp schedule : *schedules)
      if (failed(checkZeroGather(schedule)))
        return signalPassFailure();
    if (failed(RuntimeProgramBuilder(module, *schedules, symbols, gatherParams)
                   .build()))
      return signalPassFailure();
    for (ScheduleOp schedule : *schedules)
      symbols.erase(schedule);
    // The stage functions' random seeds come from the runtime, which knows
    // the step, replica and micro-batch of the action that calls them.
    RuntimeFunctions functions(&getContext());
    module.walk([&](RandomSeedOp op) {
      OpBuilder builder(op);
      Value id = arith::ConstantOp::create(
          builder, op.getLoc(), builder.getI64IntegerAttr(op.getId()));
      op.replaceAllUsesWith(
          functions.randomSeed.create(builder, op.getLoc(), symbols, id)
              .getResult(0));
      op.erase();
    });
  }
};
} // namespace
