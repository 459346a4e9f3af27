//===- SplitReach.cpp - where a split of a product's output goes ----------===//
//
// Follows a split loop from a weight product through the linalg ops that
// read its result, loop by loop, up to the product that sums it away.
//
//===----------------------------------------------------------------------===//

#include "SplitReach.h"
#include "pp/Dialect/PP/Analysis/TrainingStep.h"

#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::pp;

/// The parameter of `step` that `value` is, if it is one.
static BlockArgument asParameter(Value value, func::FuncOp step) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner()->getParentOp() != step.getOperation() ||
      !isParameter(step, arg.getArgNumber()))
    return {};
  return arg;
}

/// The parameter `value` reads, with the parameter's dimension at each of
/// `value`'s: the parameter itself, or its `linalg.transpose` (PyTorch's
/// nn.Linear multiplies by its [out, in] weight transposed).
static std::pair<BlockArgument, SmallVector<int64_t>>
asWeight(Value value, func::FuncOp step) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return {};
  if (BlockArgument weight = asParameter(value, step))
    return {weight, llvm::to_vector(llvm::seq<int64_t>(type.getRank()))};
  if (auto transpose = value.getDefiningOp<linalg::TransposeOp>())
    if (BlockArgument weight = asParameter(transpose.getInput(), step))
      return {weight, llvm::to_vector(transpose.getPermutation())};
  return {};
}

std::optional<WeightProduct> pp::matchWeightProduct(linalg::LinalgOp op,
                                                    func::FuncOp step) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2)
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto [weight, weightDims] = asWeight(input->get(), step);
    if (!weight || weightDims.size() < 2)
      continue;
    WeightProduct product{op, weight, {}, {}};
    product.loops.resize(weightDims.size());
    bool sums = false;
    for (auto [d, expr] :
         llvm::enumerate(op.getMatchingIndexingMap(input).getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop)
        return std::nullopt;
      if (iterators[loop.getPosition()] == utils::IteratorType::reduction)
        sums = true;
      product.loops[weightDims[d]] = loop.getPosition();
    }
    for (auto [dim, loop] : llvm::enumerate(product.loops))
      if (iterators[loop] != utils::IteratorType::reduction)
        product.outputDims.push_back(dim);
    if (sums && !product.outputDims.empty())
      return product;
  }
  return std::nullopt;
}

/// The dimensions of `op`'s operand `use` that loop `loop` indexes.
static SmallVector<int64_t> dimsOfLoop(AffineMap map, unsigned loop) {
  SmallVector<int64_t> dims;
  for (auto [d, expr] : llvm::enumerate(map.getResults()))
    if (expr == getAffineDimExpr(loop, map.getContext()))
      dims.push_back(d);
  return dims;
}

/// The input a `linalg.generic` that only copies it to a larger shape
/// (PyTorch's bias broadcast) reads, if `value` is such a copy.
static Value broadcastSource(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumReductionLoops() != 0)
    return {};
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  if (yield.getNumOperands() != 1 ||
      yield.getOperand(0) != generic.getBody()->getArgument(0))
    return {};
  return generic.getDpsInputOperand(0)->get();
}

/// Records in `reach` the 1-D weights `op` reads along `loop`, directly or
/// through a `linalg.broadcast`.
static void collectBiases(linalg::LinalgOp op, unsigned loop, func::FuncOp step,
                          SplitReach &reach) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (dimsOfLoop(op.getMatchingIndexingMap(input), loop).size() != 1)
      continue;
    Value source = input->get();
    if (auto broadcast = source.getDefiningOp<linalg::BroadcastOp>())
      source = broadcast.getInput();
    else if (Value copied = broadcastSource(source))
      source = copied;
    BlockArgument bias = asParameter(source, step);
    if (bias && cast<RankedTensorType>(bias.getType()).getRank() == 1)
      reach.biases.push_back({bias, 0});
  }
}

/// The dimension of a merged or divided group that carries a split of the
/// whole group: its first not of size 1 (TensorShardingModels.h).
static int64_t carrierOf(ArrayRef<int64_t> group, RankedTensorType expanded) {
  const int64_t *carrier = llvm::find_if(
      group, [&](int64_t d) { return expanded.getDimSize(d) != 1; });
  return carrier == group.end() ? group.front() : *carrier;
}

/// Where a split of dimension `dim` of `op`'s operand goes when `op` is a
/// reshape that keeps it a block split (TensorShardingModels.h): its result
/// and the result's dimension. None for any other op or split.
static std::optional<std::pair<Value, int64_t>> throughReshape(Operation *op,
                                                               int64_t dim) {
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (auto [group, indices] :
         llvm::enumerate(collapse.getReassociationIndices()))
      if (llvm::is_contained(indices, dim)) {
        if (carrierOf(indices, collapse.getSrcType()) != dim)
          return std::nullopt;
        return std::make_pair(collapse.getResult(), int64_t(group));
      }
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    auto groups = expand.getReassociationIndices();
    return std::make_pair(expand.getResult(),
                          carrierOf(groups[dim], expand.getResultType()));
  }
  return std::nullopt;
}

std::optional<SplitReach> pp::reachOfSplit(const WeightProduct &column,
                                           int64_t dim, func::FuncOp step) {
  SplitReach reach{};
  SmallVector<std::pair<Value, int64_t>> work;
  linalg::LinalgOp columnOp = column.op;
  OpResult product = columnOp->getResult(0);
  for (int64_t d : dimsOfLoop(columnOp.getIndexingMapMatchingResult(product),
                              column.loops[dim]))
    work.push_back({product, d});
  llvm::SetVector<Operation *> visited;
  while (!work.empty()) {
    auto [value, valueDim] = work.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      if (auto reshaped = throughReshape(use.getOwner(), valueDim)) {
        work.push_back(*reshaped);
        continue;
      }
      auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!op || op.isDpsInit(&use))
        return std::nullopt;
      auto loopExpr = dyn_cast<AffineDimExpr>(
          op.getMatchingIndexingMap(&use).getResult(valueDim));
      if (!loopExpr)
        return std::nullopt;
      unsigned loop = loopExpr.getPosition();
      if (op.getIteratorTypesArray()[loop] == utils::IteratorType::reduction) {
        // The product that sums the split away: one for the whole group.
        std::optional<WeightProduct> row = matchWeightProduct(op, step);
        if (!row || row->weight == column.weight)
          return std::nullopt;
        auto rowDim = llvm::find(row->loops, loop) - row->loops.begin();
        if (rowDim == int64_t(row->loops.size()) ||
            (reach.row && (reach.row != row->op || reach.rowDim != rowDim)))
          return std::nullopt;
        reach.row = row->op;
        reach.rowWeight = row->weight;
        reach.rowDim = rowDim;
        continue;
      }
      if (!visited.insert(op))
        continue;
      for (auto index : op->getRegion(0).getOps<linalg::IndexOp>())
        if (index.getDim() == loop && !reach.index)
          reach.index = index;
      collectBiases(op, loop, step, reach);
      for (OpResult result : op->getResults())
        for (int64_t d :
             dimsOfLoop(op.getIndexingMapMatchingResult(result), loop))
          work.push_back({result, d});
    }
  }
  if (!reach.row)
    return std::nullopt;
  return reach;
}
