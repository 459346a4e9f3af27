//===- CostModel.cpp - analytic FLOPs, bytes and stage costs --------------===//
//
// Per-op FLOPs and bytes from types and payloads, and the stage costs of a
// chain of training-step ops on a device.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/CostModel.h"
#include "pp/Dialect/PP/Analysis/TrainingStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::pp;

double mlir::pp::getStorageBytes(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    if (!shaped.hasRank())
      return 0.0;
    double elements = 1.0;
    for (int64_t size : shaped.getShape())
      elements *= ShapedType::isDynamic(size) ? 1.0 : double(size);
    return elements * getStorageBytes(shaped.getElementType());
  }
  if (type.isIntOrIndexOrFloat())
    return type.isIndex() ? 8.0
                          : std::max(1u, type.getIntOrFloatBitWidth() / 8);
  return 0.0;
}

/// Whether `op` does arithmetic: an arith or math op that is neither a
/// constant nor a cast.
static bool isArithmetic(Operation *op) {
  StringRef dialect = op->getName().getDialectNamespace();
  return (dialect == "arith" || dialect == "math") &&
         !op->hasTrait<OpTrait::ConstantLike>() && !isa<CastOpInterface>(op);
}

/// The number of elements of `type` (1 for a scalar).
static double countElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped
             ? getStorageBytes(type) / getStorageBytes(shaped.getElementType())
             : 1.0;
}

/// The smallest of a contraction's M, N and K (each the product of its
/// static loop ranges), or 0 for any other op.
static double getGemmDim(linalg::LinalgOp op) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return 0.0;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto extent = [&](ArrayRef<unsigned> loops) {
    double product = 1.0;
    for (unsigned loop : loops)
      product *=
          ShapedType::isDynamic(ranges[loop]) ? 1.0 : double(ranges[loop]);
    return product;
  };
  return std::min({extent(dims->m), extent(dims->n), extent(dims->k)});
}

OpCost mlir::pp::estimateOpCost(Operation *op) {
  OpCost cost;
  if (op->hasTrait<OpTrait::ConstantLike>() || isa<tensor::EmptyOp>(op))
    return cost;
  for (Type type : op->getOperandTypes())
    cost.bytes += getStorageBytes(type);
  for (Type type : op->getResultTypes())
    cost.bytes += getStorageBytes(type);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double iterations = 1.0;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      iterations *= ShapedType::isDynamic(range) ? 1.0 : double(range);
    double payload =
        llvm::count_if(linalgOp.getBlock()->getOperations(),
                       [](Operation &op) { return isArithmetic(&op); });
    cost.flops = iterations * payload;
    cost.gemmDim = getGemmDim(linalgOp);
    return cost;
  }
  if (isArithmetic(op) && op->getNumResults() == 1)
    cost.flops = countElements(op->getResult(0).getType());
  for (Region &region : op->getRegions())
    for (Block &block : region)
      cost += estimateBlockCost(block);
  return cost;
}

OpCost mlir::pp::estimateBlockCost(Block &block) {
  OpCost cost;
  for (Operation &op : block)
    cost += estimateOpCost(&op);
  return cost;
}

//===----------------------------------------------------------------------===//
// StageCostModel
//===----------------------------------------------------------------------===//

namespace {
/// Sorts the values an op reads into weights and activations, looking
/// through the ops that are re-created rather than computed by a stage.
struct ChainBuilder {
  func::FuncOp func;
  DenseMap<Operation *, int64_t> index; // op -> position in the chain
  DenseMap<Value, int64_t> valueIds;    // value -> index in `values`
  SmallVector<StageCostModel::ChainValue> &values;
  SmallVector<double> &weightBytes;

  int64_t getValueId(Value value, int64_t definer) {
    auto [it, inserted] = valueIds.try_emplace(value, values.size());
    if (inserted)
      values.push_back({getStorageBytes(value.getType()), definer, -1});
    return it->second;
  }

