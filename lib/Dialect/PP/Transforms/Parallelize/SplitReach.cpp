//===- SplitReach.cpp - where a split of a product's output goes ----------===//
//
// Follows a split loop from a weight product through the linalg ops that
// read its result, loop by loop, up to the product that sums it away.
//
//===----------------------------------------------------------------------===//

#include "SplitReach.h"
#include "pp/Dialect/PP/Transforms/TrainingStep.h"

#include "mlir/Dialect/Linalg/Utils/Utils.h"
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

std::optional<WeightProduct> pp::matchWeightProduct(linalg::LinalgOp op,
                                                    func::FuncOp step) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2)
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument weight = asParameter(input->get(), step);
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!weight || !type || type.getRank() < 2)
      continue;
    WeightProduct product{op, weight, {}, {}};
    bool sums = false;
    for (AffineExpr expr : op.getMatchingIndexingMap(input).getResults()) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop)
        return std::nullopt;
      if (iterators[loop.getPosition()] == utils::IteratorType::reduction)
        sums = true;
      else
        product.outputDims.push_back(product.loops.size());
      product.loops.push_back(loop.getPosition());
    }
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
    BlockArgument bias = asParameter(source, step);
    if (bias && cast<RankedTensorType>(bias.getType()).getRank() == 1)
      reach.biases.push_back({bias, 0});
  }
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
