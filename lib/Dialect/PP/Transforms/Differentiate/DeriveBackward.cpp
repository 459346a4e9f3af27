//===- DeriveBackward.cpp - reverse-mode differentiation of stages --------===//
//
// Differentiates every pp.stage of a training step and outlines it into its
// forward, input-gradient (B), weight-gradient (W) and fused backward
// functions, each argument and result tagged with the runtime slot it uses;
// the backward of a `recompute` stage re-runs its forward from the inputs.
// A stage's new state values (`pp.state` results of the step) are results
// of its forward only, so that recomputation never updates them twice.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/TrainingStep.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/Slot.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"
#include "pp/Dialect/PP/Transforms/Differentiate/Adjoints.h"
#include "pp/Dialect/PP/Transforms/Differentiate/Passes.h"
#include "pp/Dialect/PP/Transforms/Differentiate/SoftmaxShift.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPDERIVEBACKWARD
#include "pp/Dialect/PP/Transforms/Differentiate/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// Clones `op` at the builder; an aggregate such as linalg.softmax becomes
/// the linalg ops it stands for, which the gradient rules cover. Returns
/// the new ops.
static SmallVector<Operation *>
cloneDecomposed(OpBuilder &builder, Operation &op, IRMapping &mapping) {
  Operation *clone = builder.clone(op, mapping);
  auto aggregate = dyn_cast<linalg::AggregatedOpInterface>(clone);
  if (!aggregate)
    return {clone};
  Block *block = clone->getBlock();
  Operation *before = clone->getPrevNode();
  builder.setInsertionPoint(clone);
  FailureOr<SmallVector<Value>> values = aggregate.decomposeOperation(builder);
  builder.setInsertionPointToEnd(block);
  if (failed(values))
    return {clone};
  mapping.map(op.getResults(), *values);
  clone->erase();
  auto first = before ? std::next(before->getIterator()) : block->begin();
  return llvm::map_to_vector(llvm::make_range(first, block->end()),
                             [](Operation &o) { return &o; });
}

namespace {

/// The numbers of the values sequence slices of a stage carry to its later
/// slices (`#pp.slot<carry>`) and of their gradients, one per reading slice
/// (`#pp.slot<carry_grad>`), each counted per stage in program order.
struct CarryNumbers {
  DenseMap<Value, int64_t> values;      // by stage result
  DenseMap<OpOperand *, int64_t> reads; // by the later slice's input
};

/// Whether `user` is another slice of `stage`'s stage.
static bool isSameStage(StageOp stage, Operation *user) {
  auto other = dyn_cast<StageOp>(user);
  return other && other != stage && other.getStage() == stage.getStage();
}

/// Differentiates one stage and outlines its phases as functions.
class StageDifferentiator {
public:
  /// `stateArgs`: for each stage result, the state argument it updates
  /// (-1 for a value of the pipeline).
  StageDifferentiator(StageOp stage, func::FuncOp step, bool isLast,
                      ArrayRef<int64_t> stateArgs, const CarryNumbers &carry)
      : stage(stage), step(step), isLast(isLast), stateArgs(stateArgs),
        carry(carry), recompute(stage.getRecompute()),
        prefix((step.getSymName() + "_s" + Twine(stage.getStage())).str()) {
    if (auto mark = stage->getAttrOfType<IntegerAttr>(kSliceAttr)) {
      slice = mark;
      prefix += "_slice" + std::to_string(mark.getInt());
    }
  }

