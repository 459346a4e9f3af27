//===- DeriveBackward.cpp - reverse-mode differentiation of stages --------===//
//
// Differentiates every pp.stage of a training step and outlines it into its
// forward, input-gradient (B), weight-gradient (W) and fused backward
// functions, each argument and result tagged with the runtime slot it uses.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/Slot.h"
#include "pp/Dialect/PP/Transforms/Passes.h"
#include "pp/Dialect/PP/Transforms/ScalarDerivative.h"
#include "pp/Dialect/PP/Transforms/TrainingStep.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPDERIVEBACKWARD
#include "pp/Dialect/PP/Transforms/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;
using namespace mlir::pp;

/// A zero tensor of `type`, built from tensor.empty and linalg.fill.
static Value createZeros(OpBuilder &builder, Location loc, Type type) {
  auto tensorType = cast<RankedTensorType>(type);
  Value empty = tensor::EmptyOp::create(builder, loc, tensorType.getShape(),
                                        tensorType.getElementType());
  Value zero = arith::ConstantOp::create(
      builder, loc, builder.getZeroAttr(tensorType.getElementType()));
  return linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
}

/// Whether the body of `op` reduces by summing: it yields `out + f(ins)`
/// with `f` independent of `out`. The one gradient rule assumes this for
/// every op with reduction loops.
static bool isSumReduction(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || op.getNumDpsInits() != 1)
    return false;
  BlockArgument out = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  Value other = add.getLhs() == out   ? add.getRhs()
                : add.getRhs() == out ? add.getLhs()
                                      : Value();
  return other && out.hasOneUse();
}

/// The gradient of the linalg op's operand `target` given the gradient
/// `resultGrad` of its result: one linalg.generic over the op's iteration
/// space that reduces over the loops the operand does not index.
static FailureOr<Value> buildOperandGradient(OpBuilder &builder,
                                             linalg::LinalgOp op,
                                             OpOperand &target,
                                             Value resultGrad) {
  Location loc = op.getLoc();
  SmallVector<AffineMap> opMaps = op.getIndexingMapsArray();
  AffineMap targetMap = op.getMatchingIndexingMap(&target);
  if (!targetMap.isProjectedPermutation())
    return op.emitOpError("cannot be differentiated: operand #")
           << target.getOperandNumber()
           << " is not indexed by a projected permutation";
  Block *payload = op.getBlock();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<BlockArgument> usedArgs;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.use_empty())
      continue;
    inputs.push_back(operand.get());
    maps.push_back(op.getMatchingIndexingMap(&operand));
    usedArgs.push_back(arg);
  }
  inputs.push_back(resultGrad);
  maps.push_back(op.getIndexingMapMatchingResult(op->getResult(0)));
  maps.push_back(targetMap);
  SmallVector<utils::IteratorType> iterators;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    iterators.push_back(targetMap.isFunctionOfDim(loop)
                            ? utils::IteratorType::parallel
                            : utils::IteratorType::reduction);
  Value init = createZeros(builder, loc, target.get().getType());
  LogicalResult bodyStatus = success();
  bool isZero = false;
  auto generic = linalg::GenericOp::create(
      builder, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        IRMapping mapping;
        for (auto [arg, local] : llvm::zip(usedArgs, args))
          mapping.map(arg, local);
        BlockArgument wrt = op.getMatchingBlockArgument(&target);
        FailureOr<Value> derivative =
            differentiatePayload(b, *payload, wrt, mapping);
        Value acc = args.back();
        if (failed(derivative) || !*derivative) {
          // No rule (reported below), or a derivative that is exactly zero.
          bodyStatus = failed(derivative) ? failure() : success();
          isZero = succeeded(derivative);
          linalg::YieldOp::create(b, bodyLoc, acc);
          return;
        }
        Value term = arith::MulFOp::create(b, bodyLoc, args[args.size() - 2],
                                           *derivative);
        linalg::YieldOp::create(
            b, bodyLoc,
            arith::AddFOp::create(b, bodyLoc, acc, term).getResult());
      });
  if (failed(bodyStatus))
    return op.emitOpError("cannot be differentiated: its body uses an "
                          "operation pp-derive-backward has no rule for");
  if (isZero) {
    generic.erase();
    return Value();
  }
  return generic.getResult(0);
}

namespace {

/// Differentiates one stage and outlines its phases as functions.
class StageDifferentiator {
public:
  StageDifferentiator(StageOp stage, func::FuncOp step, bool isLast)
      : stage(stage), step(step), isLast(isLast),
        prefix((step.getSymName() + "_s" + Twine(stage.getStage())).str()) {}