  void classify(Value value, StageCostModel::Op &op, int64_t position) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (isParameter(func, arg.getArgNumber())) {
        op.weights.push_back(arg.getArgNumber());
        weightBytes[arg.getArgNumber()] = getStorageBytes(arg.getType());
        return;
      }
      op.reads.push_back(getValueId(value, -1));
    } else if (auto it = index.find(value.getDefiningOp()); it != index.end()) {
      op.reads.push_back(getValueId(value, it->second));
    } else {
      // Re-created next to its users: reading it reads its operands.
      Operation *def = value.getDefiningOp();
      def->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (operand.getParentBlock() == &func.front())
            classify(operand, op, position);
      });
      return;
    }
    int64_t &lastUse = values[op.reads.back()].lastUse;
    lastUse = std::max(lastUse, position);
  }
};
} // namespace

/// Sorts and deduplicates `ids`.
static void unique(SmallVector<int64_t> &ids) {
  llvm::sort(ids);
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

StageCostModel::StageCostModel(func::FuncOp func, ArrayRef<Operation *> chain)
    : weightBytes(func.getNumArguments(), 0.0) {
  // Explicit maps: DenseMap's default constructor is explicit for clang.
  ChainBuilder builder{func, DenseMap<Operation *, int64_t>(),
                       DenseMap<Value, int64_t>(), values, weightBytes};
  for (auto [position, op] : llvm::enumerate(chain))
    builder.index[op] = position;
  for (auto [position, operation] : llvm::enumerate(chain)) {
    Op op;
    op.op = operation;
    op.cost = estimateOpCost(operation);
    operation->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (operand.getParentBlock() == &func.front())
          builder.classify(operand, op, position);
    });
    for (Value result : operation->getResults())
      op.writes.push_back(builder.getValueId(result, position));
    unique(op.weights);
    unique(op.reads);
    if (!op.weights.empty()) {
      op.stash = op.reads;
      llvm::append_range(op.stash, op.writes);
    }
    ops.push_back(std::move(op));
  }
  // The loss lives to the end; a state's new value stays in its stage.
  for (OpOperand &returned : func.front().getTerminator()->getOpOperands())
    if (auto it = builder.valueIds.find(returned.get());
        it != builder.valueIds.end() &&
        !func.getResultAttr(returned.getOperandNumber(), kStateAttr))
      values[it->second].lastUse = size();

  // A cut before op i splits a weight read both before and after it.
  weightSpan.assign(size() + 1, false);
  DenseMap<int64_t, std::pair<int64_t, int64_t>> readers;
  for (auto [position, op] : llvm::enumerate(ops))
    for (int64_t weight : op.weights) {
      auto [it, inserted] = readers.try_emplace(weight, position, position);
      it->second.second = position;
    }
  for (auto &[weight, span] : readers)
    for (int64_t cut = span.first + 1; cut <= span.second; ++cut)
      weightSpan[cut] = true;
  // Nor may a cut part a state's readers from its update: the stage that
  // updates a state keeps it.
  for (OpOperand &returned : func.front().getTerminator()->getOpOperands()) {
    auto arg = func.getResultAttrOfType<IntegerAttr>(
        returned.getOperandNumber(), kStateAttr);
    auto update = builder.index.find(returned.get().getDefiningOp());
    if (!arg || update == builder.index.end())
      continue;
    int64_t first = update->second, last = update->second;
    for (Operation *user : func.getArgument(arg.getInt()).getUsers()) {
      auto it = builder.index.find(func.front().findAncestorOpInBlock(*user));
      if (it == builder.index.end())
        continue;
      first = std::min(first, it->second);
      last = std::max(last, it->second);
    }
    for (int64_t cut = first + 1; cut <= last; ++cut)
      weightSpan[cut] = true;
  }

  calibration.assign(size(), CostCalibration());
  computeBoundaries();
  SmallVector<double> valueBytes =
      llvm::map_to_vector(values, [](const ChainValue &v) { return v.bytes; });
  parameterSums = sumDistinct(&Op::weights, weightBytes);
  activationSums = sumDistinct(&Op::reads, valueBytes);
  stashSums = sumDistinct(&Op::stash, valueBytes);
  inputSums = sumDistinct(&Op::reads, valueBytes, /*inputsOnly=*/true);
}