  LogicalResult run();

private:
  Slot operandSlot(Value operand);
  void buildJoint();
  LogicalResult differentiate();
  DenseSet<std::pair<Operation *, Value>> softmaxShifts();
  void accumulate(OpBuilder &builder, Value value, Value grad);
  /// The slots the forward writes output `i` to: for later stages or the
  /// loss, and for the stage's later slices.
  SmallVector<Slot> outputSlots(unsigned i);
  /// The slots of the gradients of output `i` the backward reads.
  SmallVector<Slot> outputGradSlots(unsigned i);
  SmallVector<Operation *> sliceOf(ArrayRef<Value> roots,
                                   const DenseSet<Operation *> &exclude);
  bool isRecreated(Value value, bool forwardToo);
  func::FuncOp outline(StringRef phaseName, Phase phase,
                       ArrayRef<Operation *> ops, ArrayRef<Value> results,
                       ArrayRef<Slot> resultSlots, bool forwardToo = false);
  Slot slotOf(Value value);
  SmallVector<Value> valuesReadBy(Operation *op);
  /// The gradients the backward returns, with their slots.
  struct Gradients {
    SmallVector<Value> input, weight; // activations and carries; weights
    SmallVector<Slot> inputSlots, weightSlots;
  };
  Gradients collectGradients(OpBuilder &builder);
  SmallVector<Value> nameValuesFrom(ArrayRef<Operation *> ops,
                                    const DenseSet<Operation *> &from,
                                    SlotKind kind);
  /// Calls `set` with the `pp.split` of weight `arg` of the step, if any.
  void copySplit(int64_t arg, function_ref<void(Attribute)> set) {
    if (Attribute split = step.getArgAttr(arg, kSplitAttr))
      set(split);
  }

  StageOp stage;
  func::FuncOp step;
  bool isLast;
  ArrayRef<int64_t> stateArgs;
  const CarryNumbers &carry;
  IntegerAttr slice; // the sequence slice the stage computes, if sliced
  bool recompute;    // the backward re-runs the forward from the stage inputs
  std::string prefix;
  int64_t id() { return stage.getStage(); }

  func::FuncOp joint;
  SmallVector<Slot> argSlots; // slot of each joint argument
  DenseSet<Value> active;     // values that depend on a weight or activation
  SmallVector<Operation *> forwardOps;
  DenseSet<Operation *> forwardSet;
  SmallVector<Value> outputs;     // the values later stages (or the loss) read
  SmallVector<unsigned> outputOf; // the stage result of each gradient arg
  SmallVector<int64_t> outputIndex; // the output of each stage result, or -1
  SmallVector<Value> stateUpdates;  // new state values, one per `stateArgs`
  SmallVector<Slot> stateSlots;
  DenseMap<Value, Value> adjoint;
  DenseMap<Value, Slot> namedSlots; // saved and stashed values
};

} // namespace

Slot StageDifferentiator::operandSlot(Value operand) {
  if (auto arg = dyn_cast<BlockArgument>(operand)) {
    unsigned index = arg.getArgNumber();
    if (isParameter(step, index))
      return Slot::param(index);
    if (isState(step, index))
      return Slot::state(index);
    return step.getArgAttr(index, kTargetAttr) ? Slot::target(index)
                                               : Slot::data(index);
  }
  auto result = cast<OpResult>(operand);
  auto producer = cast<StageOp>(result.getOwner());
  if (isSameStage(stage, producer))
    return Slot::carry(id(), carry.values.lookup(result));
  return Slot::activation(producer.getStage(), result.getResultNumber());
}

SmallVector<Slot> StageDifferentiator::outputSlots(unsigned i) {
  if (!slice)
    return {isLast ? Slot{SlotKind::Loss}
                   : Slot::activation(id(), outputIndex[i])};
  Value result = stage.getResult(i);
  SmallVector<Slot> slots;
  auto users = result.getUsers();
  if (llvm::any_of(users, [](Operation *u) { return isa<func::ReturnOp>(u); }))
    slots.push_back(Slot{SlotKind::Loss});
  if (llvm::any_of(users, [&](Operation *u) {
        return isa<StageOp>(u) && !isSameStage(stage, u);
      }))
    slots.push_back(Slot::activation(id(), i));
  if (carry.values.count(result))
    slots.push_back(Slot::carry(id(), carry.values.lookup(result)));
  return slots;
}