  LogicalResult run();

private:
  Slot operandSlot(Value operand);
  void buildJoint();
  LogicalResult differentiate();
  void accumulate(OpBuilder &builder, Value value, Value grad);
  SmallVector<Operation *> sliceOf(ArrayRef<Value> roots,
                                   const DenseSet<Operation *> &exclude);
  func::FuncOp outline(StringRef phaseName, Phase phase,
                       ArrayRef<Operation *> ops, ArrayRef<Value> results,
                       ArrayRef<Slot> resultSlots);
  Slot slotOf(Value value);

  StageOp stage;
  func::FuncOp step;
  bool isLast;
  std::string prefix;
  int64_t id() { return stage.getStage(); }

  func::FuncOp joint;
  SmallVector<Slot> argSlots; // slot of each joint argument
  DenseSet<Value> active;     // values that depend on a weight or activation
  SmallVector<Operation *> forwardOps;
  SmallVector<Value> outputs;
  DenseMap<Value, Value> adjoint;
  DenseMap<Value, Slot> namedSlots; // saved and stashed values
};

} // namespace

Slot StageDifferentiator::operandSlot(Value operand) {
  if (auto arg = dyn_cast<BlockArgument>(operand)) {
    unsigned index = arg.getArgNumber();
    if (isParameter(step, index))
      return Slot::param(index);
    return step.getArgAttr(index, kTargetAttr) ? Slot::target(index)
                                               : Slot::data(index);
  }
  auto result = cast<OpResult>(operand);
  auto producer = cast<StageOp>(result.getOwner());
  return Slot::activation(producer.getStage(), result.getResultNumber());
}

/// Clones the stage into a function over (stage inputs, output gradients).
void StageDifferentiator::buildJoint() {
  OpBuilder builder(step);
  SmallVector<Type> types(stage.getInputs().getTypes());
  llvm::append_range(types, stage.getResultTypes());
  joint = func::FuncOp::create(builder, stage.getLoc(), prefix + "_joint",
                               builder.getFunctionType(types, {}));
  Block *entry = joint.addEntryBlock();
  for (Value operand : stage.getInputs())
    argSlots.push_back(operandSlot(operand));
  for (unsigned i = 0; i < stage.getNumResults(); ++i)
    argSlots.push_back(isLast ? Slot{SlotKind::LossGrad}
                              : Slot::gradient(id(), i));
  IRMapping mapping;
  Block &body = stage.getBody().front();
  for (auto [arg, slot, local] :
       llvm::zip(body.getArguments(), argSlots, entry->getArguments())) {
    mapping.map(arg, local);
    if (slot.kind == SlotKind::Activation || slot.kind == SlotKind::Param)
      active.insert(local);
  }
  builder.setInsertionPointToStart(entry);
  for (Operation &op : body.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    forwardOps.push_back(clone);
    // Only float tensors carry gradients; masks and indices do not.
    if (llvm::any_of(clone->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value result : clone->getResults())
        if (isDifferentiableTensor(result.getType()))
          active.insert(result);
  }
  for (Value value : body.getTerminator()->getOperands())
    outputs.push_back(mapping.lookup(value));
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

LogicalResult StageDifferentiator::differentiate() {
  Block *entry = &joint.front();
  OpBuilder builder = OpBuilder::atBlockEnd(entry);
  unsigned numInputs = stage.getInputs().size();
  for (auto [i, output] : llvm::enumerate(outputs))
    if (active.contains(output))
      accumulate(builder, output, entry->getArgument(numInputs + i));
  for (Operation *op : llvm::reverse(forwardOps)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value v) { return adjoint.count(v); }))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp)
      return emitError(op->getLoc(),
                       "pp-derive-backward cannot differentiate '")
             << op->getName() << "' in stage " << id();
    if (op->getNumResults() != 1)
      return op->emitOpError("cannot be differentiated: ops with several "
                             "results are not supported");
    if (linalgOp.getNumReductionLoops() > 0 && !isSumReduction(linalgOp))
      return op->emitOpError("cannot be differentiated: reductions must sum "
                             "(yield `out + f(ins)`)");
    Value resultGrad = adjoint.lookup(op->getResult(0));
    for (OpOperand &operand : op->getOpOperands()) {
      if (!active.contains(operand.get()))
        continue;
      if (linalgOp.isDpsInit(&operand) && linalgOp.getNumReductionLoops() > 0)
        return op->emitOpError("cannot be differentiated: it accumulates "
                               "into a value that needs a gradient");
      FailureOr<Value> grad =
          buildOperandGradient(builder, linalgOp, operand, resultGrad);
      if (failed(grad))
        return failure();
      if (*grad)
        accumulate(builder, operand.get(), *grad);
    }
  }
  return success();
}