void StageCostModel::computeBoundaries() {
  // A value crosses every cut after its definer up to its last use.
  SmallVector<double> delta(size() + 2, 0.0);
  for (const ChainValue &value : values)
    if (value.definer >= 0 && value.lastUse > value.definer) {
      delta[value.definer + 1] += value.bytes;
      delta[value.lastUse + 1] -= value.bytes;
    }
  boundaryBytes.assign(size() + 1, 0.0);
  double running = 0.0;
  for (int64_t cut = 0; cut <= size(); ++cut)
    boundaryBytes[cut] = running += delta[cut];
}

/// With `inputsOnly`, only the values defined before the range count.
StageCostModel::RangeSums
StageCostModel::sumDistinct(SmallVector<int64_t> Op::*ids,
                            ArrayRef<double> bytes, bool inputsOnly) const {
  RangeSums result;
  result.size = size();
  result.sums.assign(size() * size(), 0.0);
  for (int64_t begin = 0; begin < size(); ++begin) {
    llvm::DenseSet<int64_t> seen;
    double sum = 0.0;
    for (int64_t end = begin + 1; end <= size(); ++end) {
      for (int64_t id : ops[end - 1].*ids)
        if ((!inputsOnly || values[id].definer < begin) &&
            seen.insert(id).second)
          sum += bytes[id];
      result.sums[begin * size() + (end - begin - 1)] = sum;
    }
  }
  return result;
}

SmallVector<StageCost>
StageCostModel::getStageCostsFrom(int64_t begin,
                                  const DeviceDescription &device) const {
  SmallVector<StageCost> costs;
  StageCost running;
  // The first stage's inputs are the step's data, which takes no gradient:
  // its B has nothing to compute, and its W carries the backward through
  // its ops to the weights' gradients.
  bool takesInputGradient = begin > 0;
  for (int64_t end = begin + 1; end <= size(); ++end) {
    const Op &op = ops[end - 1];
    const CostCalibration &factors = calibration[end - 1];
    double time =
        device.computeTime(op.cost.flops, op.cost.bytes, op.cost.gemmDim);
    running.flops += op.cost.flops;
    running.forward += factors.forward * time;
    if (takesInputGradient)
      running.backwardInput += factors.backwardInput * time;
    else
      running.backwardWeight += factors.backwardWeight * time;
    if (!op.weights.empty())
      running.backwardWeight += factors.backwardWeight * time;
    running.parameterBytes = parameterSums.get(begin, end);
    running.activationBytes = activationSums.get(begin, end);
    running.stashBytes = stashSums.get(begin, end);
    running.inputBytes = inputSums.get(begin, end);
    costs.push_back(running);
  }
  return costs;
}

double StageCostModel::getComputeTime(int64_t index,
                                      const DeviceDescription &device) const {
  const Op &op = ops[index];
  const CostCalibration &factors = calibration[index];
  double scale = factors.forward + factors.backwardInput;
  if (!op.weights.empty())
    scale += factors.backwardWeight;
  return scale *
         device.computeTime(op.cost.flops, op.cost.bytes, op.cost.gemmDim);
}

double StageCostModel::getForwardTime(int64_t index,
                                      const DeviceDescription &device) const {
  const Op &op = ops[index];
  return calibration[index].forward *
         device.computeTime(op.cost.flops, op.cost.bytes, op.cost.gemmDim);
}

void StageCostModel::calibrate(int64_t begin, int64_t end,
                               const CostCalibration &factors) {
  std::fill(calibration.begin() + begin, calibration.begin() + end, factors);
}

StageCost StageCostModel::getStageCost(int64_t begin, int64_t end,
                                       const DeviceDescription &device) const {
  return getStageCostsFrom(begin, device)[end - begin - 1];
}

double StageCostModel::getTransferTime(int64_t index,
                                       const DeviceDescription &from,
                                       const DeviceDescription &to) const {
  return std::max(from.linkLatency, to.linkLatency) +
         boundaryBytes[index] / std::min(from.linkBandwidth, to.linkBandwidth);
}