SmallVector<Slot> StageDifferentiator::outputGradSlots(unsigned i) {
  if (!slice)
    return {isLast ? Slot{SlotKind::LossGrad} : Slot::gradient(id(), i)};
  SmallVector<Slot> slots;
  for (Slot slot : outputSlots(i)) {
    if (slot.kind == SlotKind::Loss)
      slots.push_back(Slot{SlotKind::LossGrad});
    if (slot.kind == SlotKind::Activation)
      slots.push_back(Slot::gradient(id(), i));
  }
  for (OpOperand &use : stage.getResult(i).getUses())
    if (isSameStage(stage, use.getOwner()))
      slots.push_back(Slot::carryGrad(id(), carry.reads.lookup(&use)));
  return slots;
}

/// Clones the stage into a function over (stage inputs, output gradients).
void StageDifferentiator::buildJoint() {
  OpBuilder builder(step);
  SmallVector<Type> types(stage.getInputs().getTypes());
  SmallVector<Slot> gradSlots;
  for (auto [i, result, arg] : llvm::enumerate(stage.getResults(), stateArgs)) {
    if (arg >= 0)
      continue;
    for (Slot slot : outputGradSlots(i)) {
      types.push_back(result.getType());
      gradSlots.push_back(slot);
      outputOf.push_back(i);
    }
  }
  joint = func::FuncOp::create(builder, stage.getLoc(), prefix + "_joint",
                               builder.getFunctionType(types, {}));
  Block *entry = joint.addEntryBlock();
  for (Value operand : stage.getInputs())
    argSlots.push_back(operandSlot(operand));
  llvm::append_range(argSlots, gradSlots);
  IRMapping mapping;
  Block &body = stage.getBody().front();
  for (auto [arg, slot, local] :
       llvm::zip(body.getArguments(), argSlots, entry->getArguments())) {
    mapping.map(arg, local);
    // A mask or index from the previous stage carries no gradient.
    if ((slot.kind == SlotKind::Activation || slot.kind == SlotKind::Param ||
         slot.kind == SlotKind::Carry) &&
        isDifferentiableTensor(local.getType()))
      active.insert(local);
  }
  builder.setInsertionPointToStart(entry);
  for (Operation &op : body.without_terminator()) {
    for (Operation *forward : cloneDecomposed(builder, op, mapping)) {
      forwardOps.push_back(forward);
      forwardSet.insert(forward);
      // Float values carry gradients; masks and indices do not. A float
      // that no rule can carry one to (an extracted scalar) stays active,
      // so that its use is diagnosed instead of its gradient dropped.
      if (llvm::any_of(forward->getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value result : forward->getResults())
          if (isa<FloatType>(getElementTypeOrSelf(result.getType())))
            active.insert(result);
    }
  }
  for (auto [value, arg] :
       llvm::zip(body.getTerminator()->getOperands(), stateArgs)) {
    if (arg < 0) {
      outputs.push_back(mapping.lookup(value));
      outputIndex.push_back(outputs.size() - 1);
      continue;
    }
    outputIndex.push_back(-1);
    stateUpdates.push_back(mapping.lookup(value));
    stateSlots.push_back(Slot::stateUpdate(arg));
  }
}

void StageDifferentiator::accumulate(OpBuilder &builder, Value value,
                                     Value grad) {
  auto [it, inserted] = adjoint.try_emplace(value, grad);
  if (inserted)
    return;
  auto type = cast<RankedTensorType>(grad.getType());
  Value empty = tensor::EmptyOp::create(builder, grad.getLoc(), type.getShape(),
                                        type.getElementType());
  it->second = linalg::AddOp::create(builder, grad.getLoc(), type,
                                     ValueRange{it->second, grad}, empty)
                   .getResult(0);
}

/// The operands (op, max) that the forward's stable softmaxes subtract,
/// whose gradient is zero exactly (SoftmaxShift.h).
DenseSet<std::pair<Operation *, Value>> StageDifferentiator::softmaxShifts() {
  DenseSet<Value> escaping(outputs.begin(), outputs.end());
  escaping.insert(stateUpdates.begin(), stateUpdates.end());
  auto escapes = [&](Value value) { return escaping.contains(value); };
  DenseSet<std::pair<Operation *, Value>> shifts;
  for (Operation *op : forwardOps)
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      for (OpOperand &operand : op->getOpOperands())
        if (isSoftmaxShift(linalgOp, operand, escapes))
          shifts.insert({op, operand.get()});
  return shifts;
}

LogicalResult StageDifferentiator::differentiate() {
  // Found before the backward adds uses to the forward's values.
  DenseSet<std::pair<Operation *, Value>> shifts = softmaxShifts();
  Block *entry = &joint.front();
  OpBuilder builder = OpBuilder::atBlockEnd(entry);
  unsigned numInputs = stage.getInputs().size();
  for (auto [i, result] : llvm::enumerate(outputOf)) {
    Value output = outputs[outputIndex[result]];
    if (active.contains(output))
      accumulate(builder, output, entry->getArgument(numInputs + i));
  }
  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads = llvm::map_to_vector(
        op->getResults(), [&](Value v) { return adjoint.lookup(v); });
    if (llvm::none_of(resultGrads, [](Value v) { return bool(v); }))
      continue;
    if (failed(buildAdjoint(
            builder, op, resultGrads,
            [&](Value v) {
              return active.contains(v) && !shifts.contains({op, v});
            },
            [&](Value v, Value grad) { accumulate(builder, v, grad); }, id())))
      return failure();
  }
  return success();
}