/// The ops of the joint function (outside the forward) that `roots` need.
SmallVector<Operation *>
StageDifferentiator::sliceOf(ArrayRef<Value> roots,
                             const DenseSet<Operation *> &exclude) {
  DenseSet<Operation *> forward(forwardOps.begin(), forwardOps.end());
  DenseSet<Operation *> seen;
  SmallVector<Value> worklist(roots);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || forward.contains(op) || exclude.contains(op) ||
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

/// Creates `<prefix>_<phase>` computing `results` with `ops`; values from
/// outside become arguments unless they are cheap to re-create.
func::FuncOp StageDifferentiator::outline(StringRef phaseName, Phase phase,
                                          ArrayRef<Operation *> ops,
                                          ArrayRef<Value> results,
                                          ArrayRef<Slot> resultSlots) {
  DenseSet<Operation *> inside(ops.begin(), ops.end());
  llvm::SetVector<Value> arguments;
  std::function<void(Value)> collect = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (def && inside.contains(def))
      return;
    if (isCheapToRecreate(def))
      llvm::for_each(def->getOperands(), collect);
    else
      arguments.insert(value);
  };
  for (Operation *op : ops)
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (operand.getParentBlock() == &joint.front())
          collect(operand);
    });
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
    func.setArgAttr(i, kSlotAttr, builder.getStringAttr(slotOf(value).str()));
  }
  builder.setInsertionPointToStart(entry);
  std::function<void(Value)> recreate = [&](Value value) {
    if (mapping.contains(value))
      return;
    Operation *def = value.getDefiningOp();
    llvm::for_each(def->getOperands(), recreate);
    builder.clone(*def, mapping);
  };
  for (Operation *op : ops) {
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (operand.getParentBlock() == &joint.front())
          recreate(operand);
    });
    builder.clone(*op, mapping);
  }
  llvm::for_each(results, recreate);
  func::ReturnOp::create(
      builder, stage.getLoc(),
      llvm::map_to_vector(results, [&](Value v) { return mapping.lookup(v); }));
  for (auto [i, slot] : llvm::enumerate(resultSlots))
    func.setResultAttr(i, kSlotAttr, builder.getStringAttr(slot.str()));
  func->setAttr(kStageAttr, builder.getI64IntegerAttr(id()));
  if (Attribute microbatches = step->getAttr(kMicrobatchesAttr))
    func->setAttr(kMicrobatchesAttr, microbatches);
  func->setAttr(kPhaseAttr, PhaseAttr::get(builder.getContext(), phase));
  return func;
}