/// The ops of the joint function (outside the forward) that `roots` need.
SmallVector<Operation *>
StageDifferentiator::sliceOf(ArrayRef<Value> roots,
                             const DenseSet<Operation *> &exclude) {
  DenseSet<Operation *> seen;
  SmallVector<Value> worklist(roots);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || forwardSet.contains(op) || exclude.contains(op) ||
        !seen.insert(op).second)
      continue;
    llvm::append_range(worklist, op->getOperands());
  }
  SmallVector<Operation *> ops;
  for (Operation &op : joint.front())
    if (seen.contains(&op))
      ops.push_back(&op);
  return ops;
}

Slot StageDifferentiator::slotOf(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return argSlots[arg.getArgNumber()];
  return namedSlots.lookup(value);
}

/// The values of the joint function that `op` reads, in its regions too.
SmallVector<Value> StageDifferentiator::valuesReadBy(Operation *op) {
  SmallVector<Value> values;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (operand.getParentBlock() == &joint.front())
        values.push_back(operand);
  });
  return values;
}

/// Whether a phase function re-computes `value` from what it reads instead
/// of receiving it: cheap values, and values the runtime cannot store
/// (masks, indices, scalars).
static bool isRecomputed(Value value) {
  Operation *def = value.getDefiningOp();
  return def &&
         (isCheapToRecreate(def) || !isDifferentiableTensor(value.getType()));
}

/// Whether a phase function re-creates `value` from what it reads: values
/// re-computed anyway and, with `forwardToo`, every forward value.
bool StageDifferentiator::isRecreated(Value value, bool forwardToo) {
  if (isRecomputed(value))
    return true;
  Operation *def = value.getDefiningOp();
  return forwardToo && def && forwardSet.contains(def);
}

/// Creates `<prefix>_<phase>` computing `results` with `ops`; values from
/// outside become arguments unless they are re-created (`forwardToo`: the
/// forward values too, from the stage inputs).
func::FuncOp StageDifferentiator::outline(StringRef phaseName, Phase phase,
                                          ArrayRef<Operation *> ops,
                                          ArrayRef<Value> results,
                                          ArrayRef<Slot> resultSlots,
                                          bool forwardToo) {
  DenseSet<Operation *> inside(ops.begin(), ops.end());
  llvm::SetVector<Value> arguments;
  std::function<void(Value)> collect = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (def && inside.contains(def))
      return;
    if (isRecreated(value, forwardToo))
      llvm::for_each(valuesReadBy(def), collect);
    else
      arguments.insert(value);
  };
  for (Operation *op : ops)
    llvm::for_each(valuesReadBy(op), collect);
  for (Value result : results)
    collect(result);

  OpBuilder builder(step);
  auto func = func::FuncOp::create(
      builder, stage.getLoc(), (prefix + "_" + phaseName).str(),
      builder.getFunctionType(ValueRange(arguments.getArrayRef()).getTypes(),
                              ValueRange(results).getTypes()));
  Block *entry = func.addEntryBlock();
  IRMapping mapping;
  for (auto [i, value] : llvm::enumerate(arguments)) {
    mapping.map(value, entry->getArgument(i));
    Slot slot = slotOf(value);
    func.setArgAttr(i, kSlotAttr, SlotAttr::get(builder.getContext(), slot));
    // The runtime learns the tables a data argument's ids index, and what
    // a packed-training input holds, from here.
    bool isData = slot.kind == SlotKind::Data || slot.kind == SlotKind::Target;
    for (StringRef name : {kIdBoundAttr, kIdIgnoredAttr, kPackedInputAttr})
      if (Attribute mark =
              isData ? step.getArgAttr(slot.index, name) : Attribute())
        func.setArgAttr(i, name, mark);
    if (slot.kind == SlotKind::Param)
      copySplit(slot.index, [&](Attribute split) {
        func.setArgAttr(i, kSplitAttr, split);
      });
  }
  builder.setInsertionPointToStart(entry);
  std::function<void(Value)> recreate = [&](Value value) {
    if (mapping.contains(value))
      return;
    Operation *def = value.getDefiningOp();
    llvm::for_each(valuesReadBy(def), recreate);
    builder.clone(*def, mapping);
  };
  for (Operation *op : ops) {
    llvm::for_each(valuesReadBy(op), recreate);
    builder.clone(*op, mapping);
  }
  llvm::for_each(results, recreate);
  func::ReturnOp::create(
      builder, stage.getLoc(),
      llvm::map_to_vector(results, [&](Value v) { return mapping.lookup(v); }));
  for (auto [i, slot] : llvm::enumerate(resultSlots)) {
    func.setResultAttr(i, kSlotAttr, SlotAttr::get(builder.getContext(), slot));
    // A weight's gradient is split like the weight.
    if (slot.kind == SlotKind::ParamGrad)
      copySplit(slot.index, [&](Attribute split) {
        func.setResultAttr(i, kSplitAttr, split);
      });
  }
  func->setAttr(kStageAttr, builder.getI64IntegerAttr(id()));
  if (slice)
    func->setAttr(kSliceAttr, slice);
  if (Attribute microbatches = step->getAttr(kMicrobatchesAttr))
    func->setAttr(kMicrobatchesAttr, microbatches);
  func->setAttr(kPhaseAttr, PhaseAttr::get(builder.getContext(), phase));
  if (recompute)
    func->setAttr(kRecomputeAttr, builder.getUnitAttr());
  return func;
}

/// Gradients of activations and carries (B's results) and of weights (W's
/// results); zeros for an input the loss does not depend on.
StageDifferentiator::Gradients
StageDifferentiator::collectGradients(OpBuilder &builder) {
  Gradients grads;
  for (auto [i, operand] : llvm::enumerate(stage.getInputs())) {
    Slot slot = argSlots[i];
    Value arg = joint.getArgument(i);
    bool isStageValue =
        slot.kind == SlotKind::Activation || slot.kind == SlotKind::Carry;
    if ((!isStageValue && slot.kind != SlotKind::Param) ||
        (isStageValue && !active.contains(arg)))
      continue;
    Value grad = adjoint.lookup(arg);
    if (!grad)
      grad = createZeros(builder, stage.getLoc(), arg.getType());
    if (slot.kind == SlotKind::Activation) {
      grads.input.push_back(grad);
      grads.inputSlots.push_back(Slot::gradient(slot.stage, slot.index));
    } else if (slot.kind == SlotKind::Carry) {
      grads.input.push_back(grad);
      grads.inputSlots.push_back(
          Slot::carryGrad(id(), carry.reads.lookup(&stage->getOpOperand(i))));
    } else {
      grads.weight.push_back(grad);
      grads.weightSlots.push_back(Slot::paramGrad(slot.index));
    }
  }
  return grads;
}