LogicalResult StageDifferentiator::run() {
  buildJoint();
  if (failed(differentiate())) {
    joint.erase();
    return failure();
  }
  // Gradients of activations (B's results) and of weights (W's results).
  OpBuilder builder = OpBuilder::atBlockEnd(&joint.front());
  SmallVector<Value> inputGrads, weightGrads;
  SmallVector<Slot> inputGradSlots, weightGradSlots;
  for (auto [i, operand] : llvm::enumerate(stage.getInputs())) {
    Slot slot = argSlots[i];
    if (slot.kind != SlotKind::Activation && slot.kind != SlotKind::Param)
      continue;
    Value arg = joint.getArgument(i);
    Value grad = adjoint.lookup(arg);
    if (!grad)
      grad = createZeros(builder, stage.getLoc(), arg.getType());
    if (slot.kind == SlotKind::Activation) {
      inputGrads.push_back(grad);
      inputGradSlots.push_back(Slot::gradient(slot.stage, slot.index));
    } else {
      weightGrads.push_back(grad);
      weightGradSlots.push_back(Slot::paramGrad(slot.index));
    }
  }
  SmallVector<Operation *> inputOps = sliceOf(inputGrads, {});
  DenseSet<Operation *> inputSet(inputOps.begin(), inputOps.end());
  SmallVector<Operation *> weightOps = sliceOf(weightGrads, inputSet);
  DenseSet<Operation *> weightSet(weightOps.begin(), weightOps.end());
  SmallVector<Operation *> backwardOps = sliceOf(
      llvm::to_vector(llvm::concat<Value>(inputGrads, weightGrads)), {});

  // Values the backward reads from the forward are saved by it; values W
  // reads from B are stashed by B.
  DenseSet<Operation *> forwardSet(forwardOps.begin(), forwardOps.end());
  SmallVector<Value> saved, stashed;
  auto record = [&](ArrayRef<Operation *> ops,
                    const DenseSet<Operation *> &from,
                    SmallVector<Value> &values, SlotKind kind) {
    // Operands of the ops and values their bodies capture.
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def || !from.contains(def) || isCheapToRecreate(def) ||
              namedSlots.count(operand))
            continue;
          namedSlots[operand] = Slot{kind, id(), int64_t(values.size())};
          values.push_back(operand);
        }
      });
  };
  record(backwardOps, forwardSet, saved, SlotKind::Saved);
  record(weightOps, inputSet, stashed, SlotKind::Stash);

  SmallVector<Value> forwardResults(outputs);
  SmallVector<Slot> forwardSlots;
  for (unsigned i = 0; i < outputs.size(); ++i)
    forwardSlots.push_back(isLast ? Slot{SlotKind::Loss}
                                  : Slot::activation(id(), i));
  for (Value value : saved) {
    forwardResults.push_back(value);
    forwardSlots.push_back(namedSlots.lookup(value));
  }
  SmallVector<Value> inputResults(inputGrads);
  SmallVector<Slot> inputSlots(inputGradSlots);
  for (Value value : stashed) {
    inputResults.push_back(value);
    inputSlots.push_back(namedSlots.lookup(value));
  }
  outline("forward", Phase::forward, forwardOps, forwardResults, forwardSlots);
  outline("backward_input", Phase::backward_input, inputOps, inputResults,
          inputSlots);
  outline("backward_weight", Phase::backward_weight, weightOps, weightGrads,
          weightGradSlots);
  outline("backward", Phase::backward, backwardOps,
          llvm::to_vector(llvm::concat<Value>(inputGrads, weightGrads)),
          llvm::to_vector(llvm::concat<Slot>(inputGradSlots, weightGradSlots)));
  joint.erase();
  return success();
}

/// The runtime moves static f32 tensors between neighbouring stages only:
/// stage `index` reads step arguments and results of stage `index - 1`.
static LogicalResult checkStageInterface(StageOp stage, int64_t index) {
  if (static_cast<int64_t>(stage.getStage()) != index)
    return stage.emitOpError("has stage id ")
           << stage.getStage() << ", expected " << index
           << ": stages must be numbered 0, 1, ... in program order";
  for (auto [i, input] : llvm::enumerate(stage.getInputs())) {
    auto producer = input.getDefiningOp<StageOp>();
    if (!isa<BlockArgument>(input) &&
        (!producer || static_cast<int64_t>(producer.getStage()) != index - 1))
      return stage.emitOpError("input #")
             << i << " must be a training-step argument or a result of stage "
             << index - 1;
    if (!isDifferentiableTensor(input.getType()))
      return stage.emitOpError("input #")
             << i << " has type " << input.getType()
             << "; stages exchange static f32 tensors only";
  }
  for (auto [i, type] : llvm::enumerate(stage.getResultTypes()))
    if (!isDifferentiableTensor(type))
      return stage.emitOpError("result #")
             << i << " has type " << type
             << "; stages exchange static f32 tensors only";
  return success();
}

namespace {
struct DeriveBackwardPass : pp::impl::PPDeriveBackwardBase<DeriveBackwardPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp step = lookupTrainingStep(getOperation(), function);
    if (!step)
      return signalPassFailure();
    SmallVector<StageOp> stages(step.front().getOps<StageOp>());
    if (stages.empty()) {
      step.emitError("the training step has no pp.stage ops; run "
                     "pp-partition-stages first");
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(step.front().getTerminator());
    if (ret.getNumOperands() != 1 ||
        ret.getOperand(0).getDefiningOp() != stages.back() ||
        stages.back().getNumResults() != 1) {
      ret.emitError("the training step must return exactly the loss, "
                    "computed by its last stage");
      return signalPassFailure();
    }
    for (auto [index, stage] : llvm::enumerate(stages))
      if (failed(checkStageInterface(stage, index)))
        return signalPassFailure();
    for (StageOp stage : stages)
      if (failed(
              StageDifferentiator(stage, step, stage == stages.back()).run()))
        return signalPassFailure();
    step.erase();
  }
};
} // namespace