/// The values `ops` read that ops in `from` compute, each named by a slot
/// of `kind`; recomputed values are followed to what they read.
SmallVector<Value>
StageDifferentiator::nameValuesFrom(ArrayRef<Operation *> ops,
                                    const DenseSet<Operation *> &from,
                                    SlotKind kind) {
  SmallVector<Value> values;
  DenseSet<Value> seen;
  std::function<void(Value)> visit = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def || !from.contains(def) || !seen.insert(value).second ||
        namedSlots.count(value))
      return;
    if (isRecomputed(value)) {
      llvm::for_each(valuesReadBy(def), visit);
      return;
    }
    namedSlots[value] = Slot{kind, id(), int64_t(values.size())};
    values.push_back(value);
  };
  for (Operation *op : ops)
    llvm::for_each(valuesReadBy(op), visit);
  return values;
}

LogicalResult StageDifferentiator::run() {
  buildJoint();
  if (failed(differentiate())) {
    joint.erase();
    return failure();
  }
  OpBuilder builder = OpBuilder::atBlockEnd(&joint.front());
  Gradients grads = collectGradients(builder);
  SmallVector<Value> allGrads =
      llvm::to_vector(llvm::concat<Value>(grads.input, grads.weight));
  SmallVector<Operation *> inputOps = sliceOf(grads.input, {});
  DenseSet<Operation *> inputSet(inputOps.begin(), inputOps.end());
  SmallVector<Operation *> weightOps = sliceOf(grads.weight, inputSet);
  SmallVector<Operation *> backwardOps = sliceOf(allGrads, {});

  // Values the backward reads from the forward are saved by it; values W
  // reads from B are stashed by B. A recomputed stage saves nothing: B
  // re-runs the forward and stashes what W reads of it too.
  DenseSet<Operation *> stashedFrom = inputSet;
  if (recompute)
    stashedFrom.insert(forwardSet.begin(), forwardSet.end());
  SmallVector<Value> saved;
  if (!recompute)
    saved = nameValuesFrom(backwardOps, forwardSet, SlotKind::Saved);
  SmallVector<Value> stashed =
      nameValuesFrom(weightOps, stashedFrom, SlotKind::Stash);

  SmallVector<Value> forwardResults;
  SmallVector<Slot> forwardSlots;
  for (auto [i, output] : llvm::enumerate(outputIndex)) {
    if (output < 0)
      continue;
    for (Slot slot : outputSlots(i)) {
      forwardResults.push_back(outputs[output]);
      forwardSlots.push_back(slot);
    }
  }
  for (Value value : saved) {
    forwardResults.push_back(value);
    forwardSlots.push_back(namedSlots.lookup(value));
  }
  llvm::append_range(forwardResults, stateUpdates);
  llvm::append_range(forwardSlots, stateSlots);
  SmallVector<Value> inputResults(grads.input);
  SmallVector<Slot> inputSlots(grads.inputSlots);
  for (Value value : stashed) {
    inputResults.push_back(value);
    inputSlots.push_back(namedSlots.lookup(value));
  }
  outline("forward", Phase::forward, forwardOps, forwardResults, forwardSlots);
  outline("backward_input", Phase::backward_input, inputOps, inputResults,
          inputSlots, recompute);
  outline("backward_weight", Phase::backward_weight, weightOps, grads.weight,
          grads.weightSlots);
  outline(
      "backward", Phase::backward, backwardOps, allGrads,
      llvm::to_vector(llvm::concat<Slot>(grads.inputSlots, grads.weightSlots)),
      recompute);
  joint.erase();
  return success();
}

/// Whether `value` is a data or target argument of the step, a static
/// tensor the runtime fills (i64 token ids or class indices need no
/// gradient, so they need not be f32).
static bool isRuntimeData(StageOp stage, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  auto type = dyn_cast<RankedTensorType>(value.getType());
  auto step = stage->getParentOfType<func::FuncOp>();
  return arg && type && type.hasStaticShape() && step &&
         arg.getOwner() == &step.front() &&
         !isParameter(step, arg.getArgNumber());
}

static constexpr const char *kStageValueTypes =
    "; stages exchange static tensors of f32, i1, i32 or i64 only";

/// Whether the runtime can move `type` between stages: a static tensor of
/// f32 (which carries a gradient back) or of i1, i32 or i64 (a mask or ids,
/// which carry none). f16 and bf16 would need gradients in their own type.
static bool isStageValue(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return false;
  Type element = tensor.getElementType();
  return element.isF32() || element.isSignlessInteger(1) ||
         element.isSignlessInteger(32) || element.isSignlessInteger(64);
}

/// The sequence slice `stage` computes, or -1.
static int64_t getSlice(StageOp stage) {
  auto mark = stage->getAttrOfType<IntegerAttr>(kSliceAttr);
  return mark ? mark.getInt() : -1;
}

/// The runtime moves stage values (isStageValue) between neighbouring
/// stages only: stage `index` reads step arguments (of any element type the
/// runtime feeds) and results of stage `index - 1`, and a sequence slice
/// also those of the earlier slices of its stage.
static LogicalResult checkStageInterface(StageOp stage, int64_t index) {
  if (static_cast<int64_t>(stage.getStage()) != index)
    return stage.emitOpError("has stage id ")
           << stage.getStage() << ", expected " << index
           << ": stages must be numbered 0, 1, ... in program order";
  for (auto [i, input] : llvm::enumerate(stage.getInputs())) {
    auto producer = input.getDefiningOp<StageOp>();
    bool earlierSlice = producer &&
                        static_cast<int64_t>(producer.getStage()) == index &&
                        getSlice(producer) < getSlice(stage);
    if (!isa<BlockArgument>(input) && !earlierSlice &&
        (!producer || static_cast<int64_t>(producer.getStage()) != index - 1))
      return stage.emitOpError("input #")
             << i << " must be a training-step argument or a result of stage "
             << index - 1;
    if (!isRuntimeData(stage, input) && !isStageValue(input.getType()))
      return stage.emitOpError("input #")
             << i << " has type " << input.getType() << kStageValueTypes;
  }
  for (auto [i, type] : llvm::enumerate(stage.getResultTypes()))
    if (!isStageValue(type))
      return stage.emitOpError("result #")
             << i << " has type " << type << kStageValueTypes;
  return success();
}

/// Points `diag` at the first weight-like constant of `step`: torch-mlir
/// imports a module's parameters as `dense_resource` constants unless they
/// are passed as arguments.
static void noteConstantWeights(func::FuncOp step, InFlightDiagnostic &diag) {
  step.walk([&](arith::ConstantOp constant) {
    if (!isa<DenseResourceElementsAttr>(constant.getValue()))
      return WalkResult::advance();
    diag.attachNote(constant.getLoc())
        << "weights held as constants, such as this one, are not trained; "
           "pass them as 'pp.param' arguments (pp.torch.export does)";
    return WalkResult::interrupt();
  });
}

/// Records in `stateArgs` which stage results the step returns as new
/// state values (results after the loss, marked `pp.state`), and which
/// state argument each updates.
static LogicalResult
collectStateUpdates(func::FuncOp step, func::ReturnOp ret,
                    DenseMap<StageOp, SmallVector<int64_t>> &stateArgs) {
  for (OpOperand &operand : llvm::drop_begin(ret->getOpOperands())) {
    unsigned i = operand.getOperandNumber();
    auto arg = step.getResultAttrOfType<IntegerAttr>(i, kStateAttr);
    if (!arg)
      return ret.emitError("result #")
             << i << " of the training step is neither the loss nor marked "
             << "'" << kStateAttr << "'";
    auto result = dyn_cast<OpResult>(operand.get());
    auto stage = result ? dyn_cast<StageOp>(result.getOwner()) : StageOp();
    if (!stage)
      return ret.emitError("result #")
             << i << " updates state argument #" << arg.getInt()
             << " but is not a result of a pp.stage";
    int64_t &slot = stateArgs[stage][result.getResultNumber()];
    if (slot >= 0 || result.getNumUses() != 1)
      return ret.emitError("result #")
             << i << " updates state argument #" << arg.getInt()
             << " with a stage result that is also used elsewhere";
    slot = arg.getInt();
  }
  return success();
}

/// Numbers, per stage in program order, the results its slices carry to
/// later slices and each later slice's read of one.
static CarryNumbers numberCarriedValues(ArrayRef<StageOp> stages) {
  CarryNumbers carry;
  DenseMap<int64_t, int64_t> values, reads; // next number, by stage
  for (StageOp stage : stages) {
    for (OpOperand &input : stage->getOpOperands()) {
      auto producer = input.get().getDefiningOp<StageOp>();
      if (!producer || !isSameStage(stage, producer))
        continue;
      if (carry.values.try_emplace(input.get(), values[stage.getStage()])
              .second)
        ++values[stage.getStage()];
      carry.reads[&input] = reads[stage.getStage()]++;
    }
  }
  return carry;
}

namespace {
struct DeriveBackwardPass : pp::impl::PPDeriveBackwardBase<DeriveBackwardPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp step = lookupTrainingStep(getOperation(), function);
    if (!step)
      return signalPassFailure();
    // With no weights there are no gradients to take and nothing for the
    // optimizer (or --save and --checkpoint) to do: a mistake, not a model.
    if (llvm::none_of(llvm::seq(step.getNumArguments()),
                      [&](unsigned i) { return isParameter(step, i); })) {
      InFlightDiagnostic diag = emitError(
          step.getLoc(), "the training step has no weights: no argument "
                         "carries 'pp.param', so there is nothing to train");
      noteConstantWeights(step, diag);
      return signalPassFailure();
    }
    SmallVector<StageOp> stages(step.front().getOps<StageOp>());
    if (stages.empty()) {
      step.emitError("the training step has no pp.stage ops; run "
                     "pp-partition-stages first");
      return signalPassFailure();
    }
    DenseMap<StageOp, SmallVector<int64_t>> stateArgs;
    for (StageOp stage : stages)
      stateArgs[stage].assign(stage.getNumResults(), -1);
    auto ret = cast<func::ReturnOp>(step.front().getTerminator());
    if (failed(collectStateUpdates(step, ret, stateArgs)))
      return signalPassFailure();
    if (ret.getNumOperands() == 0 ||
        ret.getOperand(0).getDefiningOp() != stages.back() ||
        llvm::count(stateArgs[stages.back()], -1) != 1) {
      ret.emitError("the training step must return exactly the loss, "
                    "computed by its last stage, and the new values of its "
                    "'pp.state' arguments");
      return signalPassFailure();
    }
    // Slices of one stage share its number; the first slice starts it.
    int64_t index = -1;
    for (StageOp stage : stages) {
      index += getSlice(stage) <= 0;
      if (failed(checkStageInterface(stage, index)))
        return signalPassFailure();
    }
    CarryNumbers carry = numberCarriedValues(stages);
    for (StageOp stage : stages)
      if (failed(StageDifferentiator(stage, step, stage == stages.back(),
                                     stateArgs[stage], carry)
                     .run()))
        return signalPassFailure();
    step.erase();
  }
};
} // namespace
